package server

import (
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// An own tool or resource that needs a client extension
// ([tool.Def].Extension, [tool.Resource].Extension: the MCP App view's
// tools and page) is listed, callable and readable only in a session, or
// a 2026-07-28 request, whose client declared that extension: a client
// that cannot render the page would only show its model tools it cannot
// use, and the page's app-only tool, whose answers are not charged to
// the model's budget, to the model itself.

// offers reports whether the session's client may see and call own tool
// name.
func (se *session) offers(name string) bool { return se.declares(se.ownExt[name]) }

// declares reports whether the session's client declared extension ext
// at initialize; "" (nothing needed) is declared.
func (se *session) declares(ext string) bool {
	return ext == "" || se.Capabilities().Declares(ext)
}

// offeredTools are the own tools of a listing that the session offers.
func (se *session) offeredTools(tools []*mcp.Tool) []*mcp.Tool {
	out := tools[:0:0]
	for _, t := range tools {
		if se.offers(t.Name) {
			out = append(out, t)
		}
	}
	return out
}

// offeredResources are the own resources of a listing that the session
// offers.
func (se *session) offeredResources(rs []*mcp.Resource) []*mcp.Resource {
	out := rs[:0:0]
	for _, r := range rs {
		if se.declares(se.ownResExt[r.URI]) {
			out = append(out, r)
		}
	}
	return out
}

// offers20260728 reports whether a 2026-07-28 request's client may see
// and use an own tool or resource that needs extension ext ("" needs
// none): its envelope's capabilities, parsed once, declare it.
func offers20260728(r *request20260728, ext string) bool {
	return ext == "" || r.env.Caps.Declares(ext)
}
