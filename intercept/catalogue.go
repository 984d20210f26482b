package intercept

import (
	"encoding/json"
	"strings"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// catalogue is the combined list of the upstreams' resources, resource
// templates and prompts, as registered on the MCP server.
//
// Resource URIs and templates are exposed unchanged. When two upstreams
// (or an upstream and the proxy itself) list the same URI or template,
// the first in config order keeps it and the later one's is exposed as
// "<server>+<uri>" ("docs+file:///a.txt"); reads, subscriptions and
// resources/updated are mapped back and forth. Prompt names follow the
// tool rule: the server's prefix applies, and a name already taken is
// skipped with a warning.
type catalogue struct {
	mu        sync.RWMutex
	foreignR  map[string]bool // the proxy's own resources and prompts
	foreignP  map[string]bool
	res       map[string]*itemRoute // exposed URI → route
	tmpl      map[string]*itemRoute // exposed uriTemplate → route
	prompts   map[string]*itemRoute // exposed name → route
	regRes    map[string]string     // exposed → raw, as registered
	regTmpl   map[string]string
	regPrompt map[string]string
}

// itemRoute is one exposed resource, template or prompt.
type itemRoute struct {
	up     *Upstream
	orig   string // the upstream's URI, uriTemplate or name
	prefix string // "" or "<server>+" for a colliding URI or template
	raw    json.RawMessage
	match  *mcp.URITemplate // templates: matches exposed concrete URIs
	order  int              // position in the combined listing (see addOrderHooks)
}

func newCatalogue() catalogue {
	return catalogue{
		foreignR: map[string]bool{}, foreignP: map[string]bool{},
		res: map[string]*itemRoute{}, tmpl: map[string]*itemRoute{}, prompts: map[string]*itemRoute{},
		regRes: map[string]string{}, regTmpl: map[string]string{}, regPrompt: map[string]string{},
	}
}

// reserve records the proxy's own resources and prompts: upstreams never
// replace them.
func (c *catalogue) reserve(s *server.MCPServer) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for uri := range s.ListResources() {
		c.foreignR[uri] = true
	}
	for name := range s.ListPrompts() {
		c.foreignP[name] = true
	}
}

// CollisionSeparator joins a server name to a resource URI or template
// that another upstream already exposes: "docs" + "+" + "file:///a.txt".
const CollisionSeparator = "+"

// syncCatalogue rebuilds resources, templates and prompts from every
// upstream's last listing and applies the difference to srv.
func (r *Router) syncCatalogue(srv *server.MCPServer) {
	c := &r.cat
	res := map[string]*itemRoute{}
	tmpl := map[string]*itemRoute{}
	prompts := map[string]*itemRoute{}
	c.mu.RLock()
	foreignR, foreignP := c.foreignR, c.foreignP
	c.mu.RUnlock()
	order := 0
	for _, u := range r.ups {
		resources, templates, plist := u.Lists()
		for _, it := range resources {
			exposed, prefix := it.Name, ""
			if foreignR[exposed] || res[exposed] != nil {
				prefix = u.Config().Name + CollisionSeparator
				exposed = prefix + it.Name
				r.log.Warn("upstream resource URI collides; exposed with a server prefix", "server", u.Config().Name, "uri", it.Name, "exposed", exposed)
			}
			if foreignR[exposed] || res[exposed] != nil {
				continue
			}
			res[exposed] = &itemRoute{up: u, orig: it.Name, prefix: prefix, raw: it.Raw, order: order}
			order++
		}
		for _, it := range templates {
			exposed, prefix := it.Name, ""
			if tmpl[exposed] != nil {
				prefix = u.Config().Name + CollisionSeparator
				exposed = prefix + it.Name
				r.log.Warn("upstream resource template collides; exposed with a server prefix", "server", u.Config().Name, "template", it.Name, "exposed", exposed)
			}
			if tmpl[exposed] != nil {
				continue
			}
			var m mcp.URITemplate
			if err := json.Unmarshal(mustJSON(exposed), &m); err != nil {
				r.log.Warn("upstream resource template skipped: invalid", "server", u.Config().Name, "template", it.Name, "error", err)
				continue
			}
			tmpl[exposed] = &itemRoute{up: u, orig: it.Name, prefix: prefix, raw: it.Raw, match: &m, order: order}
			order++
		}
		for _, it := range plist {
			name := u.Config().ExposedName(it.Name)
			if foreignP[name] || prompts[name] != nil {
				r.log.Warn("upstream prompt skipped: name already exposed; set a prefix", "server", u.Config().Name, "prompt", it.Name)
				continue
			}
			prompts[name] = &itemRoute{up: u, orig: it.Name, raw: it.Raw, order: order}
			order++
		}
	}

	c.mu.Lock()
	c.res, c.tmpl, c.prompts = res, tmpl, prompts
	var delRes, delPrompts []string
	var addRes []server.ServerResource
	var addTmpl []server.ServerResourceTemplate
	var addPrompts []server.ServerPrompt
	reconcile(c.regRes, res, func(uri string) { delRes = append(delRes, uri) },
		func(uri string, rt *itemRoute) bool {
			var v mcp.Resource
			if err := unmarshalAs(rt.raw, "uri", uri, &v); err != nil {
				r.log.Warn("upstream resource skipped: invalid", "server", rt.up.Config().Name, "uri", rt.orig, "error", err)
				return false
			}
			addRes = append(addRes, server.ServerResource{Resource: v, Handler: r.readResource})
			return true
		})
	reconcile(c.regTmpl, tmpl, func(t string) {
		// mcp-go cannot delete a template: it stays registered, is hidden
		// from listings by a hook and reads fail as not found.
		c.regTmpl[t] = ""
	}, func(t string, rt *itemRoute) bool {
		var v mcp.ResourceTemplate
		if err := unmarshalAs(rt.raw, "uriTemplate", t, &v); err != nil {
			r.log.Warn("upstream resource template skipped: invalid", "server", rt.up.Config().Name, "template", rt.orig, "error", err)
			return false
		}
		addTmpl = append(addTmpl, server.ServerResourceTemplate{Template: v, Handler: r.readResource})
		return true
	})
	reconcile(c.regPrompt, prompts, func(name string) { delPrompts = append(delPrompts, name) },
		func(name string, rt *itemRoute) bool {
			var v mcp.Prompt
			if err := unmarshalAs(rt.raw, "name", name, &v); err != nil {
				r.log.Warn("upstream prompt skipped: invalid", "server", rt.up.Config().Name, "prompt", rt.orig, "error", err)
				return false
			}
			addPrompts = append(addPrompts, server.ServerPrompt{Prompt: v, Handler: r.getPrompt})
			return true
		})
	c.mu.Unlock()

	if len(delRes) > 0 {
		srv.DeleteResources(delRes...)
	}
	if len(addRes) > 0 {
		srv.AddResources(addRes...)
	}
	if len(addTmpl) > 0 {
		srv.AddResourceTemplates(addTmpl...)
	}
	if len(delPrompts) > 0 {
		srv.DeletePrompts(delPrompts...)
	}
	if len(addPrompts) > 0 {
		srv.AddPrompts(addPrompts...)
	}
}

