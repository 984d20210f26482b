package server

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scratchpad-mcp/scratchpad-mcp/proxy"
	"github.com/scratchpad-mcp/scratchpad-mcp/skills"
	"github.com/scratchpad-mcp/scratchpad-mcp/wire"
)

// Skills (SEP-2640) in both eras: the server's own skills (package
// skills) first, then the upstreams' ([proxy.Proxy.ListSkills] and its
// siblings). A client that did not declare io.modelcontextprotocol/skills
// is not told of the extension and gets -32601 for its methods
// ([wire.Negotiated]). The server declares directoryRead: it lists its
// own skills' directories, and forwards the call for an upstream that
// declared it (another is -32602, as for a URI that is not a directory).

// skillsParams are the params of the three methods (2025: go-sdk decodes
// them; 2026-07-28: [decodeParams], strict).
type skillsParams struct {
	mcp.ParamsBase
	Cursor string `json:"cursor,omitempty"`
	URI    string `json:"uri,omitempty"`
}

// rawSkills is a skills method's raw result (raw.go).
type rawSkills struct {
	mcp.ResultBase
	raw json.RawMessage
}

func (r *rawSkills) MarshalJSON() ([]byte, error) { return splice(r.raw, &r.ResultBase) }

// addSkillMethods makes go-sdk accept the skills methods, which it does
// not know: without this it answers -32601 before any middleware runs.
// Their handler never runs: [session.route] serves them ([methods2025]).
func addSkillMethods(s *mcp.Server) {
	never := func(context.Context, *mcp.ServerSession, *skillsParams) (*rawSkills, error) {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "skills method not routed"}
	}
	for _, m := range []string{wire.MethodSkillsList, wire.MethodSkillsGet, wire.MethodDirectoryRead} {
		_ = mcp.AddReceivingCustomMethod(s, m, never) // errors only for a standard method's name
	}
}

// declareSkills sets (or, for a client that did not declare the
// extension, removes) the skills extension in caps, which may hold an
// upstream's declaration ([capabilities]).
func declareSkills(caps *mcp.ServerCapabilities, declared bool) {
	if !declared {
		delete(caps.Extensions, wire.ExtensionSkills)
		return
	}
	if caps.Extensions == nil {
		caps.Extensions = map[string]any{}
	}
	caps.Extensions[wire.ExtensionSkills] = wire.SkillsSettings{DirectoryRead: true}
	if caps.Resources == nil {
		// Skills are resources: the own skill's files are read with
		// resources/read.
		caps.Resources = &mcp.ResourceCapabilities{ListChanged: true}
	}
}

// declares2025 reports whether a 2025 client's initialize declared
// extension id: an object, as [wire.DeclaresExtension] says (go-sdk
// decodes one into a map).
func declares2025(c *mcp.ClientCapabilities, id string) bool {
	if c == nil {
		return false
	}
	_, ok := c.Extensions[id].(map[string]any)
	return ok
}

// serveSkills answers one skills method of a client request s to px.
func serveSkills(ctx context.Context, px *proxy.Proxy, s *proxy.Request, method string, p *skillsParams) ([]byte, error) {
	own := skills.Own()
	if method == wire.MethodSkillsList {
		// A host lists skills once, as it lists tools: every upstream
		// still starting is waited for (bounded).
		px.AwaitAll(ctx)
	} else {
		px.AwaitStarted(ctx, 0)
	}
	switch method {
	case wire.MethodSkillsList:
		var entries []json.RawMessage
		if p.Cursor == "" {
			entries = append(entries, own.Entries()...)
		}
		ups, next, err := px.ListSkills(ctx, s, p.Cursor)
		if err != nil {
			return nil, skillsError(err)
		}
		res := struct {
			Skills     []json.RawMessage `json:"skills"`
			NextCursor string            `json:"nextCursor,omitempty"`
		}{append(entries, ups...), next}
		if res.Skills == nil {
			res.Skills = []json.RawMessage{}
		}
		return json.Marshal(res)
	case wire.MethodSkillsGet:
		if p.URI == "" {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "skills/get: uri is required"}
		}
		if e, ok := own.Get(p.URI); ok {
			return json.Marshal(map[string]json.RawMessage{"skill": e})
		}
		if skills.IsOwn(p.URI) {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "no skill is served at " + p.URI}
		}
		raw, err := px.GetSkill(ctx, s, p.URI)
		return raw, skillsError(err)
	case wire.MethodDirectoryRead:
		if p.URI == "" {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "resources/directory/read: uri is required"}
		}
		if skills.IsOwn(p.URI) {
			if raw, ok := own.ReadDirectory(p.URI); ok {
				return raw, nil
			}
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: p.URI + " is not a directory resource"}
		}
		raw, err := px.ReadDirectory(ctx, s, p.URI, p.Cursor)
		return raw, skillsError(err)
	}
	return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "method not found: " + method}
}

// skillsError is err as the client gets it: what no upstream serves is
// -32602 (the SEP's answer for an unknown skill or directory).
func skillsError(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, proxy.ErrNotFound) {
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: err.Error()}
	}
	return clientError(err)
}

// skills2025 serves a skills method of a 2025 session.
func (se *session) skills2025(ctx context.Context, method string, req mcp.Request, _ mcp.MethodHandler) (mcp.Result, error) {
	if werr := wire.Negotiated(method, se.declares); werr != nil {
		return nil, &jsonrpc.Error{Code: int64(werr.Code), Message: werr.Message}
	}
	p, _ := req.GetParams().(*skillsParams)
	if p == nil {
		p = &skillsParams{}
	}
	ctx, pr, err := se.srv.proxyRequest(ctx, se, nil, nil, hostOf)
	if err != nil {
		return nil, err
	}
	raw, err := serveSkills(ctx, se.proxy(), pr, method, p)
	if err != nil {
		return nil, err
	}
	return &rawSkills{raw: raw}, nil
}

// skills20260728 serves a skills method of a 2026-07-28 request (its
// negotiation was checked in [Server.serve20260728]).
func (s *Server) skills20260728(ctx context.Context, r *request20260728) ([]byte, error) {
	var p skillsParams
	if err := decodeParams(r, &p); err != nil {
		return nil, err
	}
	ctx, req, err := s.request20260728(ctx, r, nil, hostOf)
	if err != nil {
		return nil, err
	}
	return serveSkills(ctx, r.ag.px, req, r.method, &p)
}
