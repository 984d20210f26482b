package divert

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"path/filepath"
	"time"

	"github.com/scratchpad-mcp/scratchpad-mcp/memdir"
)

// Counter counts tokens; *tokens.Counter satisfies it.
type Counter interface {
	Count(b []byte) int
	AtLeast(b []byte, n int) bool
}

// Agent is what diverting needs to know about the calling agent.
type Agent struct {
	Enabled bool   // [agent.scratchpad] enabled: false passes every result through
	Dir     string // where this agent's diverted outputs are stored
	// Top is the tree Dir is in (memory_dir): nothing is written outside
	// it, whatever links are planted on the way to Dir (see package
	// memdir). "" means Dir itself.
	Top     string
	Counter Counter // the agent's model's tokens
	// Account is the agent's budget, usage record and retention, which
	// a divert reports to and asks ([Account]). nil: nothing is charged,
	// counted or kept, and no budget bounds what passes.
	Account Account
	// Structured says the client shows the model a result's
	// structuredContent when it has one, instead of its text ([agent.scratchpad]
	// result_view = "structured"): that is then what is counted and stored.
	Structured bool
	// Blobs, when set, is told every stored file (its bytes, named by
	// its slash path under Top) before the pointer is returned, so that
	// other replicas sharing the store can read it (a state.Store in
	// replica mode). An error fails the divert as a failed save does:
	// a pointer other replicas cannot follow is not returned.
	Blobs BlobPutter
	// BlobTTL is how long Blobs keeps a file; 0 means no expiry.
	BlobTTL time.Duration
}

// BlobPutter is where [Decide] shares stored files; package state's
// stores are ones.
type BlobPutter interface {
	PutBlob(ctx context.Context, name string, data []byte, ttl time.Duration) error
}

// ErrRefused is matched (errors.Is) by a [BlobPutter]'s error that
// refuses a file rather than fails to share it (an owner at its bound of
// stored data): the model is told why, not to call again once the store
// answers.
var ErrRefused = errors.New("storing the output was refused")

// Call is one tools/call result to decide on.
type Call struct {
	Server, Tool string
	// Threshold is the tokens at or above which the result is diverted;
	// 0 means none (only the budget left can divert it).
	Threshold int
	Result    json.RawMessage // the upstream's raw tools/call result
	// Owned says the caller gives Result's bytes away: when diverting,
	// Decide may write over them (the text is unescaped in place instead
	// of into a copy the size of the output).
	Owned bool
	// Valid says Result is known to be valid JSON (the upstream client
	// validates every message it reads), so Decide does not validate it
	// again.
	Valid bool
	// Stage, when not nil, is told what diverting does now ("storing
	// 20,971,520 bytes", …), for progress notifications.
	Stage func(string)
	// Secrets is what redaction found in Result (already masked in it,
	// unless Kept): the pointer says so.
	Secrets Secrets
	// SchemaListed says the tool's outputSchema is listed: a pointer that
	// keeps no structuredContent is then an error result, as a client
	// checking the schema wants.
	SchemaListed bool
	// Asked says the call asked for its result to be stored whatever its
	// size ({"$scratchpad": {"store": true}}): Threshold is then 1, and
	// the pointer says it was asked.
	Asked bool
	// AppOnly says the result goes to an MCP App's page only: the caller
	// is a host that hides the tool from its model. It passes whole,
	// never diverted and never charged, whatever the agent's settings.
	AppOnly bool
	// KeepStructured, when > 0, is the most bytes of structuredContent a
	// pointer keeps (a tool with an MCP Apps page: the host hands the
	// page the result's structuredContent and the model its content), so
	// that the page still renders and the tool's outputSchema still
	// holds. 0 keeps none; so does a client that shows the model
	// structuredContent (Agent.Structured).
	KeepStructured int
}

// Options tune [Decide]; the zero value is the default.
type Options struct {
	// ExactCountLimit is the output size in bytes up to which the pointer
	// waits for the exact token count; larger outputs get an estimate from
	// their first MiB and are counted exactly in the background, read
	// back from the stored file (or counted now when it cannot give back
	// what was saved: JSON laid out otherwise than compact, indented as
	// stored, or with Python's separators). 0 means 4 MiB.
	ExactCountLimit int
	Logger          *slog.Logger
}

