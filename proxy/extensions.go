package proxy

import (
	"encoding/json"

	"github.com/scratchpad-mcp/scratchpad-mcp/wire"
)

// carried are the MCP extensions (capabilities.extensions, by id) the
// proxy carries faithfully between clients and upstreams: a client's
// declaration of one reaches the upstreams, and so do the upstreams'
// to the client (server/capabilities.go). Each maps to what the proxy
// declares for it to an upstream when no single client is known
// ([DefaultOffer]), nil for nothing. An extension not listed is never
// declared to an upstream, even when a client declares it: the upstream
// could then use methods or result shapes the proxy does not route, or
// would divert unfaithfully. Each extension's specifics live in a file
// of its own (apps.go, tasks.go, skills.go); this list is the one place that says
// which are carried.
var carried = map[string]json.RawMessage{
	AppsExtension:  appsOffer,
	TasksExtension: nil, // per call: only a client that declared it gets tasks
	// The proxy renames skill:// URIs and routes the methods (skills.go),
	// so an upstream that gates its skills on the declaration offers them.
	wire.ExtensionSkills: json.RawMessage(`{}`),
}

// defaultExtensions is the "extensions" member of [DefaultOffer]: every
// carried extension with the proxy's own settings.
func defaultExtensions() map[string]any {
	out := map[string]any{}
	for id, v := range carried {
		if v != nil {
			out[id] = v
		}
	}
	return out
}

// mirroredExtensions is what a client declared (its raw "extensions"
// object) of the carried extensions, as it declared them; nil for none.
// What declares one is [wire.DeclaresExtension]'s rule, as everywhere.
func mirroredExtensions(declared map[string]json.RawMessage) map[string]any {
	var out map[string]any
	for id, v := range declared {
		if _, ok := carried[id]; !ok || !wire.DeclaresExtension(declared, id) {
			continue
		}
		if out == nil {
			out = map[string]any{}
		}
		out[id] = v
	}
	return out
}

// Declares reports whether the client declared the extension id.
func (c ClientCapabilities) Declares(id string) bool {
	return wire.DeclaresExtension(c.Extensions, id)
}

// carriedCaps is a client's raw capabilities object with its
// "extensions" member cut down to the carried ones, for a 2026-07-28
// upstream told the caller's capabilities with every request. raw is
// returned as it is when nothing is cut.
func carriedCaps(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 || !hasMember(raw, "extensions") {
		return raw
	}
	var all map[string]json.RawMessage
	if json.Unmarshal(raw, &all) != nil {
		return raw
	}
	var ext map[string]json.RawMessage
	if json.Unmarshal(all["extensions"], &ext) != nil {
		delete(all, "extensions")
	} else {
		cut := false
		for id := range ext {
			if _, ok := carried[id]; !ok || !wire.DeclaresExtension(ext, id) {
				delete(ext, id)
				cut = true
			}
		}
		if !cut {
			return raw
		}
		if len(ext) == 0 {
			delete(all, "extensions")
		} else {
			all["extensions"], _ = json.Marshal(ext)
		}
	}
	out, err := json.Marshal(all)
	if err != nil {
		return raw
	}
	return out
}
