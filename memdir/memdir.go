package memdir

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/scratchpad-mcp/scratchpad-mcp/layout"
)

// ErrOutside reports a name that leads outside the tree's top: a symbolic
// link planted on the path (to a folder or a file) pointing out of
// memory_dir, an absolute name or a ".." element. Nothing was written,
// created or removed outside. Errors wrap it in an *fs.PathError (or an
// *os.LinkError for a rename) whose path is relative to the top or to the
// folder, so the message names neither where memory_dir is nor where the
// link points.
var ErrOutside = errors.New("refused: a symbolic link or name leads outside memory_dir")

// Modes of what this package creates.
const (
	DirMode  fs.FileMode = 0o700
	FileMode fs.FileMode = 0o600
)

// Dir is a folder in a tree that writes may not leave. The zero Dir is
// not usable: every operation fails.
type Dir struct {
	top string // the tree's top (memory_dir), cleaned
	rel string // this folder, relative to top: "." for the top itself
	err error  // a Sub that was refused: every operation returns it
}

// At returns dir as a tree of its own: nothing of it may leave dir.
func At(dir string) Dir { return Dir{top: filepath.Clean(dir), rel: "."} }

// In returns the folder dir of the tree top; dir must be top or below it
// (by name: both as package layout builds them). A top of "" is [At](dir).
func In(top, dir string) (Dir, error) {
	if top == "" {
		return At(dir), nil
	}
	top, dir = filepath.Clean(top), filepath.Clean(dir)
	rel, err := filepath.Rel(top, dir)
	if err != nil || !filepath.IsLocal(rel) {
		return Dir{}, &fs.PathError{Op: "open", Path: dir, Err: ErrOutside}
	}
	return Dir{top: top, rel: rel}, nil
}

// Path is the folder's path (top joined with its name): for messages,
// reports and keys, never to open anything by.
func (d Dir) Path() string { return filepath.Join(d.top, d.rel) }

// Top is the tree's top.
func (d Dir) Top() string { return d.top }

// Join is the path of name in the folder, like [Dir.Path].
func (d Dir) Join(name string) string { return filepath.Join(d.Path(), name) }

// Sub is the folder name inside d. A name that is not local gives a Dir
// whose every operation fails with [ErrOutside].
func (d Dir) Sub(name string) Dir {
	rel, err := d.name(name)
	return Dir{top: d.top, rel: rel, err: err}
}

// Rel returns the name, relative to d, of path (a path inside d, as
// [Dir.Join] or package layout builds it).
func (d Dir) Rel(path string) (string, error) {
	rel, err := filepath.Rel(d.Path(), filepath.Clean(path))
	if err != nil || !filepath.IsLocal(rel) {
		return "", &fs.PathError{Op: "open", Path: path, Err: ErrOutside}
	}
	return rel, nil
}

// local checks a name given to one of d's methods: "" and "." name d
// itself, anything else must be local.
func (d Dir) local(name string) (string, error) {
	switch {
	case d.err != nil:
		return "", d.err
	case d.top == "":
		return "", errors.New("memdir: zero Dir")
	case name == "" || name == ".":
		return ".", nil
	case !filepath.IsLocal(name):
		return "", &fs.PathError{Op: "open", Path: name, Err: ErrOutside}
	}
	return filepath.Clean(name), nil
}

// name is the path of name (local to d) relative to the top.
func (d Dir) name(name string) (string, error) {
	n, err := d.local(name)
	if err != nil {
		return "", err
	}
	return filepath.Join(d.rel, n), nil
}

// open opens the root on the top; with create, a missing top is created
// (0700, with its parents: the operator's path, before any confinement).
func (d Dir) open(create bool) (*os.Root, error) {
	r, err := os.OpenRoot(d.top)
	if err != nil && create && errors.Is(err, fs.ErrNotExist) {
		if err = os.MkdirAll(d.top, DirMode); err == nil {
			r, err = os.OpenRoot(d.top)
		}
	}
	return r, err
}

// folder opens a root on the folder itself, reached from the top's root
// (a link on the way is followed only while it stays inside the top);
// with create, the folder is made first ([Dir.Make]). What is then done
// in it cannot leave the folder.
func (d Dir) folder(create bool) (*os.Root, error) {
	if _, err := d.local(""); err != nil {
		return nil, err
	}
	top, err := d.open(create)
	if err != nil || d.rel == "." {
		return top, err
	}
	defer top.Close()
	if create {
		if err := makeAll(top, d.rel); err != nil {
			return nil, confined(err)
		}
	}
	r, err := top.OpenRoot(d.rel)
	return r, confined(err)
}

// do runs fn with a root on the folder and name's path in it, and maps
// what escapes to [ErrOutside].
func (d Dir) do(name string, create bool, fn func(r *os.Root, p string) error) error {
	p, err := d.local(name)
	if err != nil {
		return err
	}
	r, err := d.folder(create)
	if err != nil {
		return err
	}
	defer r.Close()
	return confined(fn(r, p))
}

