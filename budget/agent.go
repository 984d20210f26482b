package budget

import (
	"maps"
	"math"
	"sync"
	"sync/atomic"
	"time"
)

// Identity names an agent. It comes from the transport (flags, HTTP
// headers set by the orchestrator), never from tool arguments.
type Identity struct {
	AgentID   string // unique per agent within the server's lifetime
	AgentName string // --agent or X-Scratchpad-Agent
	Role      string // "coordinator" or "worker"
	RunID     string // X-Scratchpad-Run; empty for a single agent
	SessionID string // the MCP session id; empty on stdio
	Iteration int    // X-Scratchpad-Iteration
	Owner     string // the bearer token's owner; empty without tokens
}

// Unlimited, passed as usable to [NewAgent], gives an agent no budget:
// every charge succeeds and is still accounted. Use it for coordinators
// the configuration gives no budget.
const Unlimited = -1

// Agent is one agent's context budget and its accounting. All methods are
// safe for concurrent use: tool calls of one session may run in parallel.
//
// Remaining, Total and TryCharge are the methods the exploration tools
// need, so *Agent satisfies their budget interface without this package
// knowing about them.
type Agent struct {
	id Identity

	mu      sync.Mutex
	usable  int // Unlimited or >= 0; fixed after NewAgent
	used    int
	carried int // of used: what the agent was listed and told ([Agent.Carry])

	intercepted atomic.Int64
	extracted   atomic.Int64
	byReference atomic.Int64
	calls       atomic.Int64

	// pending counts the counts still running in the background (large
	// outputs are counted after their answer was sent): the agent's end
	// waits for them ([Agent.Settle]) so that its record is exact.
	pending  sync.WaitGroup
	inFlight atomic.Int64 // the same count, readable

	finished atomic.Bool // set by the first Events.Finish

	shared *shared // set by Share; nil keeps every count here

	maskedMu sync.Mutex
	masked   map[string]int // credentials masked, by kind ([Agent.AddMasked])
}

// NewAgent returns an agent that may hold usable tokens in its context
// (see [Options.Usable]) and already holds initialUsed: the tokens of the
// tool definitions it was listed and of the server instructions. A usable
// below zero other than [Unlimited] is treated as zero, as is a negative
// initialUsed.
func NewAgent(id Identity, usable, initialUsed int) *Agent {
	if usable < 0 && usable != Unlimited {
		usable = 0
	}
	n := max(initialUsed, 0)
	return &Agent{id: id, usable: usable, used: n, carried: n}
}

// Carry raises what the agent is known to carry before any call (the tool
// definitions it was listed and the server instructions) to n tokens, and
// its used count by the difference: a client that lists tools again after
// a change holds the new listing. A smaller n changes nothing: the
// client may still hold the longer listing (its conversation has it), so
// "left" is never too generous. It returns the tokens added.
func (a *Agent) Carry(n int) int {
	if a.shared != nil {
		if d, err := a.shared.raiseCarried(int64(n)); err == nil {
			a.mu.Lock()
			a.carried = max(a.carried, n)
			a.used = satAdd(a.used, int(d))
			a.mu.Unlock()
			return int(d)
		}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if n <= a.carried {
		return 0
	}
	d := n - a.carried
	a.carried, a.used = n, satAdd(a.used, d)
	return d
}

// Carried returns the tokens the agent carries before any call (see
// [Agent.Carry]).
func (a *Agent) Carried() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.carried
}

// Identity returns who the agent is.
func (a *Agent) Identity() Identity { return a.id }

// Limited reports whether the agent has a budget at all.
func (a *Agent) Limited() bool { return a.usable != Unlimited }

// Total returns the usable budget, the "of N" in exploration footers;
// 0 for an [Unlimited] agent.
func (a *Agent) Total() int { return max(a.usable, 0) }

