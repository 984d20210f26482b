package budget

import (
	"math"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// explorer is the budget interface of the exploration tools, restated so
// that this test fails to compile if *Agent stops satisfying it.
type explorer interface {
	Remaining() int
	Total() int
	TryCharge(n int) (left int, ok bool)
}

var _ explorer = (*Agent)(nil)

func TestTryChargeConcurrentNeverOverspends(t *testing.T) {
	const (
		usable     = 100_000
		initial    = 1_234
		goroutines = 64
		perG       = 500
	)
	a := NewAgent(Identity{AgentName: "w"}, usable, initial)
	var charged atomic.Int64
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for i := range perG {
				n := 1 + (g*31+i*7)%17 // 1..17, varied so the last charges straddle the limit
				left, ok := a.TryCharge(n)
				if left < 0 {
					t.Errorf("TryCharge returned negative remaining %d", left)
				}
				if ok {
					charged.Add(int64(n))
				}
				a.CountCall()
			}
		})
	}
	wg.Wait()
	// 64*500 charges of avg ~9 tokens ask for ~290k, far past the budget.
	if got := a.Used(); got > usable {
		t.Fatalf("used %d exceeds usable %d", got, usable)
	}
	if got, want := a.Used(), initial+int(charged.Load()); got != want {
		t.Fatalf("used %d, want initial+charged = %d", got, want)
	}
	u := a.Usage()
	if u.TokensExtracted != int(charged.Load()) {
		t.Fatalf("tokens_extracted %d, want %d", u.TokensExtracted, charged.Load())
	}
	if u.Calls != goroutines*perG {
		t.Fatalf("calls %d, want %d", u.Calls, goroutines*perG)
	}
	// The largest charge is 17, so the budget must be nearly exhausted.
	if a.Remaining() >= 17 {
		t.Fatalf("remaining %d: charges that fit were refused", a.Remaining())
	}
}

func TestTryCharge(t *testing.T) {
	tests := []struct {
		name     string
		usable   int
		initial  int
		charges  []int
		wantOK   []bool
		wantLeft []int
	}{
		{"exact fit", 100, 10, []int{90, 1}, []bool{true, false}, []int{0, 0}},
		{"refused charge changes nothing", 100, 0, []int{101, 100}, []bool{false, true}, []int{100, 0}},
		{"zero and negative succeed free", 10, 0, []int{0, -5, 10}, []bool{true, true, true}, []int{10, 10, 0}},
		{"initial above usable", 10, 50, []int{1, 0}, []bool{false, true}, []int{0, 0}},
		{"negative usable is zero", -7, 0, []int{1}, []bool{false}, []int{0}},
		{"unlimited", Unlimited, 5, []int{math.MaxInt, 10}, []bool{true, true}, []int{math.MaxInt, math.MaxInt}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := NewAgent(Identity{}, tt.usable, tt.initial)
			for i, n := range tt.charges {
				left, ok := a.TryCharge(n)
				if ok != tt.wantOK[i] || left != tt.wantLeft[i] {
					t.Fatalf("charge %d (%d) = %d, %v; want %d, %v", i, n, left, ok, tt.wantLeft[i], tt.wantOK[i])
				}
			}
		})
	}
}

func TestObserveUsageNeverLowers(t *testing.T) {
	a := NewAgent(Identity{}, 1000, 100)
	steps := []struct {
		in, out  int
		wantUsed int
	}{
		{300, 50, 350},
		{100, 10, 350}, // an older, smaller report
		{-10, -10, 350},
		{400, 0, 400},
		{math.MaxInt, 1, math.MaxInt}, // saturates instead of wrapping negative
	}
	for i, s := range steps {
		a.ObserveUsage(s.in, s.out)
		if got := a.Used(); got != s.wantUsed {
			t.Fatalf("step %d: used %d, want %d", i, got, s.wantUsed)
		}
	}
	if a.Remaining() != 0 {
		t.Fatalf("remaining %d after overflow report, want 0", a.Remaining())
	}
	if got := a.Usage().TokensExtracted; got != 0 {
		t.Fatalf("observed usage counted as extracted: %d", got)
	}
}

