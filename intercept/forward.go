package intercept

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// forward sends one client request on to u with the server's timeout,
// recording the call so that u's own requests reach this client.
func (r *Router) forward(ctx context.Context, u *Upstream, method string, params any) (json.RawMessage, error) {
	defer r.notes.flush(ctx, notesFlushWait)
	cctx, cancel := context.WithTimeout(ctx, u.Config().Timeout)
	defer cancel()
	end := r.sess.begin(u, cctx)
	defer end()
	raw, err := u.Call(cctx, method, params)
	if err == nil {
		return raw, nil
	}
	var rerr *RPCError
	switch {
	case errors.As(err, &rerr):
		return nil, forwardError(ctx, rerr)
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case errors.Is(err, ErrUpstreamUnavailable):
		return nil, err // names the upstream and its last error
	case errors.Is(cctx.Err(), context.DeadlineExceeded):
		return nil, fmt.Errorf("%w: upstream %q did not answer %s within %s (timeout in [mcp.servers.%s])", ErrUpstreamTimeout, u.Config().Name, method, u.Config().Timeout, u.Config().Name)
	default:
		return nil, fmt.Errorf("%s on upstream %q failed: %w", method, u.Config().Name, err)
	}
}

// withMeta adds the caller's _meta to params, its progress token mapped
// as for tools/call so that the upstream's progress reaches the caller.
// Call done when the request is over.
func (r *Router) withMeta(ctx context.Context, params map[string]any, m *mcp.Meta) (done func()) {
	if fm := r.forwardMeta(ctx, m); fm != nil {
		params["_meta"] = fm
		if tok, ok := fm["progressToken"].(string); ok {
			return func() { r.forgetProgress(tok) }
		}
	}
	return func() {}
}

// catchAllTemplate is registered (and hidden from listings) so that a
// read of a URI no upstream lists still reaches [Router.readResource]:
// servers serve URIs they do not list, and mcp-go would answer "not
// found" itself.
const catchAllTemplate = "{+uri}"

// resourceOwner is the upstream serving an exposed URI and its own name
// for it: the upstream listing it or a template matching it, else the
// only upstream offering resources, which a direct client would have
// asked.
func (r *Router) resourceOwner(exposed string) (*Upstream, string, bool) {
	if u, orig, ok := r.cat.owner(exposed); ok {
		return u, orig, true
	}
	var only *Upstream
	for _, u := range r.ups {
		if u.Capabilities().Resources != nil {
			if only != nil {
				return nil, "", false
			}
			only = u
		}
	}
	return only, exposed, only != nil
}

// readResource forwards resources/read for a resource or a template.
func (r *Router) readResource(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
	u, orig, ok := r.resourceOwner(req.Params.URI)
	if !ok {
		return nil, fmt.Errorf("%w: %s (no upstream lists it)", server.ErrResourceNotFound, req.Params.URI)
	}
	params := map[string]any{"uri": orig}
	defer r.withMeta(ctx, params, req.Params.Meta)()
	raw, err := r.forward(ctx, u, "resources/read", params)
	if err != nil {
		return nil, err
	}
	res, err := mcp.ParseReadResourceResult(&raw)
	if err != nil {
		return nil, fmt.Errorf("%w: resources/read from %q: %v", ErrInvalidResponse, u.Config().Name, err)
	}
	prefix := strings.TrimSuffix(req.Params.URI, orig)
	if prefix == "" {
		return res.Contents, nil
	}
	out := make([]mcp.ResourceContents, len(res.Contents))
	for i, rc := range res.Contents {
		switch v := rc.(type) {
		case mcp.TextResourceContents:
			v.URI = prefix + v.URI
			rc = v
		case mcp.BlobResourceContents:
			v.URI = prefix + v.URI
			rc = v
		}
		out[i] = rc
	}
	return out, nil
}

// getPrompt forwards prompts/get.
func (r *Router) getPrompt(ctx context.Context, req mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
	rt := r.cat.prompt(req.Params.Name)
	if rt == nil {
		return nil, fmt.Errorf("%w: %s (its upstream no longer lists it)", server.ErrPromptNotFound, req.Params.Name)
	}
	params := map[string]any{"name": rt.orig}
	if req.Params.Arguments != nil {
		params["arguments"] = req.Params.Arguments
	}
	defer r.withMeta(ctx, params, req.Params.Meta)()
	raw, err := r.forward(ctx, rt.up, "prompts/get", params)
	if err != nil {
		return nil, err
	}
	res, err := mcp.ParseGetPromptResult(&raw)
	if err != nil {
		return nil, fmt.Errorf("%w: prompts/get from %q: %v", ErrInvalidResponse, rt.up.Config().Name, err)
	}
	return res, nil
}

// completer forwards completion/complete to the upstream owning the
// prompt or resource template. An upstream without the completions
// capability yields no values, as mcp-go's default provider does.
type completer struct{ r *Router }

func (c completer) CompletePromptArgument(ctx context.Context, name string, arg mcp.CompleteArgument, cc mcp.CompleteContext) (*mcp.Completion, error) {
	rt := c.r.cat.prompt(name)
	if rt == nil {
		return &mcp.Completion{Values: []string{}}, nil
	}
	return c.r.complete(ctx, rt.up, map[string]any{"type": "ref/prompt", "name": rt.orig}, arg, cc)
}

func (c completer) CompleteResourceArgument(ctx context.Context, uri string, arg mcp.CompleteArgument, cc mcp.CompleteContext) (*mcp.Completion, error) {
	rt := c.r.cat.template(uri)
	if rt == nil {
		return &mcp.Completion{Values: []string{}}, nil
	}
	return c.r.complete(ctx, rt.up, map[string]any{"type": "ref/resource", "uri": rt.orig}, arg, cc)
}

func (r *Router) complete(ctx context.Context, u *Upstream, ref map[string]any, arg mcp.CompleteArgument, cc mcp.CompleteContext) (*mcp.Completion, error) {
	if u.Capabilities().Completions == nil {
		return &mcp.Completion{Values: []string{}}, nil
	}
	params := map[string]any{"ref": ref, "argument": arg}
	if len(cc.Arguments) > 0 {
		params["context"] = cc
	}
	raw, err := r.forward(ctx, u, "completion/complete", params)
	if err != nil {
		return nil, err
	}
	var res struct {
		Completion mcp.Completion `json:"completion"`
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		return nil, fmt.Errorf("%w: completion/complete from %q: %v", ErrInvalidResponse, u.Config().Name, err)
	}
	return &res.Completion, nil
}
