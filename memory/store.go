package memory

import "time"

// Store keeps one scope's memory files (an agent's, or its run's): a flat
// set of files named by their paths relative to /memories, as [Clean]
// gives them. Folders are not stored: a folder exists while a file is in
// it. The pad's backends implement it (pad.Pad.Memory: files in the pad's
// folder, or keys of the pad on Redis), so memory files share the pad's
// owner, scope, lock, history and life.
//
// Reads take no lock: every write replaces a file whole, atomically, so a
// reader sees one version or the other. Every change is made through a
// [Tx], under the scope's lock, so the read-check-write of a command
// (expected_revision, old_str's uniqueness, the bounds) is one step.
//
// A file's revision counts its versions: 1 for the first, one more for
// every write after, kept across a delete (a file created again continues
// from the deleted one's, so an old expected_revision never matches a new
// file). A store keeps the last versions of every file, deleted ones
// included, for a person to restore; the model does not see them.
type Store interface {
	// Files lists every file of the scope, sorted by path, without
	// content.
	Files() ([]Info, error)
	// Read returns the file at path; an error wrapping fs.ErrNotExist
	// when there is none (a folder is not a file), or [ErrLink] when the
	// way to it runs through a symbolic link.
	Read(path string) (File, error)
	// Touch records that path was read at now, for [Options.TTL]. It is
	// bookkeeping: it need not take the lock, and its failure is ignored.
	Touch(path string, now time.Time) error
	// Lock takes the scope's lock for one command's changes.
	Lock() (Tx, error)
}

// Tx makes changes under a [Store]'s lock. Each method is atomic on its
// own: a crash leaves the change made or not (a folder's files moved or
// removed one by one may be partly done on a store that cannot do them
// at once, and says so).
type Tx interface {
	// Write replaces the file at path with text (creating it and its
	// folders) and returns its new revision.
	Write(path string, text []byte, now time.Time) (rev int64, err error)
	// Remove removes the file at path or, with dir, the folder path and
	// every file in it. Their versions are kept.
	Remove(path string, dir bool, now time.Time) error
	// Rename moves the file (or, with dir, the folder) from to to, which
	// does not exist; its folders are created. Versions move with their
	// files.
	Rename(from, to string, dir bool, now time.Time) error
	// Unlock releases the lock.
	Unlock()
}

// Info describes one file of a [Store].
type Info struct {
	Path string // relative to /memories, as [Clean] gives it
	Size int64  // bytes
	// Accessed is when it was last written or read ([Store.Touch]): what
	// [Options.TTL] is judged by; zero when the store does not know (such
	// a file never expires).
	Accessed time.Time
}

// File is one file with its content.
type File struct {
	Info
	Text []byte
	Rev  int64 // its revision (see [Store])
}
