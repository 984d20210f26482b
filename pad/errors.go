package pad

import (
	"errors"
	"fmt"
)

// Sentinel errors. Errors returned by this package wrap one of them, so
// callers branch with [errors.Is].
var (
	// ErrOptions reports an [Options] value that cannot work.
	ErrOptions = errors.New("pad: invalid options")
	// ErrUnknownSection reports a patch naming a section the pad does not declare.
	ErrUnknownSection = errors.New("unknown section")
	// ErrUnknownOp reports a patch with an operation other than append,
	// replace, check, remove and clear.
	ErrUnknownOp = errors.New("unknown op")
	// ErrBadPatch reports a patch whose content does not fit its operation,
	// such as check without an item number.
	ErrBadPatch = errors.New("bad patch")
	// ErrEmptyNote reports an append to the ledger with nothing to append.
	ErrEmptyNote = errors.New("empty note")
	// ErrNoteTooLong reports a ledger note over the per-entry bound.
	ErrNoteTooLong = errors.New("note too long")
	// ErrBadTags reports a ledger entry with more tags, or longer ones,
	// than an entry may have.
	ErrBadTags = errors.New("bad tags")
	// ErrMalformed reports a pad file that does not parse. The pad quarantines
	// such a file on the next read or write; see [Pad.View].
	ErrMalformed = errors.New("malformed pad")
	// ErrSchema reports a structured state that violates the configured schema.
	ErrSchema = errors.New("state violates schema")
	// ErrBadState reports a structured update that is not a JSON object or is
	// nested deeper than the depth cap.
	ErrBadState = errors.New("bad state")
	// ErrWrongFormat reports a Markdown operation on a structured pad, or the
	// reverse.
	ErrWrongFormat = errors.New("wrong pad format")
	// ErrNoVersion reports a history version number that does not exist.
	ErrNoVersion = errors.New("no such history version")
	// ErrLocked reports a write that could not get the pad's lock within
	// [RedisOptions.LockWait]: another writer held it all along. Nothing
	// changed; retrying later is safe.
	ErrLocked = errors.New("pad is locked")
	// ErrLockLost reports a write refused because the writer's lock lease
	// ([RedisOptions.LockLease]) ran out before it wrote, so another writer
	// may have taken the lock: nothing was written. Retrying is safe.
	ErrLockLost = errors.New("pad lock lost")
	// ErrAlreadyAppended reports a ledger append that was not added
	// because the same agent appended the identical note (and tags) within
	// [AppendDedupeWindow]: on Redis a write whose answer was lost (a
	// timeout) may still be applied, so its retry must not add it twice.
	ErrAlreadyAppended = errors.New("already appended")
	// ErrAlreadyApplied reports an update not applied because the same
	// agent's identical update landed within [AppendDedupeWindow]: the
	// retry of a write whose answer was lost.
	ErrAlreadyApplied = errors.New("already applied")
	// ErrOutcomeUnknown reports a write to Redis that got no answer in
	// time: it may or may not have been applied. Re-read before writing
	// again; a retried ledger append is deduplicated.
	ErrOutcomeUnknown = errors.New("write outcome unknown")
)

// PatchError locates a rejected patch in an update. Nothing was changed.
type PatchError struct {
	Index int   // 0-based position in the patch list
	Patch Patch // the offending patch
	Err   error // wraps ErrUnknownSection, ErrUnknownOp or ErrBadPatch
}

func (e *PatchError) Error() string { return fmt.Sprintf("patch %d: %v", e.Index+1, e.Err) }
func (e *PatchError) Unwrap() error { return e.Err }

// ParseError says where and why a pad file does not parse.
type ParseError struct {
	File   string // base name, e.g. layout.PadMarkdownFile
	Line   int    // 1-based; 0 when the whole file is at fault
	Reason string
}

func (e *ParseError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s line %d: %s", e.File, e.Line, e.Reason)
	}
	return fmt.Sprintf("%s: %s", e.File, e.Reason)
}

// Unwrap lets errors.Is(err, ErrMalformed) match.
func (e *ParseError) Unwrap() error { return ErrMalformed }
