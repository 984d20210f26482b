package proxy

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/scratchpad-mcp/scratchpad-mcp/config"
	"github.com/scratchpad-mcp/scratchpad-mcp/divert"
	"github.com/scratchpad-mcp/scratchpad-mcp/internal/jsonscan"
)

// The divert stage for what is not a tool's result: a resources/read and
// a prompts/get result is diverted as a tool's is, by the threshold its
// server's [mcp.servers.X.scratchpad] gives the method's name
// ("resources/read", "prompts/get", or a pattern matching them such as
// "*": no tool name holds a '/'), and when it does not fit the agent's
// budget left. Its text (the contents' or the messages' text, one after
// the other) is what is counted and stored; the answer keeps its kind's
// shape, the pointer as its one text.

// Method names the thresholds of resources and prompts are looked up by.
const (
	ResourceThresholdName = "resources/read"
	PromptThresholdName   = "prompts/get"
)

// divertOther is raw (a resources/read or prompts/get result, already
// masked) as the client gets it: raw itself (charged to the agent's
// budget), or its kind's pointer (diverted true). appOnly says the model
// never reads it (an MCP Apps page read by its host, apps.go): passed
// whole and not charged.
func (p *Proxy) divertOther(ctx context.Context, r *Request, sc *config.Server, method, name string, raw json.RawMessage, appOnly bool) (_ json.RawMessage, diverted bool) {
	agent := r.agent()
	if appOnly || agent == nil {
		return raw, false // never the model's, or no one's to charge
	}
	spans := textItems(raw)
	if len(spans) == 0 {
		return raw, false
	}
	threshold, ok := sc.Threshold(method)
	if !ok {
		threshold = 0 // only the budget left diverts it
	}
	var text strings.Builder
	for i, s := range spans {
		if i > 0 {
			text.WriteByte('\n')
		}
		text.WriteString(jsonscan.Unquote(raw[s.start:s.end]))
	}
	synthetic, _ := json.Marshal(map[string]any{"content": []map[string]string{{"type": "text", "text": text.String()}}})
	out, err := divert.Decide(divert.Call{Server: sc.Name, Tool: name, Threshold: threshold, Result: synthetic, Owned: true, Valid: true},
		agent, divert.Options{ExactCountLimit: p.opts.ExactCountLimit, Logger: p.log})
	if err != nil {
		return raw, false
	}
	r.chargedBy(out)
	if !out.Diverted {
		// What the model reads of it is its text, as counted.
		r.charge(ctx, synthetic)
		return raw, false
	}
	var ptr struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
		Meta json.RawMessage `json:"_meta"`
	}
	if json.Unmarshal(out.Result, &ptr) != nil || len(ptr.Content) == 0 {
		return raw, false
	}
	var res map[string]any
	if method == ResourceThresholdName {
		res = map[string]any{"contents": []map[string]any{{"uri": name, "mimeType": "text/plain", "text": ptr.Content[0].Text}}}
	} else {
		res = map[string]any{"messages": []map[string]any{{"role": "user", "content": map[string]string{"type": "text", "text": ptr.Content[0].Text}}}}
		if d, ok := jsonscan.Lookup(raw, "description"); ok {
			res["description"] = json.RawMessage(d)
		}
	}
	if len(ptr.Meta) > 0 {
		res["_meta"] = ptr.Meta
	}
	b, err := json.Marshal(res)
	if err != nil {
		return raw, false
	}
	return b, true
}

// IsDiverted reports whether raw is a pointer the proxy answered in
// place of a result (its _meta names the stored file).
func IsDiverted(raw []byte) bool {
	meta, ok := jsonscan.Lookup(raw, "_meta")
	if !ok {
		return false
	}
	_, ok = jsonscan.Lookup(meta, divert.MetaKey)
	return ok
}