// Outcome is what [Decide] did.
type Outcome struct {
	// Result is the tools/call result to send: the upstream's bytes
	// unchanged, or the pointer result.
	Result   json.RawMessage
	Diverted bool
	// Charged says the agent's account was told the cost of Result already (see
	// [Charge]), or that it has none (an app-only result): the caller
	// must not charge it.
	Charged bool
	Pointer Pointer // when Diverted
}

// ErrInvalidResult means the upstream's tools/call result is not a JSON
// object of the shape MCP defines.
var ErrInvalidResult = fmt.Errorf("invalid tools/call result")

// unreadFrom is the size above which a result that cannot reach its
// threshold is not read.
const unreadFrom = 1 << 20

// reaches reports whether what the model reads of v (its text, or its
// structured content when it has no text: see [modelView.textOnly]) is at
// least n tokens, unescaping no more of the text than it must: a prefix of
// the text usually settles it (a prefix has no more tokens than the
// whole).
func reaches(v modelView, c Counter, n int) bool {
	if !v.textOnly() {
		return c.AtLeast(v.structured, n)
	}
	bound := v.textBound()
	// No more tokens than bytes (3 for an ill-formed one, 1.1 times for
	// the Anthropic approximation), as AtLeast itself would say, without
	// unescaping anything.
	if 4*bound < n {
		return false
	}
	if probe := max(1<<20, 8*n); probe < bound {
		if c.AtLeast(v.text(probe, false), n) {
			return true
		}
	}
	return c.AtLeast(v.text(-1, false), n)
}

// estimatePrefix is how much of a big text [fitsByEstimate] counts.
const estimatePrefix = 256 << 10

// fitsByEstimate reports whether a big text's tokens, extrapolated from
// its first 256 KiB, are under half of n: a budget's margin wide enough
// that no text of that prefix's kind reaches n, without counting it whole
// before the answer is sent.
func fitsByEstimate(v modelView, c Counter, n int) bool {
	bound := v.textBound()
	prefix := v.text(estimatePrefix, false)
	if len(prefix) == 0 || bound <= 0 {
		return false
	}
	est := float64(c.Count(prefix)) * float64(bound) / float64(len(prefix))
	return 2*est < float64(n)
}

