package proxy

import "encoding/json"

// Capabilities is what the upstreams offer together, for the initialize
// answer: the server declares its own capabilities plus these.
type Capabilities struct {
	Logging, Completions, Prompts, Resources, Subscribe bool
	// Extensions are the extensions any upstream declared, by id (the
	// first declaration of an id wins).
	Extensions map[string]json.RawMessage
}

// Capabilities returns the union of the upstreams' capabilities. An
// upstream that never connected is unknown and counts as offering
// everything: a client never uses what it was not told about, and an
// upstream that is down now may be up in a moment. Call
// [Proxy.AwaitStarted] first so that starting upstreams are known.
func (p *Proxy) Capabilities() Capabilities {
	var c Capabilities
	for _, u := range p.ups {
		if u.InitializeResult() == nil {
			return Capabilities{true, true, true, true, true, nil}
		}
		caps := u.Capabilities()
		for id, v := range caps.Extensions {
			if c.Extensions == nil {
				c.Extensions = map[string]json.RawMessage{}
			}
			if _, ok := c.Extensions[id]; !ok {
				c.Extensions[id] = v
			}
		}
		c.Logging = c.Logging || caps.Logging != nil
		c.Completions = c.Completions || caps.Completions != nil
		c.Prompts = c.Prompts || caps.Prompts != nil
		if caps.Resources != nil {
			c.Resources = true
			c.Subscribe = c.Subscribe || caps.Resources.Subscribe
		}
	}
	return c
}

// DefaultOffer is what upstreams are told a client can do when no single
// client is known: everything the proxy forwards, and the extensions it
// carries (extensions.go). Each request is checked against the
// capabilities of the client it goes to.
func DefaultOffer() map[string]any {
	return map[string]any{
		"roots":       map[string]any{"listChanged": true},
		"sampling":    map[string]any{},
		"elicitation": map[string]any{"form": map[string]any{}, "url": map[string]any{}},
		"extensions":  defaultExtensions(),
	}
}

// MirrorOffer is what a client declared (its raw "capabilities" object)
// of what the proxy forwards — sampling, elicitation, roots, and the
// extensions it carries — as it declared it.
func MirrorOffer(raw json.RawMessage) map[string]any {
	var all map[string]json.RawMessage
	_ = json.Unmarshal(raw, &all)
	offer := map[string]any{}
	for _, k := range []string{"roots", "sampling", "elicitation"} {
		if v, ok := all[k]; ok {
			offer[k] = v
		}
	}
	var ext map[string]json.RawMessage
	if json.Unmarshal(all["extensions"], &ext) == nil {
		if m := mirroredExtensions(ext); m != nil {
			offer["extensions"] = m
		}
	}
	return offer
}
