package proxy

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/scratchpad-mcp/scratchpad-mcp/internal/jsonscan"
	"github.com/scratchpad-mcp/scratchpad-mcp/reference"
	"github.com/scratchpad-mcp/scratchpad-mcp/telemetry"
)

// The stage before forward, for tools/call (and call_tool in search mode,
// which goes the same path) in both eras: references to the calling
// agent's stored outputs ({"$scratchpad": {"file": …}}, package
// reference) are replaced by what they name, the call's own options
// ({"$scratchpad": {"store": true}} at the top) are taken out, and the
// result is checked against the tool's listed input schema. A reference
// that cannot be resolved answers the call with a tool error and the
// upstream is not called.

// resolveReferences is args with their references resolved and the
// call's options, or the result to answer with instead (errRes), or ctx's
// error.
func (p *Proxy) resolveReferences(ctx context.Context, r *Request, rt *route, args json.RawMessage) (_ json.RawMessage, _ reference.Options, errRes json.RawMessage, err error) {
	if r == nil || r.References == nil || !reference.Maybe(args) {
		return args, reference.Options{}, nil, nil
	}
	env := r.References
	cfg := rt.up.Config()
	var schema *reference.Schema
	if in, ok := jsonscan.Lookup(rt.raw, "inputSchema"); ok {
		schema = p.schemas.Of(in)
	}
	res, err := reference.Resolve(ctx, env, reference.Call{Args: args, Schema: schema, KeepSecrets: cfg.SecretsByReference})
	if err != nil {
		e, ok := errors.AsType[*reference.Error](err)
		if !ok {
			return nil, reference.Options{}, nil, err // the call ended
		}
		p.log.Info("tools/call refused before it was sent: a reference did not resolve", "server", cfg.Name, "tool", rt.orig, "error", e.Code, "at", e.At)
		return nil, reference.Options{}, referenceError(e), nil
	}
	if len(res.Refs) > 0 {
		files := res.Files()
		p.log.Info("references resolved", "server", cfg.Name, "tool", rt.orig, "files", files, "bytes", res.Bytes, "tokens", res.Tokens, "masked", len(res.Masked) > 0)
		if tel := p.opts.Telemetry; tel != nil {
			sp := telemetry.ServerSpan(ctx)
			owner := p.opts.Owner
			if owner == "" {
				owner = sp.Owner()
			}
			tel.RecordTokens(ctx, telemetry.Usage{Server: cfg.Name, Tool: rt.orig, Owner: owner, ByReference: res.Tokens})
			sp.Note(telemetry.Tally{ByReference: res.Tokens, Referenced: files})
		}
	}
	return res.Args, res.Options, nil, nil
}

// referenceError is the tools/call result of a reference that did not
// resolve: isError (the tool did not run), its text the one JSON object
// the model acts on.
func referenceError(e *reference.Error) json.RawMessage {
	b, _ := json.Marshal(map[string]any{"content": []map[string]any{{"type": "text", "text": string(e.JSON())}}, "isError": true})
	return b
}
