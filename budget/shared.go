package budget

import (
	"context"
	"math"
	"strings"
	"sync/atomic"
	"time"

	"github.com/scratchpad-mcp/scratchpad-mcp/state"
)

// Shared backs an [Agent] with a [state.Counters], so that the replicas
// serving one agent ([cluster] redis_url) spend one budget: a charge on
// one replica is seen by the others, and two replicas charging at once
// never overspend it nor lose a charge. See [Agent.Share].
type Shared struct {
	// Counters holds the budget; nil leaves the agent on its own counts.
	Counters state.Counters
	// Key names the agent's counters, the same on every replica.
	Key string
	// Timeout bounds each call to Counters; 0 means 2s.
	Timeout time.Duration
}

// The fields of an agent's counter hash.
const (
	fieldUsed        = "used"
	fieldExtracted   = "extracted"
	fieldIntercepted = "intercepted"
	fieldByReference = "by_reference"
	fieldCalls       = "calls"
	fieldCarried     = "carried" // of used: the listing and instructions ([Agent.Carry])
	// fieldMaskedPrefix and a kind name the count of masked credentials
	// of that kind ([Agent.AddMasked]).
	fieldMaskedPrefix = "masked:"
)

// shared is the agent's [Shared] with the last error it met.
type shared struct {
	Shared
	err atomic.Pointer[error]
}

// Share backs a by s: call it once, after [NewAgent] and before a is
// used by more than one goroutine. What a already carries raises the
// shared used count to at least that much (never adds to it: another
// replica may have carried the same tokens in already). With a nil
// s.Counters it does nothing, and a behaves as before.
//
// A shared agent still keeps its own counts as an unshared one does. When
// Counters fails (Redis unreachable), each method falls back to them, so
// the budget is kept per replica until Counters answers again; the error
// is reported by [Agent.SharedErr].
func (a *Agent) Share(s Shared) error {
	if s.Counters == nil {
		return nil
	}
	if s.Timeout <= 0 {
		s.Timeout = 2 * time.Second
	}
	carried := a.Carried() // a's own count: a.shared is not set yet
	a.shared = &shared{Shared: s}
	_, err := a.shared.raiseCarried(int64(carried))
	return a.shared.keep(err)
}

// SharedErr returns the last error of the agent's [Shared] counters, or
// nil (always nil for an agent that is not shared).
func (a *Agent) SharedErr() error {
	if a.shared == nil {
		return nil
	}
	if p := a.shared.err.Load(); p != nil {
		return *p
	}
	return nil
}

func (s *shared) ctx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), s.Timeout)
}

// keep remembers a non-nil err for [Agent.SharedErr] and returns it.
func (s *shared) keep(err error) error {
	if err != nil {
		s.err.Store(&err)
	}
	return err
}

func (s *shared) add(field string, n int64) (int64, error) {
	ctx, cancel := s.ctx()
	defer cancel()
	v, err := s.Counters.Add(ctx, s.Key, field, n)
	return v, s.keep(err)
}

func (s *shared) tryAdd(n, limit int64) (int64, bool, error) {
	ctx, cancel := s.ctx()
	defer cancel()
	v, ok, err := s.Counters.TryAdd(ctx, s.Key, fieldUsed, n, limit)
	return v, ok, s.keep(err)
}

func (s *shared) counts() (map[string]int64, error) {
	ctx, cancel := s.ctx()
	defer cancel()
	m, err := s.Counters.Counts(ctx, s.Key)
	return m, s.keep(err)
}

// raise makes the shared used count at least x and returns it. Counters
// has no "max" operation: TryAdd(x-cur, limit x) succeeds only if no
// other replica added since cur was read; each refusal means the count
// grew, so the loop ends.
func (s *shared) raise(x int64) (int64, error) {
	m, err := s.counts()
	if err != nil {
		return 0, err
	}
	cur := m[fieldUsed]
	for cur < x {
		v, ok, err := s.tryAdd(x-cur, x)
		if err != nil {
			return 0, err
		}
		if ok {
			return v, nil
		}
		cur = v
	}
	return cur, nil
}

// raiseCarried makes the shared carried count at least x and adds what
// it raised it by to the used count, returning that difference (0 when
// another replica carried as much already: a session taken up elsewhere
// carries the same listing). Counters has no "max" operation:
// TryAdd(x-cur, limit x) on the carried field succeeds only if no other
// replica raised it since cur was read; each refusal means it grew, so
// the loop ends, and each raise is added to used exactly once, by the
// replica that made it.
func (s *shared) raiseCarried(x int64) (int64, error) {
	m, err := s.counts()
	if err != nil {
		return 0, err
	}
	cur := m[fieldCarried]
	for cur < x {
		ctx, cancel := s.ctx()
		v, ok, err := s.Counters.TryAdd(ctx, s.Key, fieldCarried, x-cur, x)
		cancel()
		if err = s.keep(err); err != nil {
			return 0, err
		}
		if ok {
			d := x - cur
			if _, err := s.add(fieldUsed, d); err != nil {
				return 0, err
			}
			return d, nil
		}
		cur = v
	}
	return 0, nil
}

// sharedTryCharge is [Agent.TryCharge] of a shared agent with n > 0; ok
// false in the last result means Counters failed.
func (a *Agent) sharedTryCharge(n int) (left int, charged, ok bool) {
	limit := int64(math.MaxInt64)
	if a.usable != Unlimited {
		limit = int64(a.usable)
	}
	v, charged, err := a.shared.tryAdd(int64(n), limit)
	if err != nil {
		return 0, false, false
	}
	a.mu.Lock()
	if charged {
		a.used = satAdd(a.used, n)
		a.extracted.Add(int64(n))
	}
	a.mu.Unlock()
	if charged {
		_, _ = a.shared.add(fieldExtracted, int64(n))
	}
	return a.remainingOf(int(v)), charged, true
}

// remainingOf is what remains of the budget when used tokens are held.
func (a *Agent) remainingOf(used int) int {
	if a.usable == Unlimited {
		return math.MaxInt
	}
	return max(a.usable-used, 0)
}

// sharedUsage overwrites u's counts with the shared ones, when Counters
// answers.
func (a *Agent) sharedUsage(u *Usage) {
	m, err := a.shared.counts()
	if err != nil {
		return
	}
	u.TokensExtracted = int(m[fieldExtracted])
	u.TokensIntercepted = int(m[fieldIntercepted])
	u.TokensByReference = int(m[fieldByReference])
	u.Calls = int(m[fieldCalls])
	for f, n := range m {
		if k, ok := strings.CutPrefix(f, fieldMaskedPrefix); ok && n > 0 {
			if u.SecretsMasked == nil {
				u.SecretsMasked = map[string]int{}
			}
			u.SecretsMasked[k] = int(n)
		}
	}
}
