package explore

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/scratchpad-mcp/scratchpad-mcp/tool"
)

// A too-large answer offers only suggestions that fit: each is run as a
// probe (nothing charged, its own suggestions not made) and kept when its
// result fits the per-call cap and what is left of the budget. One with a
// window (limit, lines, max_matches, top, a slice's end) that does not fit
// is resized from what the probe measured (its estimated tokens against
// the bound, with a margin) and probed again, a few times; one that still
// does not fit, or fails otherwise, is not offered.

const (
	// fitAttempts bounds the probes of one suggestion.
	fitAttempts = 4
	// fitMargin is the share of the bound a resized window aims at: the
	// cost of rows is not uniform.
	fitMargin = 0.85
	// fitBudget bounds the probing of one too-large answer; suggestions
	// not probed by then are not offered.
	fitBudget = 3 * time.Second
)

// probeBudget is the caller's budget as a probe sees it: what is left,
// never charged.
type probeBudget struct{ b Budget }

func (p probeBudget) Remaining() int { return p.b.Remaining() }
func (p probeBudget) Total() int     { return p.b.Total() }
func (p probeBudget) TryCharge(n int) (int, bool) {
	left := p.b.Remaining()
	return left - max(n, 0), n <= left
}

// runProbe is [Call], set at init: the handlers reach it through
// too-large answers, which would make the handler table's initialization
// depend on itself.
var runProbe func(ctx context.Context, env *Env, name string, args map[string]any) tool.Result

func init() { runProbe = Call }

// probeOutcome is what running a suggestion found.
type probeOutcome struct {
	fits      bool
	tooLarge  bool
	estimated int // tokens of the result (too large: its estimate)
	bound     int // the bound it went over
}

// fitting returns the suggestions that fit, resized where they must be:
// est is the too-large result's estimated tokens, bound the cap or what is
// left of the budget that it went over.
func (c *call) fitting(sugg []suggestion, est, bound int) []suggestion {
	if c.env.probing || len(sugg) == 0 {
		return sugg
	}
	penv := *c.env
	penv.probing = true
	if penv.Budget != nil {
		penv.Budget = probeBudget{c.env.Budget}
	}
	if c.doc != nil {
		penv.docs = map[string]*doc{c.file: c.doc}
	}
	deadline := time.Now().Add(fitBudget)
	out := make([]suggestion, 0, len(sugg))
	if c.env.Budget != nil {
		bound = min(bound, c.env.Budget.Remaining())
	}
	for _, s := range sugg {
		// A narrower retry sized from what was measured: resized now when
		// its share of est cannot fit, dropped when it cannot shrink.
		if predicted := int(float64(est) * s.share); s.share > 0 && predicted > bound {
			if !resize(&s, probeOutcome{estimated: predicted, bound: bound}) {
				continue
			}
		}
		for attempt := 0; attempt < fitAttempts && time.Now().Before(deadline) && c.ctx.Err() == nil; attempt++ {
			p := probe(c, &penv, s)
			if p.fits {
				out = append(out, s)
				break
			}
			if !p.tooLarge || !resize(&s, p) {
				break
			}
		}
	}
	return out
}

// probe runs s in penv.
func probe(c *call, penv *Env, s suggestion) probeOutcome {
	args := make(map[string]any, len(s.Arguments))
	for _, a := range s.Arguments {
		args[a.K] = a.V
	}
	res := runProbe(c.ctx, penv, s.Tool, args)
	if !strings.HasPrefix(res.Text, `{"error":`) {
		return probeOutcome{fits: true}
	}
	var e struct {
		Error     string `json:"error"`
		Estimated int    `json:"estimated_tokens"`
		PerCall   *int   `json:"per_call_limit"`
		Remaining *int   `json:"remaining_budget_tokens"`
	}
	if json.Unmarshal([]byte(res.Text), &e) != nil || !strings.HasSuffix(e.Error, "_too_large") {
		return probeOutcome{}
	}
	p := probeOutcome{tooLarge: true, estimated: e.Estimated}
	switch {
	case e.PerCall != nil:
		p.bound = *e.PerCall
	case e.Remaining != nil:
		p.bound = *e.Remaining
	}
	if c.env.Budget != nil {
		p.bound = min(p.bound, c.env.Budget.Remaining())
	}
	return p
}

// windowArgs are the arguments that size a result, in the order they are
// shrunk.
var windowArgs = []string{"limit", "lines", "max_matches", "top", "max_depth"}

// fittedWhy rewrites a halving suggestion's "why" once [resize] sized its
// window from what was measured: the numbers are then fitted to the limit,
// not half (limit 5000 became 114), and the text must say what they are.
var fittedWhy = strings.NewReplacer(
	"half the window", "a window fitted to the limit",
	"half the lines", "the first lines, as many as fit the limit",
	"half the matches", "the first matches, as many as fit the limit",
	"half the items", "the first items, as many as fit the limit",
	"half the keys", "the first keys, as many as fit the limit",
	"first half of the range", "the start of the range, as much as fits the limit",
	"second half of the range", "the second half's start, as much as fits the limit",
)

// resize shrinks s's window so that it would take about fitMargin of the
// bound p went over, and reports whether it could; its "why" then says the
// window was fitted ([fittedWhy]).
func resize(s *suggestion, p probeOutcome) bool {
	if !shrinkWindow(s, p) {
		return false
	}
	if why := fittedWhy.Replace(s.Why); why != s.Why {
		s.Why = why
	} else if !strings.Contains(s.Why, "limit") {
		s.Why += " (window fitted to the limit)"
	}
	return true
}

// shrinkWindow is resize's arithmetic.
func shrinkWindow(s *suggestion, p probeOutcome) bool {
	scale := 0.5
	if p.estimated > 0 && p.bound > 0 {
		scale = min(0.5, fitMargin*float64(p.bound)/float64(p.estimated))
	}
	shrink := func(n int) int { return max(1, int(float64(n)*scale)) }
	for _, name := range windowArgs {
		if i, n, ok := intArg(s.Arguments, name); ok && n > 1 {
			s.Arguments[i].V = shrink(n)
			return true
		}
	}
	// slice: the range shrinks from its end.
	_, start, okS := intArg(s.Arguments, "start")
	i, end, okE := intArg(s.Arguments, "end")
	if okS && okE && end > start {
		s.Arguments[i].V = start + shrink(end-start+1) - 1
		return true
	}
	// Context lines go before anything is given up.
	if i, n, ok := intArg(s.Arguments, "context"); ok && n > 0 {
		s.Arguments[i].V = n / 2
		return true
	}
	return false
}

// intArg finds the integer argument name of args.
func intArg(args obj, name string) (int, int, bool) {
	for i, a := range args {
		if a.K != name {
			continue
		}
		switch v := a.V.(type) {
		case int:
			return i, v, true
		case float64:
			return i, int(v), true
		}
	}
	return 0, 0, false
}
