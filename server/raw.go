package server

import (
	"bytes"
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scratchpad-mcp/scratchpad-mcp/internal/jsonscan"
)

// Raw results: what an upstream answered, sent to the client as the bytes
// it sent. go-sdk's method handlers return [mcp.Result], an interface
// only its own types satisfy, so each raw result embeds the go-sdk type
// of its method (which satisfies the interface and takes what go-sdk sets
// on a result afterwards: the 2026-07-28 protocol's resultType and
// serverInfo _meta) and marshals as the upstream's bytes with those
// additions spliced in.

type rawCallTool struct {
	mcp.CallToolResult
	raw  json.RawMessage
	wire *rawWire // the connection's raw wire; nil over legacy SSE
}

func (r *rawCallTool) MarshalJSON() ([]byte, error) {
	if r.wire != nil {
		if extra, err := json.Marshal(&r.CallToolResult); err == nil && !spliced(extra) {
			return r.wire.put(r.raw), nil
		}
	}
	return splice(r.raw, &r.CallToolResult)
}

type rawListTools struct {
	mcp.ListToolsResult
	raw json.RawMessage
}

func (r *rawListTools) MarshalJSON() ([]byte, error) { return splice(r.raw, &r.ListToolsResult) }

type rawListResources struct {
	mcp.ListResourcesResult
	raw json.RawMessage
}

func (r *rawListResources) MarshalJSON() ([]byte, error) {
	return splice(r.raw, &r.ListResourcesResult)
}

type rawListTemplates struct {
	mcp.ListResourceTemplatesResult
	raw json.RawMessage
}

func (r *rawListTemplates) MarshalJSON() ([]byte, error) {
	return splice(r.raw, &r.ListResourceTemplatesResult)
}

type rawListPrompts struct {
	mcp.ListPromptsResult
	raw json.RawMessage
}

func (r *rawListPrompts) MarshalJSON() ([]byte, error) { return splice(r.raw, &r.ListPromptsResult) }

type rawReadResource struct {
	mcp.ReadResourceResult
	raw json.RawMessage
}

func (r *rawReadResource) MarshalJSON() ([]byte, error) {
	return splice(r.raw, &r.ReadResourceResult)
}

type rawGetPrompt struct {
	mcp.GetPromptResult
	raw json.RawMessage
}

func (r *rawGetPrompt) MarshalJSON() ([]byte, error) { return splice(r.raw, &r.GetPromptResult) }

type rawComplete struct {
	mcp.CompleteResult
	raw json.RawMessage
}

func (r *rawComplete) MarshalJSON() ([]byte, error) { return splice(r.raw, &r.CompleteResult) }

// splice returns raw with what go-sdk set on the embedded result after
// the handler returned — "resultType" and "_meta" keys — added. Usually
// nothing was set and raw is returned as it is.
func splice(raw json.RawMessage, set any) ([]byte, error) {
	extra, err := json.Marshal(set)
	if err != nil {
		return nil, err
	}
	if !spliced(extra) {
		return raw, nil
	}
	rt, hasRT := jsonscan.Lookup(extra, "resultType")
	meta, hasMeta := jsonscan.Lookup(extra, "_meta")
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	if hasRT {
		if _, ok := m["resultType"]; !ok {
			m["resultType"] = json.RawMessage(rt)
		}
	}
	if hasMeta && (meta[0] == '{' || meta[0] == '[') {
		var add, have map[string]json.RawMessage
		_ = json.Unmarshal(meta, &add)
		if cur, ok := m["_meta"]; ok && !bytes.Equal(cur, []byte("null")) {
			_ = json.Unmarshal(cur, &have)
		}
		if have == nil {
			have = map[string]json.RawMessage{}
		}
		for k, v := range add {
			if _, ok := have[k]; !ok {
				have[k] = v
			}
		}
		m["_meta"], _ = json.Marshal(have)
	}
	return json.Marshal(m)
}

// spliced reports whether go-sdk set anything on a result (its own
// marshalling, extra) that [splice] must add to the upstream's bytes.
func spliced(extra []byte) bool {
	_, hasRT := jsonscan.Lookup(extra, "resultType")
	meta, hasMeta := jsonscan.Lookup(extra, "_meta")
	return hasRT || hasMeta && string(meta) != "{}" && string(meta) != "null"
}

// listJSON builds {"<key>": [own..., upstream...]} from the go-sdk
// typed own items and the upstreams' raw ones.
func listJSON(key string, own any, ups []json.RawMessage) (json.RawMessage, error) {
	ownRaw, err := json.Marshal(own)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	b.WriteString(`{"`)
	b.WriteString(key)
	b.WriteString(`":[`)
	n := 0
	if len(ownRaw) > 2 && ownRaw[0] == '[' { // "[...]" without the brackets
		b.Write(ownRaw[1 : len(ownRaw)-1])
		n++
	}
	for _, r := range ups {
		if n > 0 {
			b.WriteByte(',')
		}
		b.Write(r)
		n++
	}
	b.WriteString("]}")
	return b.Bytes(), nil
}
