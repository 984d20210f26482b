package memory

import (
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"time"
)

// The memory tool's commands, the values of [Command].Command.
const (
	CmdView       = "view"
	CmdCreate     = "create"
	CmdStrReplace = "str_replace"
	CmdInsert     = "insert"
	CmdDelete     = "delete"
	CmdRename     = "rename"
)

// Commands lists the commands in the documentation's order.
var Commands = []string{CmdView, CmdCreate, CmdStrReplace, CmdInsert, CmdDelete, CmdRename}

// Command is one call of the memory tool, with the tool's argument names:
// what a model that knows the tool sends. Which fields a command reads is
// the tool's: view (Path, ViewRange), create (Path, FileText),
// str_replace (Path, OldStr, NewStr), insert (Path, InsertLine,
// InsertText), delete (Path), rename (OldPath, NewPath); every command
// that changes a file also takes ExpectedRevision. Fields a command does
// not read are ignored.
type Command struct {
	Command   string  `json:"command" arg:"enum=$commands"`
	Path      *string `json:"path,omitempty" arg:"maxLength=$maxPath"`
	ViewRange []int   `json:"view_range,omitempty" jsonschema:"[first, last] line of a file (1-based; last -1: to the end)." arg:"maxItems=2,items.minimum=-1,items.maximum=$maxLines"`
	FileText  *string `json:"file_text,omitempty" arg:"maxLength=$maxText"`
	OldStr    *string `json:"old_str,omitempty" arg:"maxLength=$maxText"`
	NewStr    *string `json:"new_str,omitempty" arg:"maxLength=$maxText"`
	// InsertLine is the line after which insert_text goes (0: first).
	InsertLine *int    `json:"insert_line,omitempty" jsonschema:"Insert after this line (0: at the top)." arg:"maximum=$maxLines"`
	InsertText *string `json:"insert_text,omitempty" arg:"maxLength=$maxText"`
	OldPath    *string `json:"old_path,omitempty" arg:"maxLength=$maxPath"`
	NewPath    *string `json:"new_path,omitempty" arg:"maxLength=$maxPath"`
	// ExpectedRevision makes a change compare-and-swap: it is made only
	// if the file (rename: the file at OldPath) is at this revision, 0
	// meaning "does not exist" (create). Without it a change is made
	// whatever the revision; create then refuses an existing file.
	ExpectedRevision *int64 `json:"expected_revision,omitempty" jsonschema:"Change only if the file is at this revision (shown by view and each write; 0: it must not exist)." arg:"minimum=0,maximum=$maxRev"`
}

// maxRev bounds expected_revision: far past any revision a file reaches.
const maxRev = 1 << 53

// Memory runs the memory tool's commands on one scope's [Store]. It holds
// no state between calls; one Memory may serve many goroutines.
type Memory struct {
	st Store
	o  Options
	ro []string // o.ReadOnlyPaths, cleaned
}

// New returns the commands over st with o (see [Options]); invalid
// options are an error wrapping [ErrOptions].
func New(st Store, o Options) (*Memory, error) {
	o, ro, err := o.normalize()
	if err != nil {
		return nil, err
	}
	return &Memory{st: st, o: o, ro: ro}, nil
}

