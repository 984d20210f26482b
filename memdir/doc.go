// Package memdir is memory_dir on disk: every file scratchpad-mcp writes,
// creates, renames, locks, re-modes or removes below memory_dir is reached
// through an [os.Root] opened on memory_dir, so that "..", absolute names
// and symbolic links (to folders or to files, planted anywhere on the path,
// the final name included) cannot make a write land outside it. Such a
// name fails with [ErrOutside] and nothing is written.
//
// Confinement has two levels. The folder an operation works in (a pad, a
// run's artifacts) is reached from memory_dir's root: a link on the way to
// it is followed only while it stays inside memory_dir. What the operation
// names inside the folder (pad.md, .history/…, a lock) is reached from a
// root opened on the folder itself, so it cannot leave the folder.
//
// # Basics
//
// A [Dir] is one folder of the tree: a pad, a run's artifacts, a worker's
// stored outputs, memory_dir itself. [In] names it by the tree's top
// (memory_dir) and the folder's path, as package layout builds it; [At]
// makes a folder its own top (a pad opened with --dir, a test's folder).
//
//	d, err := memdir.In(memoryDir, layout.For(memoryDir, owner).RunPad(run))
//	err = d.WriteFile("pad.md", data) // atomic, 0600, folders 0700
//
// A Dir holds no descriptor: each operation opens the root on the top and
// resolves the folder from there, so a folder renamed or removed meanwhile
// (a sweep moving a run to the trash) is never written through a stale
// handle, and a Dir is a plain value that may be copied and used from any
// number of goroutines.
//
// This package owns the modes and the atomic write, for every writer:
//
//   - Folders are created 0700 and files 0600. A folder below the top
//     found looser (versions before this one made pads 0755) is tightened
//     to its owner's bits by the next write that makes it, and so is a
//     file opened for writing ([Dir.OpenFile]: the ledger, a lock, a
//     notice, usage.jsonl). Tightening never takes a bit from the owner.
//     The top itself is the operator's and is left as it is (it is
//     created 0700 when missing).
//   - [Dir.WriteFile] replaces a file atomically: a temporary file in the
//     same folder ([layout.TempName], random and created exclusively, so
//     nothing planted at its name is followed), fsync, rename over the
//     name, fsync of the folder. [Dir.WriteTemp] and [Dir.Commit] are its
//     two halves, for a writer that names the file only once it is
//     written (divert names a stored output by its hash).
//
// Names come from package layout; this package only confines them. Names
// given to a Dir's methods are relative to the Dir ("pad.md",
// ".history/…") and must be local ([filepath.IsLocal]).
//
// # Caveats
//
//   - The way to a folder is confined to the top, not to an owner's tree:
//     a symbolic link planted in one owner's tree leading to another's
//     folder, inside memory_dir, is followed. Only someone with the
//     server's own access to the disk can plant one.
//   - A Dir's top is resolved by path on every operation; if memory_dir
//     itself is a symbolic link, that link is followed (it is the
//     operator's choice, like memory_dir itself).
//   - On Windows, modes are not set (only the read-only attribute
//     exists) and folders are not fsynced.
package memdir
