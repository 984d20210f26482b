package budget

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testredis"
	"github.com/scratchpad-mcp/scratchpad-mcp/state"
)

// sharedBackend opens two handles on one store of counters, as two
// replicas would have; stop makes it unreachable (nil for Local).
type sharedBackend struct {
	name string
	open func(t *testing.T) (c1, c2 state.Counters, stop func())
}

func sharedBackends() []sharedBackend {
	return []sharedBackend{
		{"local", func(t *testing.T) (state.Counters, state.Counters, func()) {
			l := state.NewLocal(state.LocalOptions{})
			return l, l, nil
		}},
		{"redis", func(t *testing.T) (state.Counters, state.Counters, func()) {
			s := testredis.Start(t)
			open := func() state.Counters {
				r, err := state.NewRedis(state.RedisOptions{URL: s.URL(), Timeout: 2 * time.Second})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = r.Close() })
				return r
			}
			return open(), open(), s.Kill
		}},
	}
}

// sharedAgents returns two agents backed by one agent's counters (c1
// and c2 may be nil), each carrying carried tokens.
func sharedAgents(t *testing.T, c1, c2 state.Counters, usable, carried int) (*Agent, *Agent) {
	t.Helper()
	var out [2]*Agent
	for i, c := range []state.Counters{c1, c2} {
		out[i] = NewAgent(Identity{AgentID: "w-1", AgentName: "w"}, usable, carried)
		if err := out[i].Share(Shared{Counters: c, Key: "w-1"}); err != nil {
			t.Fatal(err)
		}
	}
	return out[0], out[1]
}

func TestShared(t *testing.T) {
	cases := []struct {
		name string
		run  func(t *testing.T, c1, c2 state.Counters, stop func())
	}{
		{"two replicas charging at once spend exactly the budget", func(t *testing.T, c1, c2 state.Counters, _ func()) {
			a, b := sharedAgents(t, c1, c2, 1000, 0)
			var wins atomic.Int64
			var wg sync.WaitGroup
			for _, ag := range []*Agent{a, b} {
				for range 8 {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for range 200 {
							if _, ok := ag.TryCharge(1); ok {
								wins.Add(1)
							}
						}
					}()
				}
			}
			wg.Wait()
			if wins.Load() != 1000 {
				t.Errorf("%d charges succeeded, want 1000", wins.Load())
			}
			for _, ag := range []*Agent{a, b} {
				if r, u := ag.Remaining(), ag.Usage(); r != 0 || u.TokensExtracted != 1000 {
					t.Errorf("Remaining %d, extracted %d; want 0, 1000", r, u.TokensExtracted)
				}
				if err := ag.SharedErr(); err != nil {
					t.Error(err)
				}
			}
		}},
		{"carried tokens count once, charges and usage reports are seen by both", func(t *testing.T, c1, c2 state.Counters, _ func()) {
			a, b := sharedAgents(t, c1, c2, 1000, 100)
			if b.Used() != 100 {
				t.Fatalf("carried twice: Used %d, want 100", b.Used())
			}
			a.Charge(50)
			if b.Used() != 150 || b.Remaining() != 850 {
				t.Errorf("after a's Charge(50) b has Used %d, Remaining %d; want 150, 850", b.Used(), b.Remaining())
			}
			a.ObserveUsage(400, 100)
			b.ObserveUsage(200, 0) // older: never lowers
			if a.Used() != 500 || b.Used() != 500 {
				t.Errorf("after usage reports Used %d, %d; want 500", a.Used(), b.Used())
			}
			if left, ok := b.TryCharge(501); ok || left != 500 {
				t.Errorf("TryCharge(501) = %d, %v; want 500, false", left, ok)
			}
			a.CountCall()
			b.CountCall()
			b.AddIntercepted(7)
			b.AddByReference(9)
			if u := a.Usage(); u.Calls != 2 || u.TokensIntercepted != 7 || u.TokensByReference != 9 {
				t.Errorf("Usage calls %d, intercepted %d, by reference %d; want 2, 7, 9", u.Calls, u.TokensIntercepted, u.TokensByReference)
			}
		}},
		{"a longer listing is carried once, whichever replica hears it", func(t *testing.T, c1, c2 state.Counters, _ func()) {
			a, b := sharedAgents(t, c1, c2, 10000, 100)
			a.Charge(50)
			// Both replicas answer the same relisting of 400 tokens.
			var wg sync.WaitGroup
			var added atomic.Int64
			for _, ag := range []*Agent{a, b} {
				wg.Add(1)
				go func() { defer wg.Done(); added.Add(int64(ag.Carry(400))) }()
			}
			wg.Wait()
			if added.Load() != 300 || a.Used() != 450 || b.Used() != 450 {
				t.Errorf("Carry(400) on both added %d, Used %d, %d; want 300, 450", added.Load(), a.Used(), b.Used())
			}
			if d := b.Carry(300); d != 0 || a.Used() != 450 {
				t.Errorf("a shorter listing added %d, Used %d; want 0, 450", d, a.Used())
			}
		}},
		{"masked credentials are counted once, seen by both", func(t *testing.T, c1, c2 state.Counters, _ func()) {
			a, b := sharedAgents(t, c1, c2, 1000, 0)
			a.AddMasked(map[string]int{"github-pat": 2})
			b.AddMasked(map[string]int{"github-pat": 1, "jwt": 1})
			if m := a.Usage().SecretsMasked; m["github-pat"] != 3 || m["jwt"] != 1 || len(m) != 2 {
				t.Errorf("secrets_masked %v, want github-pat 3, jwt 1", m)
			}
		}},
		{"without Counters an agent keeps its own budget", func(t *testing.T, _, _ state.Counters, _ func()) {
			a, b := sharedAgents(t, nil, nil, 10, 0)
			if _, ok := a.TryCharge(10); !ok {
				t.Fatal("a's charge refused")
			}
			if _, ok := b.TryCharge(10); !ok || b.Remaining() != 0 || a.Remaining() != 0 {
				t.Errorf("unshared agents share a budget: b ok %v, remaining %d, %d", ok, b.Remaining(), a.Remaining())
			}
			if a.SharedErr() != nil {
				t.Error(a.SharedErr())
			}
		}},
		{"an unreachable store falls back to the agent's own counts", func(t *testing.T, c1, c2 state.Counters, stop func()) {
			if stop == nil {
				t.Skip("a Local store has no server to lose")
			}
			a, _ := sharedAgents(t, c1, c2, 100, 10)
			a.TryCharge(20)
			stop()
			if left, ok := a.TryCharge(30); !ok || left != 40 {
				t.Errorf("TryCharge(30) with Redis gone = %d, %v; want 40, true", left, ok)
			}
			if err := a.SharedErr(); !errors.Is(err, state.ErrUnavailable) {
				t.Errorf("SharedErr = %v, want ErrUnavailable", err)
			}
		}},
	}
	for _, be := range sharedBackends() {
		for _, tc := range cases {
			t.Run(be.name+"/"+tc.name, func(t *testing.T) {
				c1, c2, stop := be.open(t)
				tc.run(t, c1, c2, stop)
			})
		}
	}
}
