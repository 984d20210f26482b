package proxy

import (
	"fmt"
	"strings"

	"github.com/scratchpad-mcp/scratchpad-mcp/config"
)

// A server whose table needs an environment variable that is not set is
// left out of the config ([config.Options].SkipServersWithUnsetEnv) so
// that the other servers serve. Its tools are not listed, so a model
// that calls one (or any tool it cannot find) is told which server is
// missing and which variable would bring it: [Proxy.DownServers] names
// the servers of [Options].Missing.

// missingServers says, for each server of [Options].Missing, "name (not
// loaded: environment variable X is not set where scratchpad-mcp runs)".
func (p *Proxy) missingServers() []string {
	out := make([]string, 0, len(p.opts.Missing))
	for _, m := range p.opts.Missing {
		out = append(out, fmt.Sprintf("%s (%s)", m.Name, MissingText(m)))
	}
	return out
}

// MissingText says what a left-out server lacks: "not loaded: environment
// variable X is not set where scratchpad-mcp runs (set it in the client's
// env block for scratchpad-mcp)", naming every variable.
func MissingText(m config.SkippedServer) string {
	what := "environment variable " + strings.Join(m.MissingEnv, ", ") + " is"
	if len(m.MissingEnv) > 1 {
		what = "environment variables " + strings.Join(m.MissingEnv, ", ") + " are"
	}
	return "not loaded: " + what + " not set where scratchpad-mcp runs (set it in the env block of the client's scratchpad-mcp entry)"
}
