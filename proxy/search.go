package proxy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/scratchpad-mcp/scratchpad-mcp/tool"
	"github.com/scratchpad-mcp/scratchpad-mcp/toolsearch"
	"github.com/scratchpad-mcp/scratchpad-mcp/wire"
)

// The two tools search mode adds to the listing ([catalogue] mode =
// "search"): upstream tools are found with the first and run with the
// second, through the path a listed tool takes.
const (
	SearchToolName = "search_tools"
	CallToolName   = "call_tool"
)

// The bounds of their string arguments, stated in the schemas below and
// enforced by the handlers: a query is a sentence (toolsearch counts its
// first MaxQueryWords words, well under 1,000 characters); a name is an
// exposed tool name (a prefix of at most 64 characters, "__", and MCP's
// 128 for the upstream's own name). An answer repeats at most echoChars
// of either: what the model sent can be megabytes.
const (
	maxQueryChars = 1000
	maxNameChars  = 256
	echoChars     = 80
)

// searchDefs are their definitions as listed: short, since they are in
// the context every turn in place of the whole catalogue.
var searchDefs = []json.RawMessage{
	json.RawMessage(`{"name":"search_tools","description":"Find the upstream tools for a task: most are not listed. Answers the best matches as name(arguments) - description (? marks optional); run one with call_tool. Give describe a tool's name for its full input schema.","inputSchema":{"type":"object","properties":{"query":{"type":"string","description":"what you want to do, in your own words","maxLength":1000},"limit":{"type":"integer","minimum":1,"maximum":50,"default":5},"describe":{"type":"string","description":"a tool name: answer its full input schema","maxLength":256}}},"annotations":{"readOnlyHint":true}}`),
	json.RawMessage(`{"name":"call_tool","description":"Run an upstream tool found with search_tools. Its result is treated as if the tool were listed (large results are stored and pointed to).","inputSchema":{"type":"object","properties":{"name":{"type":"string","description":"the tool's name as search_tools gave it","maxLength":256},"arguments":{"type":"object","description":"the tool's arguments"}},"required":["name"]}}`),
}

// Searching reports whether the proxy is in search mode: the client is
// offered [Proxy.SearchDefs] and only some upstream tools are listed.
func (p *Proxy) Searching() bool { return p.opts.Search }

// SearchDefs returns the definitions of search_tools and call_tool, for
// the listing in search mode.
func (p *Proxy) SearchDefs() []json.RawMessage { return searchDefs }

// searchIndex indexes the exposed tools for search_tools.
func searchIndex(tools listing) *toolsearch.Index {
	list := make([]toolsearch.Tool, 0, len(tools.order))
	for _, name := range tools.order {
		rt := tools.byKey[name]
		var def struct {
			Description string          `json:"description"`
			InputSchema json.RawMessage `json:"inputSchema"`
		}
		_ = json.Unmarshal(rt.raw, &def)
		list = append(list, toolsearch.Tool{Name: name, Server: rt.up.Name(), Description: def.Description, InputSchema: def.InputSchema})
	}
	return toolsearch.NewIndex(list)
}

// SearchTools answers a search_tools call: the best matches of the query
// in one compact line each, or with describe one tool's whole
// definition. found names the tools the answer shows, which the session
// adds to its listing. The answer is charged to the caller's budget like
// any result.
//
// An MCP Apps host's model is never shown an app-only tool (one its page
// calls): search_tools neither finds nor describes one for it (apps.go).
func (p *Proxy) SearchTools(ctx context.Context, r *Request, args json.RawMessage) (res json.RawMessage, found []string) {
	res, found = p.searchTools(args, p.hiddenFromModel(r))
	r.charge(ctx, res)
	return res, found
}

