package memory

import (
	"fmt"
	"time"
)

// Defaults of [Options].
const (
	DefaultMaxFileBytes  = 64 << 10 // 64 KiB: a long document, a few thousand lines
	DefaultMaxScopeBytes = 1 << 20  // 1 MiB for all of a scope's files
	DefaultMaxFiles      = 200
)

// MaxLines is the most lines a file view numbers (the memory tool's
// documented limit; a file within the default bounds never reaches it).
const MaxLines = 999_999

// Options bounds and shapes one scope's memory. The zero value of every
// field means its default.
type Options struct {
	// MaxFileBytes bounds one file; 0 means [DefaultMaxFileBytes]. A
	// create or edit that would make a file larger is refused.
	MaxFileBytes int64
	// MaxScopeBytes bounds all files of the scope together; 0 means
	// [DefaultMaxScopeBytes]. Past it a write that adds bytes is refused
	// (one that shrinks a file or keeps its size passes, so a scope over
	// a lowered bound can be tidied).
	MaxScopeBytes int64
	// MaxFiles bounds how many files the scope holds; 0 means
	// [DefaultMaxFiles].
	MaxFiles int
	// TTL, when positive, expires a file that was neither read nor
	// written for that long: it is no longer seen, and the next write in
	// the scope removes it (its versions are kept, as a delete's). A view
	// of the file renews it (as LangGraph's store refreshes on read).
	TTL time.Duration
	// ReadOnly refuses every change: the model may only view.
	ReadOnly bool
	// ReadOnlyPaths are files ("/memories/policy.md") or folders
	// ("/memories/policies/", a trailing slash or not) the model may view
	// but not change, create in, delete or rename (as Letta's read-only
	// blocks).
	ReadOnlyPaths []string
	// Shared says that a scope is a run's, shared by its agents: the
	// tool's description tells the model so.
	Shared bool
	// Name is the tool's name; "" means [ToolName], the name models
	// know. Another one serves a client that gives the model a memory
	// tool of its own under that name.
	Name string
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// normalize fills the defaults and checks o; readOnly gets the cleaned
// ReadOnlyPaths.
func (o Options) normalize() (Options, []string, error) {
	switch {
	case o.MaxFileBytes < 0, o.MaxScopeBytes < 0, o.MaxFiles < 0, o.TTL < 0:
		return o, nil, fmt.Errorf("%w: negative bound", ErrOptions)
	}
	if o.MaxFileBytes == 0 {
		o.MaxFileBytes = DefaultMaxFileBytes
	}
	if o.MaxScopeBytes == 0 {
		o.MaxScopeBytes = DefaultMaxScopeBytes
	}
	if o.MaxFiles == 0 {
		o.MaxFiles = DefaultMaxFiles
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Name == "" {
		o.Name = ToolName
	}
	var ro []string
	for _, p := range o.ReadOnlyPaths {
		rel, err := Clean(p)
		if err != nil {
			return o, nil, fmt.Errorf("%w: read-only path %q: %v", ErrOptions, p, err)
		}
		ro = append(ro, rel)
	}
	return o, ro, nil
}

// CheckPath checks a path given in configuration (a read-only path): nil
// when [Clean] takes it, else its reason.
func CheckPath(p string) error {
	_, err := Clean(p)
	return err
}
