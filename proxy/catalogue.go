package proxy

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"

	"github.com/yosida95/uritemplate/v3"

	"github.com/scratchpad-mcp/scratchpad-mcp/config"
	"github.com/scratchpad-mcp/scratchpad-mcp/skills"
	"github.com/scratchpad-mcp/scratchpad-mcp/toolsearch"
	"github.com/scratchpad-mcp/scratchpad-mcp/upstream"
)

// CollisionSeparator joins a server name to a resource URI or template
// that another upstream (or the proxy itself) already exposes: "docs" +
// "+" + "file:///a.txt". It is [skills.Separator], which exposes skills
// of other schemes the same way.
const CollisionSeparator = skills.Separator

// route is one exposed tool, resource, template or prompt.
type route struct {
	up     *upstream.Upstream
	orig   string          // the upstream's name, URI or uriTemplate
	prefix string          // "" or "<server>+" for a colliding URI or template
	raw    json.RawMessage // the definition as exposed
	match  *uritemplate.Template
	// hidden: a tool left out of the listing in search mode (found with
	// search_tools instead).
	hidden bool
	// app: what a tool's listing says of MCP Apps (apps.go).
	app appTool
}

// listing is one kind of item: routes by exposed key, and the keys in
// the order clients are shown them (servers in config order, each
// upstream's own order within).
type listing struct {
	byKey map[string]*route
	order []string
}

func (l listing) raws() []json.RawMessage {
	out := make([]json.RawMessage, len(l.order))
	for i, k := range l.order {
		out[i] = l.byKey[k].raw
	}
	return out
}

// listed returns the raw items not hidden, and the hidden ones found
// says to list too, in the listing's order.
func (l listing) listed(found func(string) bool) (raws []json.RawMessage, names []string) {
	for _, k := range l.order {
		if rt := l.byKey[k]; !rt.hidden || found != nil && found(k) {
			raws = append(raws, rt.raw)
			names = append(names, k)
		}
	}
	return raws, names
}

func (l *listing) add(key string, rt *route) {
	if l.byKey == nil {
		l.byKey = map[string]*route{}
	}
	l.byKey[key] = rt
	l.order = append(l.order, key)
}

// equal reports whether two listings expose the same items the same way.
func (l listing) equal(o listing) bool {
	if len(l.order) != len(o.order) {
		return false
	}
	for i, k := range l.order {
		if o.order[i] != k || !bytes.Equal(l.byKey[k].raw, o.byKey[k].raw) {
			return false
		}
	}
	return true
}

// snapshot is the whole catalogue at one moment; it is replaced, never
// changed, so readers need no lock once they hold it.
type snapshot struct {
	tools, resources, templates, prompts listing
	// index ranks the tools for search_tools; nil unless searching.
	index *toolsearch.Index
}

// catalogue is the combined list of the upstreams' tools, resources,
// resource templates and prompts.
//
// Tool and prompt names get the server's prefix when one is configured;
// a name already taken (by the proxy or an earlier server) is skipped
// with a warning. Resource URIs and templates are exposed unchanged
// unless they collide: the later one is exposed as "<server>+<uri>", and
// reads, subscriptions and resources/updated are mapped back and forth.
type catalogue struct {
	// building serializes rebuilds: each reads the upstreams' listings
	// under it, so the last one stored is built from the latest
	// listings (a shared upstream's and the owner's own upstreams'
	// rebuilds run on different goroutines).
	building               sync.Mutex
	mu                     sync.RWMutex
	snap                   snapshot
	ownTools, ownResources map[string]bool
	ownPrompts             map[string]bool
	search                 bool // [catalogue] mode = "search"
	// mask is the redact stage of listed definitions (mask.go): a
	// description or schema is shown masked; one that cannot be scanned
	// is not listed.
	mask func(sc *config.Server, what string, raw json.RawMessage) (json.RawMessage, bool)
}

// masked is raw through c.mask (raw when there is none).
func (c *catalogue) masked(sc *config.Server, what string, raw json.RawMessage) (json.RawMessage, bool) {
	if c.mask == nil {
		return raw, true
	}
	return c.mask(sc, what, raw)
}

func (c *catalogue) reserve(tools, resources, prompts []string) {
	set := func(names []string) map[string]bool {
		m := map[string]bool{}
		for _, n := range names {
			m[n] = true
		}
		return m
	}
	c.ownTools, c.ownResources, c.ownPrompts = set(tools), set(resources), set(prompts)
}

func (c *catalogue) snapshot() snapshot {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.snap
}