// confined maps os.Root's "path escapes from parent" (not exported) to
// [ErrOutside], keeping the operation and the name relative to the top.
func confined(err error) error {
	if err == nil || errors.Is(err, ErrOutside) || !strings.Contains(err.Error(), "path escapes from parent") {
		return err
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return &fs.PathError{Op: pe.Op, Path: pe.Path, Err: ErrOutside}
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return &os.LinkError{Op: le.Op, Old: le.Old, New: le.New, Err: ErrOutside}
	}
	return fmt.Errorf("%w (%v)", ErrOutside, err)
}

// Make creates the folder (0700) and its parents below the top, and
// tightens any of them found looser than 0700 to its owner's bits.
func (d Dir) Make() error {
	return d.do("", true, func(*os.Root, string) error { return nil })
}

// makeAll is [Dir.Make] of the folder rel in r. The usual case, the folder
// there and tight, costs one stat.
func makeAll(r *os.Root, rel string) error {
	if rel == "." {
		return nil
	}
	if fi, err := r.Stat(rel); err == nil && fi.IsDir() && tight(fi.Mode()) {
		return nil
	}
	p := ""
	for _, el := range strings.Split(rel, string(filepath.Separator)) {
		p = filepath.Join(p, el)
		err := r.Mkdir(p, DirMode)
		if err == nil {
			continue
		}
		if !errors.Is(err, fs.ErrExist) {
			return err
		}
		if err := tightenDir(r, p); err != nil {
			return err
		}
	}
	return nil
}

// tight reports whether a mode gives nothing to group or others (always
// on Windows, which has no such bits).
func tight(m fs.FileMode) bool { return runtime.GOOS == "windows" || m.Perm()&0o077 == 0 }

// tightenDir checks that p (which exists) is a folder inside the root and
// takes group and other bits off it. The mode is changed on the open
// folder (fchmod), never by name, so a link swapped in meanwhile is not
// changed instead.
func tightenDir(r *os.Root, p string) error {
	f, err := r.Open(p)
	if errors.Is(err, fs.ErrPermission) {
		return nil // not readable by us: leave it, the write will say
	}
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return &fs.PathError{Op: "mkdir", Path: p, Err: syscall.ENOTDIR}
	}
	tighten(f, fi)
	return nil
}

// tighten takes group and other bits off an open file or folder, best
// effort: one that is not ours keeps its mode.
func tighten(f *os.File, fi fs.FileInfo) {
	if !tight(fi.Mode()) {
		_ = f.Chmod(fi.Mode().Perm() &^ 0o077)
	}
}

// tempSuffix is the random part of a temporary name; a test replaces it.
var tempSuffix = func() string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand panics instead)
	return hex.EncodeToString(b[:])
}

// WriteTemp writes a temporary file for name in name's folder (created
// 0700 if missing): [layout.TempName] of name's base, created exclusively
// (0600), filled by fill, synced and closed. It returns the temporary
// file's name, relative to d, for [Dir.Commit]; on any error it is
// removed. What fill writes goes to the disk a MiB at a time as it comes
// (see writeback.go), so that the sync at the end waits for the last
// bytes only.
func (d Dir) WriteTemp(name string, fill func(w io.Writer) error) (tmp string, err error) {
	err = d.do(name, true, func(r *os.Root, p string) (err error) {
		tmp, err = writeTemp(r, p, fill)
		return err
	})
	return tmp, err
}

// writeTemp is [Dir.WriteTemp] in r for the file p; it returns the
// temporary file's name in r.
func writeTemp(r *os.Root, p string, fill func(w io.Writer) error) (string, error) {
	dir, base := filepath.Split(p)
	if err := makeAll(r, filepath.Clean(dir)); err != nil {
		return "", err
	}
	var f *os.File
	var tmp string
	var err error
	// O_EXCL: a name taken (by a crash's leftover, or a link planted
	// there) is never opened; another random name is tried.
	for range 8 {
		tmp = filepath.Join(dir, layout.TempName(base, tempSuffix()))
		if f, err = r.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, FileMode); !errors.Is(err, fs.ErrExist) {
			break
		}
	}
	if err != nil {
		return "", err
	}
	err = fill(&writeback{f: f})
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = r.Remove(tmp)
		return "", err
	}
	return tmp, nil
}

// Commit renames the temporary file tmp (from [Dir.WriteTemp]) over name
// in one rename, then syncs the folder, so the rename survives a crash. On
// error tmp is removed and name is untouched.
func (d Dir) Commit(tmp, name string) error {
	t, err := d.local(tmp)
	if err != nil {
		return err
	}
	return d.do(name, false, func(r *os.Root, p string) error { return commit(r, t, p) })
}

func commit(r *os.Root, tmp, p string) error {
	if err := r.Rename(tmp, p); err != nil {
		_ = r.Remove(tmp)
		return err
	}
	return syncDir(r, filepath.Dir(p))
}

