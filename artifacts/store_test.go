package artifacts

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/scratchpad-mcp/scratchpad-mcp/layout"
	"github.com/scratchpad-mcp/scratchpad-mcp/memdir"
)

func newStore(t *testing.T) (*Store, string) {
	t.Helper()
	mem := t.TempDir()
	runDir := filepath.Join(mem, "run-1")
	d, err := memdir.In(mem, filepath.Join(runDir, layout.ArtifactsDir))
	if err != nil {
		t.Fatal(err)
	}
	s, err := Open(d)
	if err != nil {
		t.Fatal(err)
	}
	return s, runDir
}

func TestWrite(t *testing.T) {
	s, runDir := newStore(t)
	steps := []struct {
		filename, content string
		want              WriteResult
	}{
		{"../../x.md", "# héllo\n", WriteResult{Written: true, Filename: "coordinator-x.md", Chars: 8}},
		{"x.md", "second", WriteResult{Written: true, Filename: "coordinator-x.md", Replaced: true, Chars: 6}},
		{"report", "", WriteResult{Written: true, Filename: "coordinator-report.txt", Chars: 0}},
	}
	for _, st := range steps {
		got, err := s.Write(st.filename, st.content)
		if err != nil || got != st.want {
			t.Fatalf("Write(%q) = %+v, %v; want %+v", st.filename, got, err, st.want)
		}
	}
	dir := filepath.Join(runDir, layout.ArtifactsDir)
	data, err := os.ReadFile(filepath.Join(dir, "coordinator-x.md"))
	if err != nil || string(data) != "second" {
		t.Fatalf("content %q, %v", data, err)
	}
	for path, want := range map[string]os.FileMode{dir: 0o700, filepath.Join(dir, "coordinator-x.md"): 0o600} {
		st, err := os.Stat(path)
		if err != nil || st.Mode().Perm() != want {
			t.Fatalf("%s mode %v, %v; want %v", path, st.Mode().Perm(), err, want)
		}
	}
	if _, err := os.Stat(filepath.Join(runDir, "..", "x.md")); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("traversal name wrote outside the artifacts directory")
	}
	got, err := s.Write("???", "x")
	if !errors.Is(err, ErrInvalidName) || got.Written || got.Error == "" || got.Filename != "" {
		t.Fatalf("Write(???) = %+v, %v", got, err)
	}
}

func TestConcurrentWritesSameName(t *testing.T) {
	s, runDir := newStore(t)
	var wg sync.WaitGroup
	var mu sync.Mutex
	replaced := 0
	for i := range 16 {
		wg.Go(func() {
			res, err := s.Write("same.json", fmt.Sprintf(`{"writer":%d,"pad":"%s"}`, i, strings.Repeat("x", 10_000)))
			if err != nil {
				t.Error(err)
			}
			mu.Lock()
			if res.Replaced {
				replaced++
			}
			mu.Unlock()
		})
	}
	wg.Wait()
	if replaced != 15 {
		t.Fatalf("%d writes reported replaced, want 15", replaced)
	}
	names, _ := os.ReadDir(filepath.Join(runDir, layout.ArtifactsDir))
	if len(names) != 1 {
		t.Fatalf("directory holds %d entries (temporaries left?)", len(names))
	}
	data, _ := os.ReadFile(filepath.Join(runDir, layout.ArtifactsDir, "coordinator-same.json"))
	if !strings.HasPrefix(string(data), `{"writer":`) || len(data) < 10_000 {
		t.Fatalf("torn content: %.40q", data)
	}
}