// Do runs c and returns the answer the model reads. A refusal is an
// [*Error] whose message is the answer (worded as the memory tool's
// documentation words it) and nothing was changed; any other error is
// the store's (I/O, a lock held too long).
func (m *Memory) Do(c Command) (string, error) {
	need := func(name string, ok bool) error {
		if ok {
			return nil
		}
		return refuse(ErrBadArguments, fmt.Sprintf("Error: Parameter `%s` is required for command: %s", name, c.Command))
	}
	var err error
	switch c.Command {
	case CmdView:
		if err = need("path", c.Path != nil); err == nil {
			return m.View(*c.Path, c.ViewRange)
		}
	case CmdCreate:
		if err = errors.Join(need("path", c.Path != nil), need("file_text", c.FileText != nil)); err == nil {
			return m.create(*c.Path, *c.FileText, c.ExpectedRevision)
		}
	case CmdStrReplace:
		if err = errors.Join(need("path", c.Path != nil), need("old_str", c.OldStr != nil)); err == nil {
			return m.strReplace(*c.Path, *c.OldStr, deref(c.NewStr), c.ExpectedRevision)
		}
	case CmdInsert:
		if err = errors.Join(need("path", c.Path != nil), need("insert_line", c.InsertLine != nil), need("insert_text", c.InsertText != nil)); err == nil {
			return m.insert(*c.Path, *c.InsertLine, *c.InsertText, c.ExpectedRevision)
		}
	case CmdDelete:
		if err = need("path", c.Path != nil); err == nil {
			return m.delete(*c.Path, c.ExpectedRevision)
		}
	case CmdRename:
		if err = errors.Join(need("old_path", c.OldPath != nil), need("new_path", c.NewPath != nil)); err == nil {
			return m.rename(*c.OldPath, *c.NewPath, c.ExpectedRevision)
		}
	default:
		return "", unknownCommand(c.Command)
	}
	return "", joined(err)
}

// unknownCommand is the refusal of a command the tool does not have.
func unknownCommand(name string) error {
	return refuse(ErrBadArguments, fmt.Sprintf("Error: Unrecognized command %s. The allowed commands for the memory tool are: %s", quotePath(name), strings.Join(Commands, ", ")))
}

