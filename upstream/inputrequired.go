package upstream

import (
	"encoding/json"
	"sort"
	"strings"

	"github.com/scratchpad-mcp/scratchpad-mcp/server/wire"
)

// InputRequired is a 2026-07-28 upstream's input-required result to a
// call: the input requests it needs answered, by key, and its opaque state
// to echo on the retry. [Upstream.Call] returns it as its error, so that a
// caller that does not bridge it (divert, charging) never takes it for a
// result.
type InputRequired wire.InputRequired

func (e *InputRequired) Error() string {
	keys := make([]string, 0, len(e.Requests))
	for k := range e.Requests {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	kinds := make([]string, len(keys))
	for i, k := range keys {
		var r struct {
			Method string `json:"method"`
		}
		_ = json.Unmarshal(e.Requests[k], &r)
		kinds[i] = r.Method + " (" + k + ")"
	}
	if len(kinds) == 0 {
		return "the upstream needs input (requestState only)"
	}
	return "the upstream needs input: " + strings.Join(kinds, ", ")
}
