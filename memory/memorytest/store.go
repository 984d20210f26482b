package memorytest

import (
	"errors"
	"io/fs"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/scratchpad-mcp/scratchpad-mcp/memory"
)

// TestStore checks what every [memory.Store] must do, on fresh empty
// stores from newStore: files and their implied folders, revisions that
// continue across a delete and move with a rename, the access time, and a
// lock that writers take in turn.
func TestStore(t *testing.T, newStore func(t *testing.T) memory.Store) {
	t.Run("files", func(t *testing.T) { testFiles(t, newStore(t)) })
	t.Run("lock", func(t *testing.T) { testLock(t, newStore(t)) })
}

func testFiles(t *testing.T, st memory.Store) {
	now := Epoch
	tick := func() time.Time { now = now.Add(time.Minute); return now }
	check := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	paths := func(want ...string) {
		t.Helper()
		fs, err := st.Files()
		check("files", err)
		var got []string
		for _, f := range fs {
			got = append(got, f.Path)
		}
		if strconv.Quote(join(got)) != strconv.Quote(join(want)) {
			t.Fatalf("files %q, want %q", got, want)
		}
	}
	read := func(path, text string, rev int64) {
		t.Helper()
		f, err := st.Read(path)
		check("read "+path, err)
		if string(f.Text) != text || f.Rev != rev || f.Size != int64(len(text)) || f.Path != path {
			t.Fatalf("read %s: %q rev %d size %d path %q; want %q rev %d", path, f.Text, f.Rev, f.Size, f.Path, text, rev)
		}
	}
	gone := func(path string) {
		t.Helper()
		if _, err := st.Read(path); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("read %s: %v, want fs.ErrNotExist", path, err)
		}
	}
	write := func(path, text string, want int64) {
		t.Helper()
		tx, err := st.Lock()
		check("lock", err)
		defer tx.Unlock()
		rev, err := tx.Write(path, []byte(text), tick())
		check("write "+path, err)
		if rev != want {
			t.Fatalf("write %s: revision %d, want %d", path, rev, want)
		}
	}
	change := func(what string, f func(tx memory.Tx) error) {
		t.Helper()
		tx, err := st.Lock()
		check("lock", err)
		defer tx.Unlock()
		check(what, f(tx))
	}

	paths()
	gone("a.md")
	write("a.md", "one\n", 1)
	write("a.md", "two\nlines ü\n", 2)
	read("a.md", "two\nlines ü\n", 2)
	write("n/b.md", "", 1)
	write("n/o/c.md", "c", 1)
	paths("a.md", "n/b.md", "n/o/c.md")
	gone("n") // a folder is not a file
	gone("n/o")

	change("remove a.md", func(tx memory.Tx) error { return tx.Remove("a.md", false, tick()) })
	paths("n/b.md", "n/o/c.md")
	gone("a.md")
	write("a.md", "again", 3) // the deleted file's revisions continue

	change("rename folder n", func(tx memory.Tx) error { return tx.Rename("n", "m/n2", true, tick()) })
	paths("a.md", "m/n2/b.md", "m/n2/o/c.md")
	gone("n/b.md")
	read("m/n2/o/c.md", "c", 1)
	write("m/n2/o/c.md", "cc", 2) // its versions moved with it

	change("rename file", func(tx memory.Tx) error { return tx.Rename("a.md", "x/y/a.md", false, tick()) })
	paths("m/n2/b.md", "m/n2/o/c.md", "x/y/a.md")
	read("x/y/a.md", "again", 3)

	change("remove folder m", func(tx memory.Tx) error { return tx.Remove("m", true, tick()) })
	paths("x/y/a.md")
	write("m/n2/b.md", "b again", 2)
	bAt := now

	// Sorted by path, whatever the order of writes.
	write("0 first.md", "", 1)
	paths("0 first.md", "m/n2/b.md", "x/y/a.md")

	// Access times: a write's, then a touch's.
	at := tick()
	write("t.md", "t", 1)
	check("touch", st.Touch("t.md", at.Add(time.Hour)))
	files, err := st.Files()
	check("files", err)
	for _, f := range files {
		if f.Path == "t.md" && f.Accessed.Sub(at.Add(time.Hour)).Abs() > time.Millisecond {
			t.Errorf("t.md accessed %v, want %v", f.Accessed, at.Add(time.Hour))
		}
		if f.Path == "m/n2/b.md" && f.Accessed.Sub(bAt).Abs() > time.Millisecond {
			t.Errorf("m/n2/b.md accessed %v, want its write's %v", f.Accessed, bAt)
		}
	}
}

// testLock has writers increment a counter file, each read and write
// under the lock: without mutual exclusion some increments are lost.
func testLock(t *testing.T, st memory.Store) {
	const writers, rounds = 4, 15
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for range writers {
		wg.Go(func() {
			for range rounds {
				tx, err := st.Lock()
				if err != nil {
					errs <- err
					return
				}
				n := 0
				if f, err := st.Read("count"); err == nil {
					n, _ = strconv.Atoi(string(f.Text))
				}
				_, err = tx.Write("count", []byte(strconv.Itoa(n+1)), Epoch)
				tx.Unlock()
				if err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	f, err := st.Read("count")
	if err != nil || string(f.Text) != strconv.Itoa(writers*rounds) || f.Rev != writers*rounds {
		t.Fatalf("count %q revision %d (%v), want %d", f.Text, f.Rev, err, writers*rounds)
	}
}

func join(s []string) string {
	out := ""
	for i, x := range s {
		if i > 0 {
			out += ","
		}
		out += x
	}
	return out
}
