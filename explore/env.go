package explore

import "os"

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
	// Cache holds parsed and indexed files across calls and agents. nil means
	// every call reads and indexes the file again.
	Cache *Cache
	// Slots, when not nil, bounds the exploration calls of this Env
	// running at once to its capacity: a call finding it full answers
	// "busy" at once rather than queue, so one agent cannot occupy every
	// core. The server makes one per agent of [DefaultConcurrency]; nil
	// (the explore subcommand) means no bound.
	Slots chan struct{}

	// probing marks the Env of a suggestion being tried out (fit.go): its
	// too-large answers make no suggestions of their own, and docs holds
	// the file the answer was about, already read and indexed.
	probing bool
	docs    map[string]*doc
}

// DefaultConcurrency is the exploration calls one agent may run at once
// on a server.
const DefaultConcurrency = 4

// acquire takes one of the Env's call slots; ok is false when all are
// taken. release gives it back.
func (e *Env) acquire() (release func(), ok bool) {
	if e.Slots == nil {
		return func() {}, true
	}
	select {
	case e.Slots <- struct{}{}:
		return func() { <-e.Slots }, true
	default:
		return nil, false
	}
}

func (e *Env) maxTokens() int {
	if e.MaxExtractionTokens > 0 {
		return e.MaxExtractionTokens
	}
	return DefaultMaxExtractionTokens
}
