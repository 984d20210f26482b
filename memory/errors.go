package memory

import "errors"

// Sentinel errors. A command's refusal is an [*Error] wrapping one of
// them, so callers branch with [errors.Is]; its message is what the model
// reads.
var (
	// ErrOptions reports [Options] that cannot work.
	ErrOptions = errors.New("memory: invalid options")
	// ErrBadPath reports a path [Clean] refuses: outside /memories, "..",
	// a percent-encoded character, NUL or another control character, a
	// backslash, a hidden name, or one too long or too deep.
	ErrBadPath = errors.New("bad memory path")
	// ErrBadArguments reports a command without a parameter it needs, or
	// with one it cannot take (a view_range of three numbers).
	ErrBadArguments = errors.New("bad arguments")
	// ErrNotFound reports a path with no file (or folder) at it.
	ErrNotFound = errors.New("no such memory file")
	// ErrExists reports a create or a rename onto a path that is taken.
	ErrExists = errors.New("memory file exists")
	// ErrIsDir reports a file command on a folder, or a file whose path
	// runs through a file ("notes.md/x").
	ErrIsDir = errors.New("is a folder, or under a file")
	// ErrNoMatch reports a str_replace whose old_str is not in the file.
	ErrNoMatch = errors.New("old_str not found")
	// ErrNotUnique reports a str_replace whose old_str is in the file more
	// than once.
	ErrNotUnique = errors.New("old_str not unique")
	// ErrLineRange reports an insert_line or a view_range outside the file.
	ErrLineRange = errors.New("line out of range")
	// ErrTooLarge reports a write past a bound (see [BoundError]); nothing
	// was written.
	ErrTooLarge = errors.New("memory bound")
	// ErrRevision reports a write whose expected_revision is not the
	// file's: another writer changed it since it was read. Nothing was
	// written.
	ErrRevision = errors.New("revision mismatch")
	// ErrReadOnly reports a change to a path [Options.ReadOnlyPaths]
	// protects, or any change with [Options.ReadOnly].
	ErrReadOnly = errors.New("read-only memory")
	// ErrLink is what a [Store] returns for a path that runs through a
	// symbolic link (planted by hand in the files of a scope): the memory
	// tool neither follows nor replaces one.
	ErrLink = errors.New("symbolic link")
)

// Error is a refused command: Message is the answer the model reads,
// worded as the memory tool's documentation words it; Err is the
// sentinel it wraps.
type Error struct {
	Message string
	Err     error
}

func (e *Error) Error() string { return e.Message }
func (e *Error) Unwrap() error { return e.Err }

// refuse is an *Error wrapping err with message msg.
func refuse(err error, msg string) error { return &Error{Message: msg, Err: err} }