// rebuild recomputes the catalogue from every upstream's last listing and
// reports which kinds changed.
func (c *catalogue) rebuild(ups []*upstream.Upstream, log *slog.Logger) Kind {
	c.building.Lock()
	defer c.building.Unlock()
	var s snapshot
	for _, u := range ups {
		cfg := u.Config()
		for _, it := range u.Tools() {
			if !cfg.Allowed(it.Name) {
				continue
			}
			name := cfg.ExposedName(it.Name)
			if c.ownTools[name] {
				log.Warn("upstream tool skipped: the name is one of scratchpad-mcp's own tools; set a prefix for this server", "server", cfg.Name, "tool", it.Name)
				continue
			}
			if prev := s.tools.byKey[name]; prev != nil {
				log.Warn("upstream tool skipped: name already exposed by another server; set a prefix", "tool", name, "server", cfg.Name, "exposed_by", prev.up.Name())
				continue
			}
			_, divertable := cfg.Threshold(it.Name)
			def, ok := c.masked(cfg, "tool "+it.Name, it.Raw)
			if !ok {
				continue
			}
			app := appToolOf(def)
			raw, err := exposedTool(def, name, dropsSchema(divertable, app, cfg))
			if err != nil {
				log.Warn("upstream tool skipped: invalid definition", "server", cfg.Name, "tool", it.Name, "error", err)
				continue
			}
			s.tools.add(name, &route{up: u, orig: it.Name, raw: raw, app: app, hidden: c.search && cfg.Listing != config.ListingAlways})
		}
		resources, templates, prompts := u.Lists()
		for _, it := range resources {
			exposed, prefix := it.Name, ""
			if x, isSkill, hidden := exposedSkillURI(cfg.Name, it.Name); hidden {
				continue
			} else if isSkill {
				exposed = x // kept apart per server (skills.go), never colliding
			}
			if c.ownResources[exposed] || s.resources.byKey[exposed] != nil {
				prefix = cfg.Name + CollisionSeparator
				exposed = prefix + it.Name
				log.Warn("upstream resource URI collides; exposed with a server prefix", "server", cfg.Name, "uri", it.Name, "exposed", exposed)
			}
			if c.ownResources[exposed] || s.resources.byKey[exposed] != nil {
				continue
			}
			def, ok := c.masked(cfg, "resource "+it.Name, it.Raw)
			if !ok {
				continue
			}
			raw, err := rewriteKey(def, "uri", exposed, nil)
			if err != nil {
				log.Warn("upstream resource skipped: invalid", "server", cfg.Name, "uri", it.Name, "error", err)
				continue
			}
			s.resources.add(exposed, &route{up: u, orig: it.Name, prefix: prefix, raw: raw})
		}
		for _, it := range templates {
			exposed, prefix := it.Name, ""
			if x, isSkill, hidden := exposedSkillURI(cfg.Name, it.Name); hidden {
				continue
			} else if isSkill {
				exposed = x
			}
			if s.templates.byKey[exposed] != nil {
				prefix = cfg.Name + CollisionSeparator
				exposed = prefix + it.Name
				log.Warn("upstream resource template collides; exposed with a server prefix", "server", cfg.Name, "template", it.Name, "exposed", exposed)
			}
			if s.templates.byKey[exposed] != nil {
				continue
			}
			m, err := uritemplate.New(exposed)
			if err != nil {
				log.Warn("upstream resource template skipped: invalid", "server", cfg.Name, "template", it.Name, "error", err)
				continue
			}
			def, ok := c.masked(cfg, "resource template "+it.Name, it.Raw)
			if !ok {
				continue
			}
			raw, err := rewriteKey(def, "uriTemplate", exposed, nil)
			if err != nil {
				log.Warn("upstream resource template skipped: invalid", "server", cfg.Name, "template", it.Name, "error", err)
				continue
			}
			s.templates.add(exposed, &route{up: u, orig: it.Name, prefix: prefix, raw: raw, match: m})
		}
		for _, it := range prompts {
			name := cfg.ExposedName(it.Name)
			if c.ownPrompts[name] || s.prompts.byKey[name] != nil {
				log.Warn("upstream prompt skipped: name already exposed; set a prefix", "server", cfg.Name, "prompt", it.Name)
				continue
			}
			def, ok := c.masked(cfg, "prompt "+it.Name, it.Raw)
			if !ok {
				continue
			}
			raw, err := rewriteKey(def, "name", name, nil)
			if err != nil {
				log.Warn("upstream prompt skipped: invalid", "server", cfg.Name, "prompt", it.Name, "error", err)
				continue
			}
			s.prompts.add(name, &route{up: u, orig: it.Name, raw: raw})
		}
	}
	if c.search {
		s.index = searchIndex(s.tools)
	}
	c.mu.Lock()
	old := c.snap
	c.snap = s
	c.mu.Unlock()
	var changed Kind
	if !old.tools.equal(s.tools) {
		changed |= KindTools
	}
	if !old.resources.equal(s.resources) || !old.templates.equal(s.templates) {
		changed |= KindResources
	}
	if !old.prompts.equal(s.prompts) {
		changed |= KindPrompts
	}
	return changed
}