func TestObserveUsageConcurrentWithCharges(t *testing.T) {
	a := NewAgent(Identity{}, 1_000_000, 0)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 1000 {
				if g%2 == 0 {
					a.TryCharge(3)
				} else {
					a.ObserveUsage(i*10, 0)
				}
			}
		})
	}
	wg.Wait()
	// Reports absorb earlier charges, so only the largest report is a floor.
	if a.Used() < 9990 {
		t.Fatalf("used %d below the largest report 9990", a.Used())
	}
	if got := a.Usage().TokensExtracted; got != 4*1000*3 {
		t.Fatalf("tokens_extracted %d, want %d", got, 4*1000*3)
	}
}

func TestAccounting(t *testing.T) {
	a := NewAgent(Identity{AgentID: "a1", AgentName: "w1", Role: "worker", RunID: "r", SessionID: "s", Iteration: 2}, 1000, 0)
	a.AddIntercepted(5000)
	a.AddIntercepted(-3)
	a.AddByReference(70_000) // never in the context: the budget is untouched
	a.AddByReference(-1)
	a.TryCharge(40)
	a.CountCall()
	if a.Remaining() != 960 || a.Total() != 1000 {
		t.Fatalf("remaining %d total %d; want 960 1000", a.Remaining(), a.Total())
	}
	u := a.Usage()
	if u.Event != EventName || u.AgentID != "a1" || u.AgentName != "w1" || u.Role != "worker" ||
		u.RunID != "r" || u.SessionID != "s" || u.Iteration != 2 ||
		u.TokensIntercepted != 5000 || u.TokensExtracted != 40 || u.TokensByReference != 70_000 || u.Calls != 1 || u.Time.IsZero() {
		t.Fatalf("Usage() = %+v", u)
	}
	if NewAgent(Identity{}, Unlimited, 0).Total() != 0 || NewAgent(Identity{}, Unlimited, 0).Limited() {
		t.Fatal("unlimited agent reports a total or a limit")
	}
}

// What the model received is charged whether or not it fits: the
// remaining budget is the context really left.
func TestChargeAndSettle(t *testing.T) {
	a := NewAgent(Identity{AgentName: "w"}, 1000, 100)
	a.Charge(300)
	a.Charge(-5)
	if a.Used() != 400 || a.Remaining() != 600 {
		t.Fatalf("used %d, remaining %d", a.Used(), a.Remaining())
	}
	a.Charge(5000)
	if a.Remaining() != 0 || a.Usage().TokensExtracted != 0 {
		t.Fatalf("over the budget: remaining %d, extracted %d", a.Remaining(), a.Usage().TokensExtracted)
	}

	// Settle waits for tracked counts, and only for them.
	if !a.Settled() || !a.Settle(time.Second) {
		t.Fatal("nothing tracked, yet not settled")
	}
	done := a.Track()
	if a.Settled() || a.Settle(10*time.Millisecond) {
		t.Fatal("settled with a count running")
	}
	release := make(chan struct{})
	go func() {
		<-release
		a.AddIntercepted(42)
		done()
		done() // a second call changes nothing
	}()
	close(release)
	if !a.Settle(time.Minute) || a.Usage().TokensIntercepted != 42 || !a.Settled() {
		t.Fatalf("after the count: intercepted %d", a.Usage().TokensIntercepted)
	}
}

// Carry raises what an agent carries to a new listing's count and its
// used count by the difference, never lowering either (issue 38, item 1).
func TestCarry(t *testing.T) {
	a := NewAgent(Identity{AgentName: "w"}, 1000, 100)
	a.Charge(20)
	for _, tc := range []struct{ carry, added, used, carried int }{
		{100, 0, 120, 100}, // the same listing again
		{350, 250, 370, 350},
		{200, 0, 370, 350}, // shorter: the client may hold the longer one
		{-5, 0, 370, 350},
	} {
		if d := a.Carry(tc.carry); d != tc.added || a.Used() != tc.used || a.Carried() != tc.carried {
			t.Errorf("Carry(%d) = %d, Used %d, Carried %d; want %d, %d, %d", tc.carry, d, a.Used(), a.Carried(), tc.added, tc.used, tc.carried)
		}
	}
	if a.Remaining() != 630 {
		t.Errorf("Remaining %d, want 630", a.Remaining())
	}
}
