package proxy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/scratchpad-mcp/scratchpad-mcp/upstream"
)

// A 2026-07-28 upstream asks for what it needs (elicitation, sampling,
// roots) with an input-required result instead of a server→client
// request, and is called again with the answers. Two clients meet it:
//
//   - a client that can be asked mid-call (a 2025 session: its
//     Capabilities declare the kinds asked) has each input request put to
//     it as the server→client request it understands, and the upstream is
//     called again with the answers, until it completes ([Proxy.fulfil]);
//   - any other (a 2026-07-28 client) gets the [*upstream.InputRequired]
//     back from the call, answers it itself, and retries with a
//     [Continuation] (in its [Request]) that is forwarded to the same
//     upstream.

// Continuation is a retry's answer to an input-required result: the
// client's inputResponses by key, and the upstream's own requestState to
// echo ("" when it sent none).
type Continuation struct {
	Responses map[string]json.RawMessage
	State     string
}

// Bounds of fulfilling input requests for a client that can be asked:
// rounds in all, and rounds in a row that asked nothing (an upstream
// shedding load returns only its state), waited out with a backoff.
const (
	maxInputRounds = 10
	maxEmptyRounds = 3
)

var emptyRoundWait = []time.Duration{100 * time.Millisecond, 400 * time.Millisecond, time.Second}

// InputAnswerer is a [Session] that answers input-required results
// itself (a 2026-07-28 client): they are returned to it from the call,
// not put to it as server→client requests, whatever it may also take.
type InputAnswerer interface {
	AnswersInputRequired() bool
}

// canAsk reports whether s can be put every input request of ir: it takes
// server→client requests of each kind, and does not answer input-required
// results itself.
func canAsk(s Session, ir *upstream.InputRequired) bool {
	if s == nil {
		return false
	}
	if a, ok := s.(InputAnswerer); ok && a.AnswersInputRequired() {
		return false
	}
	caps := s.Capabilities()
	for _, raw := range ir.Requests {
		var r struct {
			Method string `json:"method"`
		}
		_ = json.Unmarshal(raw, &r)
		ok := false
		switch r.Method {
		case "elicitation/create":
			ok = caps.Elicitation
		case "sampling/createMessage":
			ok = caps.Sampling
		case "roots/list":
			ok = caps.Roots
		}
		if !ok {
			return false
		}
	}
	return true
}

// fulfil answers ir by asking s, and calls again (call, with params
// holding the answers) until the upstream completes, fails, or asks for
// what s cannot give (then its input-required result is returned as the
// error, for the client).
func (p *Proxy) fulfil(ctx context.Context, s Session, ir *upstream.InputRequired, params map[string]any, call func() (json.RawMessage, string, error)) (json.RawMessage, string, error) {
	empty := 0
	for round := 0; ; round++ {
		if round >= maxInputRounds {
			return nil, "", fmt.Errorf("the upstream still needed input after %d rounds of answers", maxInputRounds)
		}
		if !canAsk(s, ir) {
			return nil, "", ir
		}
		if len(ir.Requests) == 0 {
			if empty >= maxEmptyRounds {
				return nil, "", fmt.Errorf("the upstream asked for nothing %d times in a row", maxEmptyRounds)
			}
			select {
			case <-time.After(emptyRoundWait[empty]):
			case <-ctx.Done():
				return nil, "", ctx.Err()
			}
			empty++
		} else {
			empty = 0
		}
		answers, err := ask(ctx, s, ir.Requests)
		if err != nil {
			return nil, "", err
		}
		params["inputResponses"] = answers
		if ir.State != "" {
			params["requestState"] = ir.State
		} else {
			delete(params, "requestState")
		}
		raw, rtype, err := call()
		if next, ok := errors.AsType[*upstream.InputRequired](err); ok {
			ir = next
			continue
		}
		return raw, rtype, err
	}
}

// ask puts each input request to s at once and collects the answers by
// key; the first failure is the error.
func ask(ctx context.Context, s Session, reqs map[string]json.RawMessage) (map[string]json.RawMessage, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		mu      sync.Mutex
		wg      sync.WaitGroup
		answers = make(map[string]json.RawMessage, len(reqs))
		first   error
	)
	for key, raw := range reqs {
		var r struct {
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		}
		if err := json.Unmarshal(raw, &r); err != nil {
			return nil, fmt.Errorf("input request %q: %w", key, err)
		}
		if len(r.Params) == 0 {
			r.Params = json.RawMessage("{}")
		}
		wg.Go(func() {
			res, err := s.Request(ctx, r.Method, r.Params)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				if first == nil {
					first = fmt.Errorf("asking the client (%s for input request %q): %w", r.Method, key, err)
					cancel()
				}
				return
			}
			answers[key] = res
		})
	}
	wg.Wait()
	if first != nil {
		return nil, first
	}
	return answers, nil
}
