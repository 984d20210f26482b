package divert

import (
	"context"
	"encoding/json"
	"time"
)

// chargeNowLimit is the size of a result up to which [Charge] counts it
// before returning; a larger one is counted in the background, so that
// the client is not kept waiting for the count of what it already has.
const chargeNowLimit = 1 << 20

// chargeWait bounds how long a background count waits for its call to
// end before it counts anyway: a context that outlives its answer delays
// the budget's charge by this much at most, and loses nothing.
const chargeWait = time.Minute

// Charge reports to a's account ([Account].Charge) the exact token count of what the model
// receives of result, a tools/call result as it is sent (an upstream's
// passed through, a pointer, an error): its text content blocks and the
// text of embedded resources, counted once, or its structuredContent when
// it has no text (or when a.Structured). Images and audio are not counted
// (what they cost is the provider's). A result that is not one MCP
// defines counts nothing. valid says result is known to be valid JSON.
//
// A result over 1 MiB is counted in the background, [Account].Track'ed, once ctx
// is done: ctx is the call's, which both protocol eras end once its
// answer has been written. Counting while the answer is written takes the
// cores the write and the client's read need (a 123 MB text is 0.5–1.9 s
// of CPU, NOTES.md); the count is no part of what the client waits for. The
// caller must not change result's bytes afterwards.
func Charge(ctx context.Context, a *Agent, result json.RawMessage, valid bool) {
	if a.account() == nil || a.Counter == nil {
		return
	}
	if len(result) <= chargeNowLimit {
		a.charge(a.cost(result, valid))
		return
	}
	done := a.track()
	go func() {
		defer done()
		if ended := ctx.Done(); ended != nil {
			select {
			case <-ended:
			case <-time.After(chargeWait):
			}
		}
		a.charge(a.cost(result, valid))
	}()
}

// cost is the token count of what the model reads of result.
func (a *Agent) cost(result json.RawMessage, valid bool) int {
	v, err := view(result, valid)
	if err != nil {
		return 0
	}
	v.preferStructured = a.Structured
	return cost(v, a.Counter)
}

// cost is the token count of what the model reads of v. A large text is
// streamed to the counter, not copied whole.
func cost(v modelView, c Counter) int {
	if !v.textOnly() {
		return c.Count(v.structured)
	}
	if len(v.texts) == 0 {
		return 0
	}
	if sc, ok := c.(streamCounter); ok && v.textBound() > chargeNowLimit && streamable(v.texts) {
		if n, err := sc.CountReader(newTextReader(v.texts)); err == nil {
			return n
		}
	}
	return c.Count(v.text(-1, false))
}