func (p *Proxy) searchTools(args json.RawMessage, hidden func(*route) bool) (json.RawMessage, []string) {
	var a struct {
		Query    string `json:"query"`
		Limit    int    `json:"limit"`
		Describe string `json:"describe"`
	}
	if len(args) > 0 {
		if err := wire.Unmarshal(args, &a); err != nil {
			return ToolError(`search_tools: the arguments must be {"query": string, "limit": integer} or {"describe": "<tool name>"}: ` + err.Error()), nil
		}
	}
	if msg := tooLong("query", a.Query, maxQueryChars) + tooLong("describe", a.Describe, maxNameChars); msg != "" {
		return ToolError("search_tools: " + strings.TrimSpace(msg)), nil
	}
	s := p.cat.snapshot()
	ix := s.index
	if ix == nil || ix.Len() == 0 {
		return ToolError("search_tools: no upstream tools are available yet (servers may still be starting); try again shortly"), nil
	}
	if a.Describe != "" {
		rt := s.tools.byKey[a.Describe]
		if rt == nil || (hidden != nil && hidden(rt)) {
			return p.unknown(ix, a.Describe, "search_tools describe"), nil
		}
		return textResult(string(rt.raw)), []string{a.Describe}
	}
	q := strings.TrimSpace(a.Query)
	if q == "" {
		return ToolError(`search_tools: give a query (what you want to do, e.g. {"query": "list open pull requests"}) or describe (a tool name)`), nil
	}
	limit := a.Limit
	if limit <= 0 {
		limit = toolsearch.DefaultLimit
	}
	limit = min(limit, toolsearch.MaxLimit)
	var hits []toolsearch.Hit
	if hidden == nil {
		hits = ix.Search(q, limit)
	} else {
		// Searched for the most, so that hidden tools leave room for
		// others.
		hits = slices.DeleteFunc(ix.Search(q, toolsearch.MaxLimit), func(h toolsearch.Hit) bool {
			rt := s.tools.byKey[h.Name]
			return rt != nil && hidden(rt)
		})
		hits = hits[:min(len(hits), limit)]
	}
	if len(hits) == 0 {
		return textResult(fmt.Sprintf("no tool matches %q among %d tools; try other words (what the tool does, or the service: %s)", tool.Clip(q, echoChars), ix.Len(), strings.Join(servers(ix), ", "))), nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d of %d tools for %q; run one with call_tool {\"name\": ..., \"arguments\": {...}}:\n", len(hits), ix.Len(), tool.Clip(q, echoChars))
	b.WriteString(ix.Format(hits))
	found := make([]string, len(hits))
	for i, h := range hits {
		found[i] = h.Name
	}
	return textResult(strings.TrimRight(b.String(), "\n")), found
}

// CallToolTarget reads a call_tool call's arguments: the upstream tool to
// run and its arguments. When the call cannot run (bad arguments, an
// unknown or misspelt name) errRes is the tool error to answer, charged,
// with the closest names ready to run.
func (p *Proxy) CallToolTarget(ctx context.Context, r *Request, args json.RawMessage) (name string, toolArgs json.RawMessage, errRes json.RawMessage) {
	var a struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	if err := wire.Unmarshal(args, &a); errors.Is(err, wire.ErrDuplicateKey) || errors.Is(err, wire.ErrKeyCase) {
		// A name that a check reading it exactly and a decoder folding
		// case would see differently: never guessed.
		errRes = ToolError(fmt.Sprintf(`call_tool: %v; the arguments must be {"name": "<tool name from search_tools>", "arguments": {...}}`, err))
	} else if err != nil || a.Name == "" {
		errRes = ToolError(`call_tool: the arguments must be {"name": "<tool name from search_tools>", "arguments": {...}}`)
	} else if msg := tooLong("name", a.Name, maxNameChars); msg != "" {
		errRes = ToolError("call_tool: " + strings.TrimSpace(msg))
	} else if t := strings.TrimSpace(string(a.Arguments)); t != "" && t != "null" && !strings.HasPrefix(t, "{") {
		errRes = ToolError(fmt.Sprintf("call_tool: arguments must be a JSON object (the tool's arguments), not %s", tool.Clip(t, echoChars)))
	} else if !p.HasTool(a.Name) {
		s := p.cat.snapshot()
		if s.index == nil {
			errRes = ToolError(fmt.Sprintf("call_tool: no upstream tool %q (no upstream tools are available yet)", tool.Clip(a.Name, echoChars)))
		} else {
			errRes = p.unknown(s.index, a.Name, "call_tool")
		}
	}
	if errRes != nil {
		r.charge(ctx, errRes)
		return "", nil, errRes
	}
	if t := strings.TrimSpace(string(a.Arguments)); t == "null" {
		a.Arguments = nil
	}
	return a.Name, a.Arguments, nil
}

// unknown is the error for a tool name no upstream exposes, with the
// closest names, each as a line ready to call.
func (p *Proxy) unknown(ix *toolsearch.Index, name, what string) json.RawMessage {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: no tool %q.", what, tool.Clip(name, echoChars))
	if close := ix.Closest(name, 3); len(close) > 0 {
		b.WriteString(" Closest, ready to run with call_tool:")
		for _, c := range close {
			if i, ok := ix.Lookup(c); ok {
				b.WriteString("\n")
				b.WriteString(toolsearch.FormatLine(ix.Tool(i)))
			}
		}
	} else {
		b.WriteString(" Find one with search_tools.")
	}
	return ToolError(b.String())
}

// servers lists the servers of an index's tools, in order, once each.
func servers(ix *toolsearch.Index) []string {
	var out []string
	seen := map[string]bool{}
	for i := range ix.Len() {
		if s := ix.Tool(i).Server; !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// textResult is a tools/call result with one text block.
func textResult(s string) json.RawMessage {
	b, _ := json.Marshal(map[string]any{"content": []map[string]any{{"type": "text", "text": s}}})
	return b
}

// tooLong says that the argument name is longer than max characters,
// or "" when it is not; a value of n bytes has at most n characters, so
// only a long one is counted.
func tooLong(name, v string, max int) string {
	if len(v) <= max {
		return ""
	}
	if n := utf8.RuneCountInString(v); n > max {
		return fmt.Sprintf("%s must be at most %d characters, not %d. ", name, max, n)
	}
	return ""
}