func TestReadLookup(t *testing.T) {
	s, runDir := newStore(t)
	if _, err := s.Write("plan.md", "the plan"); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(runDir, layout.ArtifactsDir)
	if err := os.WriteFile(filepath.Join(dir, "task.txt"), []byte("from the orchestrator"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, want, content string
	}{
		{"coordinator-plan.md", "coordinator-plan.md", "the plan"},
		{"plan.md", "coordinator-plan.md", "the plan"},
		{" plan.md ", "coordinator-plan.md", "the plan"},
		{"../artifacts/coordinator-plan.md", "coordinator-plan.md", "the plan"},
		{"../../artifacts/plan.md", "coordinator-plan.md", "the plan"},
		{"./artifacts/plan.md", "coordinator-plan.md", "the plan"},
		{"artifacts/plan.md", "coordinator-plan.md", "the plan"},
		{"task.txt", "task.txt", "from the orchestrator"},
	}
	for _, tt := range tests {
		res, err := s.Read(tt.name, 0)
		if err != nil || !res.Found || res.Filename != tt.want || res.Content != tt.content || res.Size != int64(len(tt.content)) {
			t.Errorf("Read(%q) = %+v, %v", tt.name, res, err)
		}
	}
	res, err := s.Read("plan.md", 3)
	if err != nil || !res.Found || !res.TooLarge || res.Content != "" || res.Size != 8 {
		t.Errorf("Read with maxBytes 3 = %+v, %v", res, err)
	}
}

// TestReadConfinement puts a secret next to the run and tries every way
// out of the artifacts directory.
func TestReadConfinement(t *testing.T) {
	s, runDir := newStore(t)
	if _, err := s.Write("ok.md", "inside"); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(runDir, layout.ArtifactsDir)
	secret := filepath.Join(runDir, "secret.txt")
	if err := os.WriteFile(secret, []byte("SECRET"), 0o600); err != nil {
		t.Fatal(err)
	}
	mustSymlink(t, secret, filepath.Join(dir, "abs-link.md"))
	mustSymlink(t, "../secret.txt", filepath.Join(dir, "rel-link.md"))
	mustSymlink(t, "..", filepath.Join(dir, "up"))
	mustSymlink(t, "coordinator-ok.md", filepath.Join(dir, "inside-link.md"))
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o700); err != nil {
		t.Fatal(err)
	}

	refused := []string{secret, "/etc/passwd", "../secret.txt", "a/../../secret.txt", `..\secret.txt`,
		"abs-link.md", "rel-link.md", "up/secret.txt", "../../run-1/secret.txt"}
	for _, name := range refused {
		res, err := s.Read(name, 0)
		if !errors.Is(err, ErrOutsideArtifacts) {
			t.Errorf("Read(%q) = %+v, %v; want ErrOutsideArtifacts", name, res, err)
			continue
		}
		// The error may echo the name asked for, nothing more.
		msg := strings.ReplaceAll(err.Error(), name, "")
		if res.Content != "" || strings.Contains(msg, "SECRET") || strings.Contains(msg, "/tmp") || strings.Contains(msg, runDir) {
			t.Errorf("Read(%q) revealed something: %v", name, err)
		}
	}
	if res, err := s.Read("inside-link.md", 0); err != nil || res.Content != "inside" {
		t.Errorf("link inside the directory: %+v, %v", res, err)
	}
	if _, err := s.Read("sub", 0); !errors.Is(err, ErrNotFile) {
		t.Errorf("Read(dir) = %v, want ErrNotFile", err)
	}
	if _, err := s.Read("", 0); !errors.Is(err, ErrInvalidName) {
		t.Errorf("Read(\"\") = %v, want ErrInvalidName", err)
	}

	entries, err := s.List(nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name)
	}
	if want := []string{"coordinator-ok.md", "inside-link.md"}; !slices.Equal(names, want) {
		t.Fatalf("List = %v, want %v (escaping links and directories skipped)", names, want)
	}
}

func mustSymlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Skipf("symlinks unavailable: %v", err)
	}
}

func TestReadNotFoundCapsAvailable(t *testing.T) {
	tests := []struct {
		files         int
		wantAvailable int
		wantOmitted   int
	}{
		{0, 0, 0},
		{3, 3, 0},
		{40, 40, 0},
		{41, 40, 1},
		{57, 40, 17},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.files), func(t *testing.T) {
			s, _ := newStore(t)
			for i := range tt.files {
				// Written in reverse so that sorting is observable.
				if _, err := s.Write(fmt.Sprintf("f%03d.md", tt.files-i), "x"); err != nil {
					t.Fatal(err)
				}
			}
			res, err := s.Read("missing.md", 0)
			if err != nil || res.Found {
				t.Fatalf("Read = %+v, %v", res, err)
			}
			if len(res.Available) != tt.wantAvailable || res.AvailableOmitted != tt.wantOmitted {
				t.Fatalf("available %d omitted %d; want %d %d", len(res.Available), res.AvailableOmitted, tt.wantAvailable, tt.wantOmitted)
			}
			if !slices.IsSorted(res.Available) {
				t.Fatalf("available not sorted: %v", res.Available)
			}
			if tt.files > 0 && res.Available[0] != "coordinator-f001.md" {
				t.Fatalf("first available %q", res.Available[0])
			}
		})
	}
}

func TestListTokens(t *testing.T) {
	s, runDir := newStore(t)
	if entries, err := s.List(nil); err != nil || len(entries) != 0 {
		t.Fatalf("List before any write = %v, %v", entries, err)
	}
	if _, err := s.Write("a.md", "one two three"); err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat("y", maxCountBytes+1)
	if err := os.WriteFile(filepath.Join(runDir, layout.ArtifactsDir, "big.log"), []byte(big), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(runDir, layout.ArtifactsDir, layout.TempName("coordinator-a.md", "x")), []byte("partial"), 0o600); err != nil {
		t.Fatal(err)
	}
	words := func(s string) int { return len(strings.Fields(s)) }
	entries, err := s.List(words)
	if err != nil {
		t.Fatal(err)
	}
	want := []Entry{
		{Name: "big.log", Size: int64(len(big)), Tokens: (len(big) + 3) / 4, TokensEstimated: true},
		{Name: "coordinator-a.md", Size: 13, Tokens: 3},
	}
	if !slices.Equal(entries, want) {
		t.Fatalf("List = %+v\nwant %+v", entries, want)
	}
}

func TestOpen(t *testing.T) {
	mem := t.TempDir()
	dir := filepath.Join(mem, "run-1", layout.ArtifactsDir)
	d, err := memdir.In(mem, dir)
	if err != nil {
		t.Fatal(err)
	}
	s, err := Open(d)
	if err != nil || s.Dir() != dir {
		t.Fatalf("Open = %v, %v", s, err)
	}
	if _, err := Open(memdir.Dir{}); err == nil {
		t.Error("Open(\"\") succeeded")
	}
	// Open touches nothing on disk.
	if _, err := os.Stat(filepath.Dir(dir)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Open created the run directory")
	}
}