// Remaining returns the tokens the agent may still be given, never below
// zero; math.MaxInt for an [Unlimited] agent.
func (a *Agent) Remaining() int {
	if a.shared != nil && a.usable != Unlimited {
		if m, err := a.shared.counts(); err == nil {
			return a.remainingOf(int(m[fieldUsed]))
		}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.remainingLocked()
}

func (a *Agent) remainingLocked() int {
	if a.usable == Unlimited {
		return math.MaxInt
	}
	return max(a.usable-a.used, 0)
}

// Used returns the tokens the agent is known to hold.
func (a *Agent) Used() int {
	if a.shared != nil {
		if m, err := a.shared.counts(); err == nil {
			return int(m[fieldUsed])
		}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.used
}

// TryCharge charges n tokens if they fit in what remains, as one atomic
// check-and-charge so that parallel calls cannot overspend together. It
// returns what remains afterwards and whether it charged. A charged n is
// added to tokens_extracted. A negative n charges nothing and succeeds.
func (a *Agent) TryCharge(n int) (left int, ok bool) {
	if a.shared != nil && n > 0 {
		if left, charged, ok := a.sharedTryCharge(n); ok {
			return left, charged
		}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if n <= 0 {
		return a.remainingLocked(), true
	}
	if a.usable != Unlimited && n > a.usable-a.used {
		return a.remainingLocked(), false
	}
	a.used = satAdd(a.used, n)
	a.extracted.Add(int64(n))
	return a.remainingLocked(), true
}

// AddIntercepted records n tokens diverted to disk instead of returned.
// They never enter the context, so they do not touch the budget.
func (a *Agent) AddIntercepted(n int) {
	if n > 0 {
		a.intercepted.Add(int64(n))
		if a.shared != nil {
			_, _ = a.shared.add(fieldIntercepted, int64(n))
		}
	}
}

// AddByReference records n tokens of stored outputs handed to another
// tool by reference. They never enter the context either, so they do not
// touch the budget.
func (a *Agent) AddByReference(n int) {
	if n > 0 {
		a.byReference.Add(int64(n))
		if a.shared != nil {
			_, _ = a.shared.add(fieldByReference, int64(n))
		}
	}
}

// ObserveUsage takes the model's real usage reported by the client (the
// "scratchpad/usage" _meta or the X-Scratchpad-Context-Tokens header) as
// ground truth: used becomes max(used, input+output). It never lowers used,
// because a report can be older than charges made since. Negative values
// count as zero.
func (a *Agent) ObserveUsage(inputTokens, outputTokens int) {
	total := satAdd(max(inputTokens, 0), max(outputTokens, 0))
	a.mu.Lock()
	a.used = max(a.used, total)
	a.mu.Unlock()
	if a.shared != nil {
		_, _ = a.shared.raise(int64(total))
	}
}

// Charge adds n tokens the model has received (a result passed through,
// a pointer, an answer of the server's own tools) to what the agent
// holds, whether or not they fit: they are in its context already, and
// the remaining budget must say so. A negative n charges nothing.
func (a *Agent) Charge(n int) {
	if n <= 0 {
		return
	}
	a.mu.Lock()
	a.used = satAdd(a.used, n)
	a.mu.Unlock()
	if a.shared != nil {
		_, _ = a.shared.add(fieldUsed, int64(n))
	}
}

// Track records that a count for this agent goes on in the background;
// the returned function, called once, says it has been reported
// ([Agent.AddIntercepted] or [Agent.Charge] first).
func (a *Agent) Track() (done func()) {
	a.pending.Add(1)
	a.inFlight.Add(1)
	var once sync.Once
	return func() {
		once.Do(func() {
			a.inFlight.Add(-1)
			a.pending.Done()
		})
	}
}

// Settled reports whether no tracked count is running.
func (a *Agent) Settled() bool { return a.inFlight.Load() == 0 }

// Settle waits until every tracked count has been reported, or d has
// passed; it reports whether they all were.
func (a *Agent) Settle(d time.Duration) bool {
	done := make(chan struct{})
	go func() { a.pending.Wait(); close(done) }()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-done:
		return true
	case <-t.C:
		return false
	}
}

// CountCall records one tool call made by the agent.
func (a *Agent) CountCall() {
	a.calls.Add(1)
	if a.shared != nil {
		_, _ = a.shared.add(fieldCalls, 1)
	}
}

// Usage returns a snapshot of the agent's accounting as a
// scratchpad_usage record stamped with the current time.
func (a *Agent) Usage() Usage {
	u := a.localUsage()
	if a.shared != nil {
		a.sharedUsage(&u)
	}
	return u
}

func (a *Agent) localUsage() Usage {
	return Usage{
		Event:             EventName,
		AgentID:           a.id.AgentID,
		AgentName:         a.id.AgentName,
		Role:              a.id.Role,
		RunID:             a.id.RunID,
		SessionID:         a.id.SessionID,
		Iteration:         a.id.Iteration,
		Owner:             a.id.Owner,
		TokensIntercepted: int(a.intercepted.Load()),
		TokensExtracted:   int(a.extracted.Load()),
		TokensByReference: int(a.byReference.Load()),
		Calls:             int(a.calls.Load()),
		SecretsMasked:     a.maskedCounts(),
		Time:              time.Now().UTC(),
	}
}

// AddMasked counts credentials masked for the agent, by kind (what the
// usage record says in secrets_masked).
func (a *Agent) AddMasked(counts map[string]int) {
	if len(counts) == 0 {
		return
	}
	a.maskedMu.Lock()
	if a.masked == nil {
		a.masked = map[string]int{}
	}
	for k, n := range counts {
		a.masked[k] += n
	}
	a.maskedMu.Unlock()
	if a.shared != nil {
		for k, n := range counts {
			_, _ = a.shared.add(fieldMaskedPrefix+k, int64(n))
		}
	}
}

func (a *Agent) maskedCounts() map[string]int {
	a.maskedMu.Lock()
	defer a.maskedMu.Unlock()
	if len(a.masked) == 0 {
		return nil
	}
	return maps.Clone(a.masked)
}

// satAdd adds two non-negative ints without wrapping.
func satAdd(x, y int) int {
	if x > math.MaxInt-y {
		return math.MaxInt
	}
	return x + y
}
