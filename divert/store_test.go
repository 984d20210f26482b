package divert

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scratchpad-mcp/scratchpad-mcp/memdir"
)

func TestSaveIsAtomicAndDeterministic(t *testing.T) {
	dir := t.TempDir()
	a, err := Save(memdir.At(dir), "srv", "fs/read", []byte(`[{"a":1},{"a":2}]`))
	if err != nil {
		t.Fatal(err)
	}
	b, err := Save(memdir.At(dir), "srv", "fs/read", []byte(`[{"a":1},{"a":2}]`))
	if err != nil {
		t.Fatal(err)
	}
	if a.Name != b.Name || !b.Reused {
		t.Errorf("same content, different files: %s %s reused=%v", a.Name, b.Name, b.Reused)
	}
	if !strings.HasPrefix(a.Name, "srv-fs_read-") || !strings.HasSuffix(a.Name, ".json") {
		t.Errorf("name %q", a.Name)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("%d files, want 1", len(entries))
	}
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp-") {
			t.Errorf("temp file left: %s", e.Name())
		}
	}
}

// TestSaveIntoAFileLeavesItAlone: a file where the scratchpad dir should
// be makes every save fail, and the file is not touched.
func TestSaveIntoAFileLeavesItAlone(t *testing.T) {
	dir := t.TempDir() + "/scratchpad"
	if err := os.WriteFile(dir, []byte("in the way"), 0o600); err != nil {
		t.Fatal(err)
	}
	d, err := memdir.In(filepath.Dir(dir), dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Save(d, "up", "words", []byte("some words")); err == nil {
		t.Fatal("save into a file succeeded")
	}
	if b, _ := os.ReadFile(dir); string(b) != "in the way" {
		t.Errorf("existing file was touched: %q", b)
	}
}

func TestDetectFormat(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"a":1}`, FormatJSON},
		{` [1,2,3] `, FormatJSON},
		{"{\"a\":1}\n{\"a\":2}\n", FormatNDJSON},
		{"{\"a\":1}\nnot json\n", FormatText},
		{"# Title\n\nsome text\n## Part\n", FormatMarkdown},
		{"plain log line\nanother\n", FormatText},
		{"", FormatText},
		{`{"broken":`, FormatText},
	} {
		if got := DetectFormat([]byte(tc.in)); got != tc.want {
			t.Errorf("DetectFormat(%q) = %s, want %s", tc.in, got, tc.want)
		}
	}
}

// TestSaveJSONOnFullDisk: pretty-printing into a full filesystem (a 64 KiB
// tmpfs; mounting needs root, elsewhere the test skips), with the writes
// behind the indenter, fails with the disk's error and leaves no file.
func TestSaveJSONOnFullDisk(t *testing.T) {
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a small tmpfs here (%v: %s)", err, bytes.TrimSpace(out))
	}
	t.Cleanup(func() { _ = exec.Command("umount", dir).Run() })
	compact, _, _ := layouts(t, 20000) // megabytes, pretty-printed more
	_, err := Save(memdir.At(dir), "s", "t", compact)
	if err == nil || !strings.Contains(err.Error(), "no space left") {
		t.Fatalf("err = %v, want no space left", err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Fatalf("left behind: %v", ents)
	}
}