// joined turns the refusals errors.Join made into one, every message on
// a line of its own.
func joined(err error) error {
	j, ok := err.(interface{ Unwrap() []error })
	if !ok {
		return err
	}
	var msgs []string
	for _, e := range j.Unwrap() {
		msgs = append(msgs, e.Error())
	}
	return refuse(ErrBadArguments, strings.Join(msgs, "\n"))
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// scope is a scope's files as a command sees them under the lock: the
// live ones (expired files were just removed).
type scope struct {
	files map[string]Info
	bytes int64
}

// isDir reports whether rel is a folder of sc: /memories itself, or a
// folder some file is in.
func (sc *scope) isDir(rel string) bool {
	if rel == "" {
		return true
	}
	for p := range sc.files {
		if strings.HasPrefix(p, rel+"/") {
			return true
		}
	}
	return false
}

// fileAbove is the nearest folder on rel's way that is a file in sc, ""
// when none is: a file cannot be made below a file.
func (sc *scope) fileAbove(rel string) string {
	for p := parent(rel); p != ""; p = parent(p) {
		if _, ok := sc.files[p]; ok {
			return p
		}
	}
	return ""
}

// inside lists sc's files in the folder dir, sorted.
func (sc *scope) inside(dir string) []string {
	var out []string
	for p := range sc.files {
		if strings.HasPrefix(p, dir+"/") {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out
}

// live are the files of files a command may see: their paths are ones
// [Clean] gives (a file put there by hand under another name is not the
// memory tool's), and they have not expired.
func (m *Memory) live(files []Info, now time.Time) (keep, expired []Info) {
	for _, f := range files {
		switch {
		case !cleanRel(f.Path):
		case m.expired(f, now):
			expired = append(expired, f)
		default:
			keep = append(keep, f)
		}
	}
	return keep, expired
}

// cleanRel reports whether rel is a path [Clean] gives.
func cleanRel(rel string) bool {
	got, err := Clean(Display(rel))
	return err == nil && got == rel && rel != ""
}

// expired reports whether f has outlived [Options.TTL]; read-only files
// never do (they are the operator's), nor does a file whose access time
// the store does not know (zero).
func (m *Memory) expired(f Info, now time.Time) bool {
	return m.o.TTL > 0 && !f.Accessed.IsZero() && now.Sub(f.Accessed) > m.o.TTL && !m.readOnly(f.Path)
}

// readOnly reports whether rel is, or is in, a read-only path.
func (m *Memory) readOnly(rel string) bool {
	for _, ro := range m.ro {
		if within(rel, ro) {
			return true
		}
	}
	return false
}

// touchesReadOnly reports whether a change of rel (a file, or a folder
// and all in it) changes a read-only path.
func (m *Memory) touchesReadOnly(rel string) bool {
	if m.readOnly(rel) {
		return true
	}
	for _, ro := range m.ro {
		if within(ro, rel) {
			return true
		}
	}
	return false
}

// refuseReadOnly is the refusal of a change to p.
func refuseReadOnly(p string) error {
	return refuse(ErrReadOnly, fmt.Sprintf("Error: The path %s is read-only; nothing was changed.", p))
}

// locked runs change with the scope's lock held, on the scope as it is
// then (its expired files removed first). With [Options.ReadOnly] nothing
// runs.
func (m *Memory) locked(change func(tx Tx, sc *scope, now time.Time) (string, error)) (string, error) {
	if m.o.ReadOnly {
		return "", refuse(ErrReadOnly, fmt.Sprintf("Error: %s is read-only here: you may view it, not change it.", Root))
	}
	tx, err := m.st.Lock()
	if err != nil {
		return "", err
	}
	defer tx.Unlock()
	now := m.o.Now()
	files, err := m.st.Files()
	if err != nil {
		return "", linkOr(Root, err)
	}
	keep, expired := m.live(files, now)
	for _, f := range expired {
		if err := tx.Remove(f.Path, false, now); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
	}
	sc := &scope{files: make(map[string]Info, len(keep))}
	for _, f := range keep {
		sc.files[f.Path] = f
		sc.bytes += f.Size
	}
	return change(tx, sc, now)
}

// current reads the file rel of sc under the lock; ok is false when sc
// has none.
func (m *Memory) current(sc *scope, rel string) (File, bool, error) {
	if _, ok := sc.files[rel]; !ok {
		return File{}, false, nil
	}
	f, err := m.st.Read(rel)
	if errors.Is(err, fs.ErrNotExist) {
		return File{}, false, nil
	}
	return f, err == nil, err
}

// checkRevision is the compare of compare-and-swap: exp (nil: none) must
// be rev, the file's revision (0: there is none).
func checkRevision(p string, exp *int64, rev int64) error {
	switch {
	case exp == nil || *exp == rev:
		return nil
	case rev == 0:
		return refuse(ErrRevision, fmt.Sprintf("Error: The file %s does not exist, but expected_revision %d was given; nothing was changed.", p, *exp))
	case *exp == 0:
		return refuse(ErrRevision, fmt.Sprintf("Error: File %s already exists (at revision %d), and expected_revision 0 says it must not; nothing was changed.", p, rev))
	}
	return refuse(ErrRevision, fmt.Sprintf("Error: The file %s is at revision %d, not expected_revision %d: it changed since you read it; nothing was changed. View it and retry.", p, rev, *exp))
}

// checkBounds refuses a write that makes the file p (size old, 0 when new)
// size bytes, past a bound; a write that does not grow the file passes
// the byte bounds, so a scope over a lowered bound can be tidied.
func (m *Memory) checkBounds(sc *scope, p string, old int64, isNew bool, size int64) error {
	grows := size > old
	if grows && size > m.o.MaxFileBytes {
		return refuse(ErrTooLarge, fmt.Sprintf("Error: File %s would be %s bytes, over the limit of %s bytes per file (max_file_bytes); nothing was written. Keep it shorter, or split it.", p, group(size), group(m.o.MaxFileBytes)))
	}
	if total := sc.bytes - old + size; grows && total > m.o.MaxScopeBytes {
		return refuse(ErrTooLarge, fmt.Sprintf("Error: %s would hold %s bytes, over the limit of %s bytes for all memory files (max_scope_bytes); nothing was written. Delete or shorten files you no longer need.", Root, group(total), group(m.o.MaxScopeBytes)))
	}
	if isNew && len(sc.files) >= m.o.MaxFiles {
		return refuse(ErrTooLarge, fmt.Sprintf("Error: %s already holds %d files, the limit (max_files); nothing was written. Delete or merge files you no longer need.", Root, len(sc.files)))
	}
	return nil
}

// revNote ends the answer of a command on a file with its revision, for
// writers that use expected_revision.
func revNote(rev int64) string { return fmt.Sprintf("\n(revision %d)", rev) }
