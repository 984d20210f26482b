package divert

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"time"
)

// Counter counts tokens; *tokens.Counter satisfies it.
type Counter interface {
	Count(b []byte) int
	AtLeast(b []byte, n int) bool
}

// Agent is what diverting needs to know about the calling agent.
type Agent struct {
	Enabled bool    // [agent.scratchpad] enabled: false passes every result through
	Dir     string  // where this agent's diverted outputs are stored
	Counter Counter // the agent's model's tokens
	// OnIntercept is called once per diverted output with its exact token
	// count, possibly after the pointer was returned (large outputs are
	// counted to the end in the background). May be nil.
	OnIntercept func(tokens int)
}

// Call is one tools/call result to decide on.
type Call struct {
	Server, Tool string
	Threshold    int             // tokens at or above which the result is diverted
	Result       json.RawMessage // the upstream's raw tools/call result
	// Stage, when not nil, is told what diverting does now ("counting
	// tokens", "writing file"), for progress notifications.
	Stage func(string)
}

// Options tune [Decide]; the zero value is the default.
type Options struct {
	// ExactCountLimit is the output size in bytes up to which the pointer
	// waits for the exact token count; larger outputs get an estimate from
	// their first MiB and are counted exactly in the background. 0 means
	// 4 MiB.
	ExactCountLimit int
	Logger          *slog.Logger
}

// Outcome is what [Decide] did.
type Outcome struct {
	// Result is the tools/call result to send: the upstream's bytes
	// unchanged, or the pointer result.
	Result   json.RawMessage
	Diverted bool
	Pointer  Pointer // when Diverted
}

// ErrInvalidResult means the upstream's tools/call result is not a JSON
// object of the shape MCP defines.
var ErrInvalidResult = fmt.Errorf("invalid tools/call result")

// Decide passes c.Result through unchanged or, when what the model would
// read of it reaches c.Threshold tokens, saves it under a.Dir and returns a
// pointer result instead. Results that are errors or carry images or audio
// always pass through. A save that fails returns an error result (isError)
// that says why; nothing is left half-written.
func Decide(c Call, a *Agent, opts Options) (Outcome, error) {
	pass := Outcome{Result: c.Result}
	if a == nil || !a.Enabled {
		return pass, nil
	}
	v, err := view(c.Result)
	if err != nil {
		return pass, err
	}
	if v.isError || !v.divertable {
		return pass, nil
	}
	stage := c.Stage
	if stage == nil {
		stage = func(string) {}
	}
	stage("counting tokens")
	if !a.Counter.AtLeast(v.visible, c.Threshold) {
		return pass, nil
	}
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	limit := opts.ExactCountLimit
	if limit == 0 {
		limit = 4 << 20
	}
	start := time.Now()
	stage("writing file")
	st, err := Save(a.Dir, c.Server, c.Tool, v.payload)
	if err != nil {
		log.Error("diverting output failed", "server", c.Server, "tool", c.Tool, "error", err)
		msg := fmt.Sprintf("The output of %s (%s bytes, at or above the %s-token threshold) could not be saved to the scratchpad, so it was not returned either: %v. Free disk space or fix memory_dir, then call the tool again.",
			c.Tool, commas(len(v.payload)), commas(c.Threshold), err)
		return Outcome{Result: errorResult(msg)}, nil
	}
	p := Pointer{Server: c.Server, Tool: c.Tool, Stored: st, Threshold: c.Threshold}
	stage("counting tokens")
	if len(v.visible) <= limit {
		p.Tokens = a.Counter.Count(v.visible)
		if a.OnIntercept != nil {
			a.OnIntercept(p.Tokens)
		}
	} else {
		// Estimate from the first 1 MiB; count the whole in the background
		// for the budget so the reply is not held.
		prefix := v.visible[:1<<20]
		p.Tokens = int(float64(a.Counter.Count(prefix)) * float64(len(v.visible)) / float64(len(prefix)))
		p.Estimated = true
		visible := v.visible
		go func() {
			n := a.Counter.Count(visible)
			if a.OnIntercept != nil {
				a.OnIntercept(n)
			}
		}()
	}
	elapsed := time.Since(start)
	log.Info("intercepted", "server", c.Server, "tool", c.Tool, "tokens", p.Tokens, "estimated", p.Estimated, "file", st.Name, "bytes", st.Bytes, "elapsed", elapsed.String())
	res, err := json.Marshal(pointerResult{
		Content: []textContent{{Type: "text", Text: p.Text(v.payload)}},
		Meta: map[string]any{MetaKey: map[string]any{
			"file": st.Name, "format": st.Format, "tokens": p.Tokens, "estimated": p.Estimated,
			"bytes": st.Bytes, "lines": st.Lines, "threshold": c.Threshold, "server": c.Server, "tool": c.Tool,
			"elapsed_ms": float64(elapsed.Microseconds()) / 1000,
		}},
	})
	if err != nil {
		return pass, err
	}
	return Outcome{Result: res, Diverted: true, Pointer: p}, nil
}

// MetaKey is the _meta key of a pointer result that describes the
// diverted output for programs (file, format, tokens, bytes, lines…).
const MetaKey = "scratchpad/diverted"

type textContent struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type pointerResult struct {
	Meta    map[string]any `json:"_meta,omitempty"`
	Content []textContent  `json:"content"`
	IsError bool           `json:"isError,omitempty"`
}

// errorResult is a tools/call result that reports a failure to the model.
func errorResult(msg string) json.RawMessage {
	b, _ := json.Marshal(pointerResult{Content: []textContent{{Type: "text", Text: msg}}, IsError: true})
	return b
}
