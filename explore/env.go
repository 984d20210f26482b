package explore

import (
	"context"
	"errors"
	"os"
)

// DefaultMaxExtractionTokens is the per-call cap used when
// [Env.MaxExtractionTokens] is zero.
const DefaultMaxExtractionTokens = 10000

// Budget is an agent's context budget. Package budget implements it; the
// explore package only needs these three calls, so it does not import it.
type Budget interface {
	// Remaining reports the tokens left.
	Remaining() int
	// Total reports the usable tokens.
	Total() int
	// TryCharge atomically charges n tokens if they fit and reports what is
	// left; ok=false charges nothing.
	TryCharge(n int) (left int, ok bool)
}

// Env is what one call needs to know about the calling agent. The zero value
// of every optional field means its default.
type Env struct {
	// Root is the agent's read root. All file access goes through it, so
	// absolute paths, ".." escapes and symlinks leaving it are refused.
	Root *os.Root
	// Dir is the directory, relative to Root, that a tool's file argument is
	// resolved from (where stored outputs live). "" means Root itself.
	// Relative paths such as "../artifacts/x.txt" are resolved from Dir and
	// must stay under Root.
	Dir string
	// Count is the exact token counter (tokens.Counter.CountString). Required.
	Count func(string) int
	// MaxExtractionTokens caps one result, footer included. 0 means
	// [DefaultMaxExtractionTokens].
	MaxExtractionTokens int
	// Budget is charged for every successful result. nil means the per-call
	// cap is the only limit.
	Budget Budget
	// Fetch, when not nil, makes a file (relative to Root) present under
	// Root before it is opened, or returns an error wrapping
	// fs.ErrNotExist: replica mode's stored outputs another process wrote
	// (package state). nil: files are where they are.
	Fetch func(rel string) error
	// FetchAll, when not nil, makes every stored output under Root
	// present before a search over all of them (grep without a file), at
	// most limit of them: replica mode's outputs other processes wrote
	// that this one never opened. nil: the files under Root are all there
	// is.
	FetchAll func(ctx context.Context, limit int) error
	// Cache holds parsed and indexed files across calls and agents. nil means
	// every call reads and indexes the file again.
	Cache *Cache
	// Slots, when not nil, bounds the exploration calls of this Env
	// running at once to its capacity: a call finding it full answers
	// "busy" at once rather than queue, so one agent cannot occupy every
	// core. The server makes one per agent of [DefaultConcurrency]; nil
	// (the explore subcommand) means no bound.
	Slots chan struct{}
	// OwnerSlots, when not nil, bounds in the same way the exploration
	// calls of every Env of the agent's owner together (the server
	// shares one among an owner's agents), so that an owner with many
	// sessions cannot run each one's Slots at once. nil: no such bound.
	OwnerSlots chan struct{}
	// MapFiles maps a file of at least [MinMapBytes] read-only instead of
	// reading it into memory: a fresh process spends as long faulting in
	// and copying 100 MB as indexing it, where a mapping costs neither.
	// Only for an Env whose process ends with its calls (the explore
	// subcommand): a mapping is never undone, since pieces of a file may
	// outlive its cached doc, and a file truncated under a mapping faults
	// (a panic the call recovers, if it is on the call's goroutine and
	// [runtime/debug.SetPanicOnFault] is on). The server reads files: its
	// stored outputs come and go for days.
	MapFiles bool

	// probing marks the Env of a suggestion being tried out (fit.go): its
	// too-large answers make no suggestions of their own, and docs holds
	// the file the answer was about, already read and indexed.
	probing bool
	docs    map[string]*doc
}

// MinMapBytes is the smallest file [Env.MapFiles] maps: below it reading
// costs less than a mapping.
const MinMapBytes = 1 << 20

// DefaultConcurrency is the exploration calls one agent may run at once
// on a server.
const DefaultConcurrency = 4

// DefaultOwnerConcurrency is the exploration calls one owner's agents
// may run at once, together, on a server: one agent's worth, so an owner
// with one agent loses nothing, and one with 500 sessions runs 4 calls,
// not 2,000. An exploration call is CPU-bound while it runs (a slow grep
// takes a core), and calls beyond the cores only slow everyone down:
// measured on 2 cores, another owner's ping took 0.9 ms with none
// running, 0.7 ms with 2, 81 ms with 4, 162 ms with 8 and 323 ms with
// 16. So on 4 to 8 cores one owner at its bound leaves the others
// unhindered, and on 2 it costs them tens of milliseconds, not hundreds.
// A server on more cores, or one owner's orchestration of many workers,
// may raise it ([explore] max_calls_per_owner).
const DefaultOwnerConcurrency = 4

// acquire takes one of the Env's call slots and one of its owner's; when
// either bound is full it takes neither and full is the full one's
// channel (Slots or OwnerSlots). release gives them back.
func (e *Env) acquire() (release func(), full chan struct{}) {
	own, err := take(e.Slots)
	if err != nil {
		return nil, e.Slots
	}
	owner, err := take(e.OwnerSlots)
	if err != nil {
		own()
		return nil, e.OwnerSlots
	}
	return func() { owner(); own() }, nil
}

// errFull is take's answer for a full channel.
var errFull = errors.New("full")

// take takes one place of slots (none when nil), or fails at once.
func take(slots chan struct{}) (release func(), err error) {
	if slots == nil {
		return func() {}, nil
	}
	select {
	case slots <- struct{}{}:
		return func() { <-slots }, nil
	default:
		return nil, errFull
	}
}

func (e *Env) maxTokens() int {
	if e.MaxExtractionTokens > 0 {
		return e.MaxExtractionTokens
	}
	return DefaultMaxExtractionTokens
}