// Decide passes c.Result through unchanged or, when what the model would
// read of it reaches c.Threshold tokens, saves it under a.Dir and returns a
// pointer result instead. Results that are errors or carry images or audio
// always pass through. A save that fails returns an error result (isError)
// that says why; nothing is left half-written.
func Decide(c Call, a *Agent, opts Options) (Outcome, error) {
	if c.AppOnly {
		// The model never reads it: nothing to divert, nothing to charge.
		return Outcome{Result: c.Result, Charged: true}, nil
	}
	pass := Outcome{Result: c.Result}
	if a == nil || !a.Enabled {
		return pass, nil
	}
	// The budget left is a threshold too: what does not fit it is
	// diverted (c.Threshold becomes the tokens at or above which it is).
	threshold, overBudget := c.Threshold, false
	if threshold <= 0 {
		threshold = math.MaxInt
	}
	if left := a.left(); left >= 0 && left < threshold-1 {
		threshold, overBudget = left+1, true
	}
	if threshold == math.MaxInt {
		return pass, nil
	}
	c.Threshold = threshold
	// A big result with too few bytes to reach the threshold whatever
	// they hold (see reaches) is passed on unread: under a threshold set
	// above it, it would otherwise be scanned end to end for nothing while
	// the client waits. A small one is still read (it costs little), so
	// that one MCP does not define is refused with a reason.
	if len(c.Result) > unreadFrom && 4*len(c.Result) < c.Threshold && bytes.HasPrefix(bytes.TrimLeft(c.Result, " \t\r\n"), []byte("{")) {
		return pass, nil
	}
	v, err := view(c.Result, c.Valid)
	if err != nil {
		return pass, err
	}
	v.preferStructured = a.Structured
	if v.isError || !v.divertable {
		return pass, nil
	}
	stage := c.Stage
	if stage == nil {
		stage = func(string) {}
	}
	stage("checking the output against the threshold")
	// A text small enough to count whole now is counted once: that one
	// figure decides the threshold, and is what the model is charged
	// when it passes (or what the pointer says when it does not).
	counted := -1
	if v.textOnly() && v.textBound() <= chargeNowLimit {
		counted = a.Counter.Count(v.text(-1, false))
		if counted < c.Threshold {
			pass.Charged = a.charge(counted)
			return pass, nil
		}
	} else if overBudget && v.textOnly() && fitsByEstimate(v, a.Counter, c.Threshold) {
		// Only the budget could divert it, and its start says it is far
		// under what is left: passed on without counting it whole
		// now (its exact charge is counted once it was sent, Charge).
		return pass, nil
	} else if !reaches(v, a.Counter, c.Threshold) {
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
	// What is stored: the text, unescaped once (over the result's own
	// bytes when the caller gave them away), or the structured content.
	var text []byte
	payload := v.structured
	// What the pointer keeps for an app's page, copied before the text
	// may be unescaped over the result's bytes.
	var kept json.RawMessage
	keep := c.KeepStructured > 0 && !a.Structured && v.structured != nil
	if keep && len(v.structured) <= c.KeepStructured {
		kept = bytes.Clone(v.structured)
	}
	if v.textOnly() {
		text = v.text(-1, c.Owned)
		payload = text
	}
	if acc := a.account(); acc != nil {
		if err := acc.Reserve(int64(len(payload))); err != nil {
			log.Warn("output not diverted: storing it was refused", "server", c.Server, "tool", c.Tool, "error", err)
			return Outcome{Result: errorResult(fmt.Sprintf("The output of %s (%s bytes, at or above the %s-token threshold) was not stored, so it was not returned either: %v.",
				c.Tool, commas(len(payload)), commas(c.Threshold), err))}, nil
		}
	}
	stage(fmt.Sprintf("storing %s bytes", commas(len(payload))))
	d, err := memdir.In(a.Top, a.Dir)
	var st Stored
	if err == nil {
		st, err = Save(d, c.Server, c.Tool, payload)
	}
	if err == nil && a.Blobs != nil {
		stage(fmt.Sprintf("stored %s bytes; sharing them with the other replicas", commas(len(payload))))
		if err = shareStored(a, d, st); errors.Is(err, ErrRefused) {
			log.Warn("output not diverted: sharing it was refused", "server", c.Server, "tool", c.Tool, "error", err)
			return Outcome{Result: errorResult(fmt.Sprintf("The output of %s (%s bytes, at or above the %s-token threshold) was not stored, so it was not returned either: %v.",
				c.Tool, commas(len(payload)), commas(c.Threshold), err))}, nil
		}
		if err != nil {
			log.Error("sharing a diverted output failed", "server", c.Server, "tool", c.Tool, "file", st.Name, "error", err)
			if !st.Reused {
				// Nothing half-written: a file no pointer names and the
				// other replicas cannot see is not left behind.
				_ = d.Remove(st.Name)
			}
			msg := fmt.Sprintf("The output of %s (%s bytes, at or above the %s-token threshold) could not be shared with the other replicas, so it was neither stored nor returned: %v. Call the tool again once the shared store answers.",
				c.Tool, commas(len(payload)), commas(c.Threshold), err)
			return Outcome{Result: errorResult(msg)}, nil
		}
	}
	if err != nil {
		log.Error("diverting output failed", "server", c.Server, "tool", c.Tool, "error", err)
		msg := fmt.Sprintf("The output of %s (%s bytes, at or above the %s-token threshold) could not be saved to the scratchpad, so it was not returned either: %v. Free disk space or fix memory_dir, then call the tool again.",
			c.Tool, commas(len(payload)), commas(c.Threshold), err)
		return Outcome{Result: errorResult(msg)}, nil
	}
	if acc := a.account(); acc != nil {
		acc.Stored(st.Path)
	}
	p := Pointer{Server: c.Server, Tool: c.Tool, Stored: st, Threshold: c.Threshold, OverBudget: overBudget, Asked: c.Asked, Secrets: c.Secrets}
	if sec := &p.Secrets; sec.Kept && sec.Total > 0 && sec.Where != nil {
		if f, err := st.dir.Open(st.Name); err == nil {
			sec.places = sec.Where(f)
			_ = f.Close()
		}
	}
	stage(fmt.Sprintf("stored %s bytes as %s; counting their tokens", commas(len(payload)), st.Name))
	// What the model would have read is what was stored: the figure the
	// threshold was checked against, counted to the end.
	size := len(payload)
	sc, streams := a.Counter.(streamCounter)
	var saved io.ReadCloser
	if size > limit && streams {
		saved, streams = st.open()
	}
	if size <= limit || !streams {
		// Small, or the saved bytes cannot be read back (JSON in a layout
		// of its own): counted now, exactly.
		if size > 0 {
			p.Tokens = counted
			if counted < 0 {
				p.Tokens = a.Counter.Count(payload)
			}
		}
		a.intercepted(p.Tokens)
	} else {
		// Estimated from the first 1 MiB of what was saved, so that the
		// reply is not held; counted exactly in the background, from the
		// file, so that the output is not held either. The session's end
		// waits for that count (Track), so its usage record is exact.
		prefix := payload[:min(len(payload), 1<<20)]
		if len(prefix) > 0 {
			p.Tokens = int(float64(a.Counter.Count(prefix)) * float64(len(payload)) / float64(len(prefix)))
		}
		p.Estimated = true
		// Started once the pointer is made (deferred), so that its own
		// last steps do not share the cores with the count.
		done, estimate := a.track(), p.Tokens
		defer func() {
			go func() {
				defer done()
				countSaved(saved, sc, estimate, a.intercepted, log.With("server", c.Server, "tool", c.Tool, "file", st.Name))
			}()
		}()
	}
	elapsed := time.Since(start)
	log.Info("intercepted", "server", c.Server, "tool", c.Tool, "tokens", p.Tokens, "estimated", p.Estimated, "file", st.Name, "bytes", st.Bytes, "elapsed", elapsed.String())
	meta := map[string]any{
		"file": st.Name, "format": st.Format, "tokens": p.Tokens, "estimated": p.Estimated,
		"bytes": st.Bytes, "lines": st.Lines, "threshold": c.Threshold, "over_budget": overBudget, "asked": c.Asked, "server": c.Server, "tool": c.Tool,
		"elapsed_ms": float64(elapsed.Microseconds()) / 1000,
	}
	if keep {
		// For programs (and tests): whether the page got its data.
		meta["structured_kept"] = kept != nil
	}
	if sec := c.Secrets; sec.Total > 0 || sec.Unscanned != "" {
		m := map[string]any{"total": sec.Total, "counts": sec.Counts, "kept": sec.Kept}
		if sec.Unscanned != "" {
			m["unscanned"] = sec.Unscanned
		}
		meta["secrets"] = m
	}
	res, err := json.Marshal(pointerResult{
		Content: []textContent{{Type: "text", Text: p.Text(payload)}},
		Meta:    map[string]any{MetaKey: meta},
		// A tool whose output schema is listed owes structuredContent
		// to a result that is not an error.
		IsError: c.SchemaListed && kept == nil,
	})
	if err != nil {
		return pass, err
	}
	if kept != nil {
		// Spliced in as the upstream wrote it (encoding/json would
		// re-escape it).
		res = append(append(append(res[:len(res)-1:len(res)-1], `,"structuredContent":`...), kept...), '}')
	}
	out := Outcome{Result: res, Diverted: true, Pointer: p}
	if a.account() != nil {
		out.Charged = a.charge(a.cost(res, true)) // the pointer is what the model reads
	}
	return out, nil
}

// streamCounter is a [Counter] that counts a stream without holding it;
// *tokens.Counter is one.
type streamCounter interface {
	CountReader(r io.Reader) (int, error)
}

// countSaved counts a diverted output read back from its file and reports
// it; on a read error it reports the estimate.
func countSaved(saved io.ReadCloser, sc streamCounter, estimate int, report func(int), log *slog.Logger) {
	defer saved.Close()
	n, err := sc.CountReader(saved)
	if err != nil {
		log.Warn("exact token count of a diverted output failed; the estimate is kept", "error", err, "estimate", estimate)
		n = estimate
	}
	if report != nil {
		report(n)
	}
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

// shareStored puts the stored file, as written, in a.Blobs under its slash
// path relative to memory_dir (a.Top, or Dir when Top is "").
func shareStored(a *Agent, d memdir.Dir, st Stored) error {
	data, err := d.ReadFile(st.Name)
	if err != nil {
		return fmt.Errorf("read the stored file back to share it: %w", err)
	}
	rel, err := filepath.Rel(d.Top(), st.Path)
	if err != nil {
		return fmt.Errorf("share the stored file: %w", err)
	}
	// Decide has no context; the store bounds each command itself.
	if err := a.Blobs.PutBlob(context.Background(), filepath.ToSlash(rel), data, a.BlobTTL); err != nil {
		return fmt.Errorf("share the stored file with the other replicas: %w", err)
	}
	return nil
}