// rawDefinition is an exposed tool, resource, template or prompt as its
// upstream listed it.
type rawDefinition interface{ definition() json.RawMessage }

func (rt *itemRoute) definition() json.RawMessage { return rt.raw }
func (rt *route) definition() json.RawMessage     { return rt.raw }

// reconcile brings reg (exposed name → raw JSON as registered) in line
// with want. A registered name no longer wanted is forgotten and passed to
// drop (which may record it again, as templates do); a wanted name whose
// definition is new or changed is passed to add and recorded only when
// add succeeds, so an invalid definition is tried again at the next sync.
func reconcile[T rawDefinition](reg map[string]string, want map[string]T, drop func(name string), add func(name string, v T) bool) {
	var gone []string
	for name := range reg {
		if _, ok := want[name]; !ok {
			gone = append(gone, name)
		}
	}
	for _, name := range gone {
		delete(reg, name)
		drop(name)
	}
	for name, v := range want {
		raw := string(v.definition())
		if prev, ok := reg[name]; ok && prev == raw {
			continue
		}
		if add(name, v) {
			reg[name] = raw
		}
	}
}

// unmarshalAs decodes raw into v with its key field replaced by exposed.
func unmarshalAs(raw json.RawMessage, key, exposed string, v any) error {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return err
	}
	fields[key] = mustJSON(exposed)
	b, err := json.Marshal(fields)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

func mustJSON(s string) json.RawMessage {
	b, _ := json.Marshal(s)
	return b
}

// staleTemplate reports a template registered earlier that no upstream
// lists now.
func (c *catalogue) staleTemplate(t string) bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	raw, ok := c.regTmpl[t]
	return ok && raw == ""
}

// owner finds the upstream serving an exposed concrete URI and the URI
// it knows it by.
func (c *catalogue) owner(exposed string) (*Upstream, string, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if rt := c.res[exposed]; rt != nil {
		return rt.up, rt.orig, true
	}
	// Templates may overlap: the first listed wins, as for names.
	var best *itemRoute
	for _, rt := range c.tmpl {
		if (best == nil || rt.order < best.order) && rt.match.Regexp().MatchString(exposed) {
			best = rt
		}
	}
	if best == nil {
		return nil, "", false
	}
	return best.up, strings.TrimPrefix(exposed, best.prefix), true
}

// exposedURI maps a URI from upstream u to the one clients know.
func (c *catalogue) exposedURI(u *Upstream, orig string) string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	for exposed, rt := range c.res {
		if rt.up == u && rt.orig == orig {
			return exposed
		}
	}
	for _, rt := range c.tmpl {
		if rt.up == u && rt.prefix != "" && rt.match.Regexp().MatchString(rt.prefix+orig) {
			return rt.prefix + orig
		}
	}
	return orig
}

func (c *catalogue) prompt(name string) *itemRoute {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.prompts[name]
}

// template finds an exposed template (a completion reference) or, failing
// that, an exposed resource.
func (c *catalogue) template(exposed string) *itemRoute {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if rt := c.tmpl[exposed]; rt != nil {
		return rt
	}
	return c.res[exposed]
}