// exposedTool is an upstream tool definition under its exposed name.
// dropSchema drops its outputSchema: a tool that can be diverted and whose
// pointer result has no structuredContent (all but MCP Apps tools, apps.go)
// would break it, and strict clients reject a result that lacks what the
// schema promises. A missing input schema becomes {"type":"object"}.
func exposedTool(raw json.RawMessage, name string, dropSchema bool) (json.RawMessage, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return nil, err
	}
	var drop []string
	if dropSchema {
		if _, ok := fields["outputSchema"]; ok {
			drop = append(drop, "outputSchema")
		}
	}
	in := fields["inputSchema"]
	if len(in) == 0 || bytes.Equal(in, []byte("null")) {
		fields["inputSchema"] = json.RawMessage(`{"type":"object"}`)
		fields["name"] = mustJSON(name)
		for _, k := range drop {
			delete(fields, k)
		}
		return json.Marshal(fields)
	}
	return rewriteKey(raw, "name", name, drop)
}

// rewriteKey returns the object raw with its string field key set to
// value and the fields in drop removed. When nothing changes, raw itself
// is returned: upstream bytes pass through as they came.
func rewriteKey(raw json.RawMessage, key, value string, drop []string) (json.RawMessage, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return nil, err
	}
	var cur string
	if err := json.Unmarshal(fields[key], &cur); err != nil || cur == "" {
		return nil, errMissing(key)
	}
	if cur == value && len(drop) == 0 {
		return raw, nil
	}
	fields[key] = mustJSON(value)
	for _, k := range drop {
		delete(fields, k)
	}
	return json.Marshal(fields)
}

type errMissing string

func (e errMissing) Error() string { return "no " + string(e) + " string" }

func mustJSON(s string) json.RawMessage {
	b, _ := json.Marshal(s)
	return b
}

// tool finds an exposed tool.
func (c *catalogue) tool(name string) *route {
	return c.snapshot().tools.byKey[name]
}

// toolOn finds the exposed tool that is u's tool orig.
func (c *catalogue) toolOn(u *upstream.Upstream, orig string) *route {
	for _, rt := range c.snapshot().tools.byKey {
		if rt.up == u && rt.orig == orig {
			return rt
		}
	}
	return nil
}

// prompt finds an exposed prompt.
func (c *catalogue) prompt(name string) *route {
	return c.snapshot().prompts.byKey[name]
}

// template finds an exposed template (a completion reference) or, failing
// that, an exposed resource.
func (c *catalogue) template(exposed string) *route {
	s := c.snapshot()
	if rt := s.templates.byKey[exposed]; rt != nil {
		return rt
	}
	return s.resources.byKey[exposed]
}

// owner finds the upstream serving an exposed concrete URI and the URI
// it knows it by. Templates may overlap: the first listed wins. A
// skill:// URI never gets here: [Proxy.resourceOwner] routes it by the
// server it names.
func (c *catalogue) owner(exposed string) (*upstream.Upstream, string, bool) {
	s := c.snapshot()
	if rt := s.resources.byKey[exposed]; rt != nil {
		return rt.up, rt.orig, true
	}
	for _, k := range s.templates.order {
		rt := s.templates.byKey[k]
		if rt.match.Regexp().MatchString(exposed) {
			return rt.up, strings.TrimPrefix(exposed, rt.prefix), true
		}
	}
	return nil, "", false
}

// exposedURI maps a URI from upstream u to the one clients know.
func (c *catalogue) exposedURI(u *upstream.Upstream, orig string) string {
	if x, isSkill, _ := exposedSkillURI(u.Name(), orig); isSkill {
		return x
	}
	s := c.snapshot()
	for _, k := range s.resources.order {
		if rt := s.resources.byKey[k]; rt.up == u && rt.orig == orig {
			return k
		}
	}
	for _, k := range s.templates.order {
		rt := s.templates.byKey[k]
		if rt.up == u && rt.prefix != "" && rt.match.Regexp().MatchString(rt.prefix+orig) {
			return rt.prefix + orig
		}
	}
	return orig
}
