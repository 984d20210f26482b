package memdir

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/scratchpad-mcp/scratchpad-mcp/layout"
)

// tree is a memory_dir and a folder outside it, and a link planted in the
// memory_dir pointing there.
type tree struct {
	mem, outside string
}

func newTree(t *testing.T) tree {
	t.Helper()
	tr := tree{mem: filepath.Join(t.TempDir(), "mem"), outside: filepath.Join(t.TempDir(), "outside")}
	for _, d := range []string{tr.mem, tr.outside} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	return tr
}

// link makes rel (under mem) a symbolic link to target.
func (tr tree) link(t *testing.T, rel, target string) {
	t.Helper()
	p := filepath.Join(tr.mem, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, p); err != nil {
		t.Skipf("symbolic links: %v", err)
	}
}

// outsideNames lists what is outside now.
func (tr tree) outsideNames(t *testing.T) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(tr.outside, func(p string, d fs.DirEntry, err error) error {
		if err == nil && p != tr.outside {
			rel, _ := filepath.Rel(tr.outside, p)
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	return out
}

func (tr tree) dir(t *testing.T, rel string) Dir {
	t.Helper()
	d, err := In(tr.mem, filepath.Join(tr.mem, filepath.FromSlash(rel)))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestIn(t *testing.T) {
	for _, tt := range []struct {
		top, dir string
		rel      string // "" : refused
	}{
		{"/m", "/m", "."},
		{"/m", "/m/owners/a/pad", filepath.FromSlash("owners/a/pad")},
		{"/m/", "/m/x/../y", "y"},
		{"/m", "/m/..", ""},
		{"/m", "/n/pad", ""},
		{"/m", "/mm/pad", ""},
		{"/m", "m/pad", ""},
	} {
		d, err := In(filepath.FromSlash(tt.top), filepath.FromSlash(tt.dir))
		switch {
		case tt.rel == "" && !errors.Is(err, ErrOutside):
			t.Errorf("In(%s, %s) = %+v, %v; want ErrOutside", tt.top, tt.dir, d, err)
		case tt.rel != "" && (err != nil || d.rel != tt.rel):
			t.Errorf("In(%s, %s) = %+v, %v; want %s", tt.top, tt.dir, d, err, tt.rel)
		}
	}
	d := At(filepath.FromSlash("/m/pad"))
	for _, name := range []string{"../x", "/etc/passwd", "a/../../x", ""} {
		if name == "" {
			continue
		}
		if err := d.WriteFile(name, nil); !errors.Is(err, ErrOutside) {
			t.Errorf("WriteFile(%q): %v, want ErrOutside", name, err)
		}
		if err := d.Sub(name).Make(); !errors.Is(err, ErrOutside) {
			t.Errorf("Sub(%q).Make: %v, want ErrOutside", name, err)
		}
	}
	if err := (Dir{}).WriteFile("x", nil); err == nil {
		t.Error("the zero Dir wrote")
	}
}

// Every operation that writes, creates, renames, re-modes or removes
// refuses a folder link planted on its path that leads out of the tree,
// with ErrOutside, and leaves nothing outside; reads refuse it too.
func TestFolderLinkRefused(t *testing.T) {
	ops := []struct {
		name string
		op   func(d Dir) error
	}{
		{"Make", func(d Dir) error { return d.Make() }},
		{"Make sub", func(d Dir) error { return d.Sub(".history").Make() }},
		{"WriteFile", func(d Dir) error { return d.WriteFile("pad.md", []byte("x")) }},
		{"WriteFile sub", func(d Dir) error { return d.WriteFile(".history/1.md", []byte("x")) }},
		{"WriteTemp", func(d Dir) error {
			_, err := d.WriteTemp("out", func(w io.Writer) error { _, err := io.WriteString(w, "x"); return err })
			return err
		}},
		{"OpenFile append", func(d Dir) error {
			f, err := d.OpenFile("entries.jsonl", os.O_WRONLY|os.O_APPEND|os.O_CREATE)
			if err == nil {
				f.Close()
			}
			return err
		}},
		{"Remove", func(d Dir) error { return d.Remove("victim") }},
		{"RemoveAll", func(d Dir) error { return d.RemoveAll("") }},
		{"Rename", func(d Dir) error { return d.Rename("victim", "moved") }},
		{"Chtimes", func(d Dir) error { return d.Chtimes("victim", time.Unix(1, 0), time.Unix(1, 0)) }},
		{"ReadFile", func(d Dir) error { _, err := d.ReadFile("victim"); return err }},
		{"ReadDir", func(d Dir) error { _, err := d.ReadDir(""); return err }},
		{"Stat", func(d Dir) error { _, err := d.Stat("victim"); return err }},
		{"OpenRoot", func(d Dir) error {
			r, err := d.OpenRoot()
			if err == nil {
				r.Close()
			}
			return err
		}},
	}
	// Where the link is planted, and the folder of the Dir operated on.
	places := []struct{ link, dir string }{
		{"pad", "pad"},                                  // the folder itself
		{"agents/x", "agents/x/pad"},                    // a parent
		{"owners", "owners/alice/r1/artifacts"},         // the first element
		{"r1", "r1/iteration-2/scratchpad"},             // a run's folder
		{"pad/.history", "pad/.history"},                // a sub-folder
		{"rel", "rel/pad"},                              // a relative link
		{"r2/artifacts", "r2/artifacts"},                // a run's artifacts
		{"scratchpad", "scratchpad"},                    // stored outputs
		{"agents/y/pad", "agents/y/pad/.snapshots"},     // inside a linked pad
		{"owners/bob", "owners/bob/scratchpad"},         // an owner's tree
		{"usagedir", "usagedir"},                        // any other folder
		{"a/b/c", "a/b/c/d/e"},                          // deep
		{"dot", "dot"},                                  // linked to the top's parent
		{"r3/iteration-1", "r3/iteration-1/scratchpad"}, // an iteration
	}
	for _, pl := range places {
		for _, op := range ops {
			t.Run(pl.link+"/"+op.name, func(t *testing.T) {
				tr := newTree(t)
				if err := os.WriteFile(filepath.Join(tr.outside, "victim"), []byte("outside"), 0o600); err != nil {
					t.Fatal(err)
				}
				old := time.Now().Add(-time.Hour).Truncate(time.Second)
				os.Chtimes(filepath.Join(tr.outside, "victim"), old, old)
				target := tr.outside
				switch pl.link {
				case "rel":
					target, _ = filepath.Rel(tr.mem, tr.outside)
				case "dot":
					target = ".."
				}
				tr.link(t, pl.link, target)
				before := tr.outsideNames(t)
				err := op.op(tr.dir(t, pl.dir))
				if op.name == "RemoveAll" && pl.link == pl.dir && err == nil {
					// The link itself is removed, not what it points to.
					if _, err := os.Lstat(filepath.Join(tr.mem, filepath.FromSlash(pl.link))); !errors.Is(err, fs.ErrNotExist) {
						t.Errorf("RemoveAll of a link left it: %v", err)
					}
				} else if !errors.Is(err, ErrOutside) {
					t.Errorf("%s through a link at %s: %v, want ErrOutside", op.name, pl.link, err)
				}
				if err != nil && strings.Contains(err.Error(), tr.outside) {
					t.Errorf("the error names the link's target: %v", err)
				}
				if got := tr.outsideNames(t); strings.Join(got, ",") != strings.Join(before, ",") {
					if pl.link != "dot" { // ".." is the top's parent, which holds outside's parent too
						t.Errorf("outside changed: %v, was %v", got, before)
					}
				}
				if fi, err := os.Stat(filepath.Join(tr.outside, "victim")); err != nil || !fi.ModTime().Equal(old) {
					t.Errorf("the file outside was changed: %v %v", fi, err)
				}
			})
		}
	}
}

// A link at the final name: a replacement replaces the link (never writes
// through it); an open for appending, a read and a mode change refuse it.
func TestFileLinkRefused(t *testing.T) {
	tr := newTree(t)
	victim := filepath.Join(tr.outside, "victim")
	if err := os.WriteFile(victim, []byte("outside"), 0o644); err != nil {
		t.Fatal(err)
	}
	d := tr.dir(t, "pad")
	if err := d.Make(); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"entries.jsonl", ".pad.lock", "pad.md", "dangling"} {
		target := victim
		if name == "dangling" {
			target = filepath.Join(tr.outside, "new")
		}
		tr.link(t, "pad/"+name, target)
	}
	for _, name := range []string{"entries.jsonl", ".pad.lock", "dangling"} {
		f, err := d.OpenFile(name, os.O_RDWR|os.O_APPEND|os.O_CREATE)
		if !errors.Is(err, ErrOutside) {
			t.Errorf("OpenFile(%s) through a file link: %v", name, err)
		}
		if f != nil {
			f.Close()
		}
	}
	if _, err := d.ReadFile("pad.md"); !errors.Is(err, ErrOutside) {
		t.Errorf("ReadFile through a file link: %v", err)
	}
	if err := d.WriteFile("pad.md", []byte("new")); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(filepath.Join(tr.mem, "pad", "pad.md")); err != nil || !fi.Mode().IsRegular() {
		t.Errorf("pad.md after the write: %v %v", fi, err)
	}
	data, _ := os.ReadFile(victim)
	fi, _ := os.Stat(victim)
	if string(data) != "outside" || runtime.GOOS != "windows" && fi.Mode().Perm() != 0o644 {
		t.Errorf("the file outside is now %q %v", data, fi.Mode())
	}
	if got := tr.outsideNames(t); len(got) != 1 {
		t.Errorf("outside: %v", got)
	}
}

// A link planted at the temporary name a write picks is never opened: the
// exclusive create fails and another name is tried.
func TestTempNameLinkRefused(t *testing.T) {
	tr := newTree(t)
	d := tr.dir(t, "pad")
	names := []string{"planted", "planted", "fresh"}
	saved := tempSuffix
	t.Cleanup(func() { tempSuffix = saved })
	tempSuffix = func() string { n := names[0]; names = names[1:]; return n }
	tr.link(t, "pad/"+layout.TempName("pad.md", "planted"), filepath.Join(tr.outside, "victim"))
	if err := d.WriteFile("pad.md", []byte("new")); err != nil {
		t.Fatal(err)
	}
	if got := tr.outsideNames(t); len(got) != 0 {
		t.Errorf("written through the temporary name's link: %v", got)
	}
	if data, err := d.ReadFile("pad.md"); err != nil || string(data) != "new" {
		t.Errorf("pad.md: %q %v", data, err)
	}
	if _, err := os.Lstat(filepath.Join(tr.mem, "pad", layout.TempName("pad.md", "fresh"))); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the temporary file stayed: %v", err)
	}
}

// Folders are created 0700 and files 0600; a looser folder below the top
// (0755 from an older version) and a looser file opened for writing are
// tightened to their owner's bits; the top is left as it is.
func TestModes(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no Unix modes")
	}
	tr := newTree(t)
	os.Chmod(tr.mem, 0o755)
	old := filepath.Join(tr.mem, "r0", "pad")
	if err := os.MkdirAll(old, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{filepath.Join(tr.mem, "r0"), old} {
		os.Chmod(p, 0o755)
	}
	os.WriteFile(filepath.Join(old, "entries.jsonl"), []byte("{}\n"), 0o644)
	os.Chmod(filepath.Join(old, "entries.jsonl"), 0o644)
	os.WriteFile(filepath.Join(old, "other"), nil, 0o644)
	os.Chmod(filepath.Join(old, "other"), 0o644)

	if err := tr.dir(t, "owners/alice/agents/x/pad").WriteFile(".history/1.md", []byte("v1")); err != nil {
		t.Fatal(err)
	}
	d := tr.dir(t, "r0/pad")
	if err := d.Make(); err != nil {
		t.Fatal(err)
	}
	f, err := d.OpenFile("entries.jsonl", os.O_WRONLY|os.O_APPEND|os.O_CREATE)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if f, err = d.OpenFile(".pad.lock", os.O_RDWR|os.O_CREATE); err != nil {
		t.Fatal(err)
	}
	f.Close()
	want := map[string]fs.FileMode{
		"owners": 0o700, "owners/alice": 0o700, "owners/alice/agents": 0o700, "owners/alice/agents/x": 0o700,
		"owners/alice/agents/x/pad": 0o700, "owners/alice/agents/x/pad/.history": 0o700,
		"owners/alice/agents/x/pad/.history/1.md": 0o600,
		"r0": 0o700, "r0/pad": 0o700, "r0/pad/entries.jsonl": 0o600, "r0/pad/.pad.lock": 0o600,
		"r0/pad/other": 0o644, // not written: left as it is
	}
	for rel, m := range want {
		fi, err := os.Stat(filepath.Join(tr.mem, filepath.FromSlash(rel)))
		if err != nil || fi.Mode().Perm() != m {
			t.Errorf("%s: %v %v, want %v", rel, fi.Mode().Perm(), err, m)
		}
	}
	if fi, _ := os.Stat(tr.mem); fi.Mode().Perm() != 0o755 {
		t.Errorf("the top was changed to %v", fi.Mode().Perm())
	}
	// A missing top is created 0700.
	top := filepath.Join(t.TempDir(), "new", "mem")
	if err := At(top).WriteFile("x", nil); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(top); fi.Mode().Perm() != 0o700 {
		t.Errorf("a new top is %v", fi.Mode().Perm())
	}
}

// A write that fails leaves neither a temporary file nor a change.
func TestWriteTempFailure(t *testing.T) {
	d := At(t.TempDir())
	if err := d.WriteFile("a", []byte("old")); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("disk full")
	if _, err := d.WriteTemp("a", func(w io.Writer) error { _, _ = io.WriteString(w, "part"); return boom }); !errors.Is(err, boom) {
		t.Fatalf("WriteTemp: %v", err)
	}
	entries, _ := d.ReadDir("")
	if len(entries) != 1 {
		t.Fatalf("left behind: %v", entries)
	}
	tmp, err := d.WriteTemp("a", func(w io.Writer) error { _, err := io.WriteString(w, "new"); return err })
	if err != nil || !layout.IsTemp(tmp) {
		t.Fatalf("WriteTemp: %q %v", tmp, err)
	}
	if err := d.Commit(tmp, "a"); err != nil {
		t.Fatal(err)
	}
	if data, _ := d.ReadFile("a"); string(data) != "new" {
		t.Fatalf("a = %q", data)
	}
	if err := d.RemoveAll(""); !errors.Is(err, ErrOutside) {
		t.Errorf("RemoveAll of the top: %v", err)
	}
}

// Inside memory_dir, a link on the way to a folder is followed, but what
// is named inside the folder cannot leave the folder, even for another
// place in memory_dir: one pad's .history cannot be another pad's.
func TestLinksInsideTheTop(t *testing.T) {
	tr := newTree(t)
	other := tr.dir(t, "agents/other/pad")
	if err := other.WriteFile(".history/1.md", []byte("other's")); err != nil {
		t.Fatal(err)
	}
	tr.link(t, "agents/alias", "other")
	alias := tr.dir(t, "agents/alias/pad")
	if data, err := alias.ReadFile(".history/1.md"); err != nil || string(data) != "other's" {
		t.Fatalf("through a link on the way inside the top: %q %v", data, err)
	}
	tr.link(t, "agents/x/pad/.history", "../../other/pad/.history")
	x := tr.dir(t, "agents/x/pad")
	if err := x.WriteFile(".history/2.md", []byte("x's")); !errors.Is(err, ErrOutside) {
		t.Errorf("a folder's link to another folder: %v, want ErrOutside", err)
	}
	if entries, _ := other.ReadDir(".history"); len(entries) != 1 {
		t.Errorf("written into another pad's history: %v", entries)
	}
	if err := x.RemoveAll(""); err != nil {
		t.Fatal(err)
	}
	if _, err := other.Stat(".history/1.md"); err != nil {
		t.Errorf("RemoveAll went through a link: %v", err)
	}
}