// syncDir fsyncs the folder p so that a rename in it is durable. File
// systems that cannot sync a folder are tolerated, and Windows has no such
// sync.
func syncDir(r *os.Root, p string) error {
	if runtime.GOOS == "windows" {
		return nil
	}
	f, err := r.Open(p)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := f.Sync(); err != nil && !errors.Is(err, syscall.EINVAL) && !errors.Is(err, errors.ErrUnsupported) &&
		!strings.Contains(err.Error(), "not supported") {
		return err
	}
	return nil
}

// WriteFile replaces name in d with data atomically (see the package
// documentation), creating d (0700) if missing; the file is 0600.
func (d Dir) WriteFile(name string, data []byte) error {
	return d.do(name, true, func(r *os.Root, p string) error {
		tmp, err := writeTemp(r, p, func(w io.Writer) error {
			_, err := w.Write(data)
			return err
		})
		if err != nil {
			return err
		}
		return commit(r, tmp, p)
	})
}

// OpenFile opens name in d with flag, as [os.OpenFile] does. A file it
// creates is 0600, in a folder created 0700 if missing; a file opened for
// writing that is looser than 0600 is tightened to its owner's bits.
func (d Dir) OpenFile(name string, flag int) (f *os.File, err error) {
	err = d.do(name, flag&os.O_CREATE != 0, func(r *os.Root, p string) error {
		if flag&os.O_CREATE != 0 {
			if err := makeAll(r, filepath.Dir(p)); err != nil {
				return err
			}
		}
		f, err = r.OpenFile(p, flag, FileMode)
		if err == nil && flag&(os.O_WRONLY|os.O_RDWR) != 0 {
			if fi, serr := f.Stat(); serr == nil {
				tighten(f, fi)
			}
		}
		return err
	})
	return f, err
}

// Open opens name in d for reading.
func (d Dir) Open(name string) (f *os.File, err error) {
	err = d.do(name, false, func(r *os.Root, p string) error {
		f, err = r.Open(p)
		return err
	})
	return f, err
}

// ReadFile returns the content of name in d.
func (d Dir) ReadFile(name string) (data []byte, err error) {
	err = d.do(name, false, func(r *os.Root, p string) error {
		data, err = r.ReadFile(p)
		return err
	})
	return data, err
}

// ReadDir lists the folder name in d ("" for d itself), sorted by name.
func (d Dir) ReadDir(name string) (entries []fs.DirEntry, err error) {
	err = d.do(name, false, func(r *os.Root, p string) error {
		entries, err = fs.ReadDir(r.FS(), filepath.ToSlash(p))
		return err
	})
	return entries, err
}

// Stat describes name in d, following a link that stays inside the tree.
func (d Dir) Stat(name string) (fi fs.FileInfo, err error) {
	err = d.do(name, false, func(r *os.Root, p string) error {
		fi, err = r.Stat(p)
		return err
	})
	return fi, err
}

// Lstat describes name in d, not following a link at name itself.
func (d Dir) Lstat(name string) (fi fs.FileInfo, err error) {
	err = d.do(name, false, func(r *os.Root, p string) error {
		fi, err = r.Lstat(p)
		return err
	})
	return fi, err
}

// Remove removes the file or empty folder name in d; a link at name is
// removed, not what it points to.
func (d Dir) Remove(name string) error {
	return d.do(name, false, func(r *os.Root, p string) error { return r.Remove(p) })
}

// RemoveAll removes name in d, or d itself for "", and everything in it,
// never through a link (a link is removed, not what it leads to). It
// refuses to remove the top.
func (d Dir) RemoveAll(name string) error {
	p, err := d.local(name)
	if err != nil {
		return err
	}
	if p != "." {
		return d.do(p, false, func(r *os.Root, p string) error { return r.RemoveAll(p) })
	}
	if d.rel == "." {
		return &fs.PathError{Op: "removeall", Path: ".", Err: ErrOutside}
	}
	top, err := d.open(false)
	if err != nil {
		return err
	}
	defer top.Close()
	return confined(top.RemoveAll(d.rel))
}

// Rename renames oldname to newname, both in d, in one rename; a link at
// newname is replaced, not followed.
func (d Dir) Rename(oldname, newname string) error {
	o, err := d.local(oldname)
	if err != nil {
		return err
	}
	return d.do(newname, false, func(r *os.Root, p string) error { return r.Rename(o, p) })
}

// Chtimes sets the access and modification times of name in d.
func (d Dir) Chtimes(name string, atime, mtime time.Time) error {
	return d.do(name, false, func(r *os.Root, p string) error { return r.Chtimes(p, atime, mtime) })
}

// OpenRoot opens an [os.Root] on the folder itself, reached through the
// top's (a link on the way is followed only while it stays inside the
// top), for a reader that keeps one (the exploration tools' read root, an
// artifacts listing) or a batch of operations (a sweep); the caller
// closes it. What is reached through it cannot leave the folder.
func (d Dir) OpenRoot() (root *os.Root, err error) {
	root, err = d.folder(false)
	return root, err
}
