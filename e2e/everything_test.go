package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/scratchpad-mcp/scratchpad-mcp/config"
)

// TestEverythingThroughProxy is the transparency check against the MCP
// reference server: the TypeScript SDK client runs the same scenario
// (every content type, structured content, the server's sampling,
// elicitation in both modes and roots requests, progress, errors with
// their codes and data, resources and templates, prompts with arguments
// and embedded resources, completions, logging at a set level, resource
// subscriptions) against @modelcontextprotocol/server-everything directly
// and through scratchpad-mcp served over stdio, streamable HTTP and
// legacy SSE, and the reports must be the same.
func TestEverythingThroughProxy(t *testing.T) {
	if testing.Short() {
		t.Skip("e2e: skipped under -short (runs node and npm packages)")
	}
	node := requireNode(t)
	ensureNodeModules(t)
	entry, err := filepath.Abs(everythingEntry)
	if err != nil {
		t.Fatal(err)
	}
	bin := buildServer(t)
	cfg := filepath.Join(t.TempDir(), "scratchpad.toml")
	conf := fmt.Sprintf(`memory_dir = %q

[mcp.servers.everything]
transport = "stdio"
cmd = [%q, %q, "stdio"]
`, filepath.Join(t.TempDir(), "mem"), node, entry)
	if err := os.WriteFile(cfg, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}

	direct := runEverything(t, node, "stdio", node, entry, "stdio")
	for _, must := range []string{"sampling", "elicitation form", "elicitation url", "roots"} {
		if !containsPrefix(direct.Asked, must) {
			t.Fatalf("the scenario does not exercise %q directly (asked %v): it proves nothing", must, direct.Asked)
		}
	}
	if !direct.Logged || len(direct.Updated) == 0 || len(direct.Progress) == 0 {
		t.Fatalf("directly: logged %v, updated %v, progress %v: the scenario proves nothing", direct.Logged, direct.Updated, direct.Progress)
	}

	for _, front := range []string{"stdio", "http", "sse"} {
		t.Run(front, func(t *testing.T) {
			var via everythingReport
			switch front {
			case "stdio":
				via = runEverything(t, node, "stdio", bin, "serve", "--config", cfg, "--log-level", "warn")
			case "http":
				via = runEverything(t, node, "http", startHTTP(t, bin, cfg, "http")+"/mcp")
			case "sse":
				via = runEverything(t, node, "sse", startHTTP(t, bin, cfg, "sse")+"/sse")
			}
			compareEverything(t, direct, via)
		})
	}
}

// everythingReport is what everything.mjs prints.
type everythingReport struct {
	Capabilities map[string]json.RawMessage `json:"capabilities"`
	Tools        json.RawMessage            `json:"tools"`
	Resources    json.RawMessage            `json:"resources"`
	Templates    json.RawMessage            `json:"templates"`
	Prompts      json.RawMessage            `json:"prompts"`
	Steps        map[string]json.RawMessage `json:"steps"`
	Asked        []string                   `json:"asked"`
	Progress     []float64                  `json:"progress"`
	Logged       bool                       `json:"logged"`
	Updated      []string                   `json:"updated"`
}

func runEverything(t *testing.T, node string, args ...string) everythingReport {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, append([]string{"everything.mjs"}, args...)...)
	own := append(config.OwnToolNames(), config.DefaultMemoryTool)
	cmd.Env = append(os.Environ(), "SCRATCHPAD_OWN_TOOLS="+strings.Join(own, ","))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var r everythingReport
	if jerr := json.Unmarshal(stdout.Bytes(), &r); jerr != nil || err != nil {
		t.Fatalf("everything.mjs %v: %v (report: %v)\nstderr:\n%s\nstdout:\n%s", args, err, jerr, tail(stderr.String()), short(stdout.String()))
	}
	return r
}

func compareEverything(t *testing.T, direct, via everythingReport) {
	t.Helper()
	same := func(what string, a, b json.RawMessage) {
		t.Helper()
		if !jsonEqual(a, b) {
			t.Errorf("%s differs at %s\ndirect: %s\nproxy:  %s", what, firstDiff(a, b), short(string(a)), short(string(b)))
		}
	}
	same("tools", direct.Tools, via.Tools)
	same("resources", direct.Resources, via.Resources)
	same("resource templates", direct.Templates, via.Templates)
	same("prompts", direct.Prompts, via.Prompts)
	names := make([]string, 0, len(direct.Steps))
	for name := range direct.Steps {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if name == "unknown tool" {
			continue // below
		}
		same(name, direct.Steps[name], via.Steps[name])
	}
	// A tool no upstream lists is not forwarded: scratchpad-mcp answers as
	// MCP specifies (-32602), where this server answers with a tool error.
	var unknown struct {
		Error struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(via.Steps["unknown tool"], &unknown); err != nil || unknown.Error.Code != -32602 || !strings.Contains(unknown.Error.Message, "no-such-tool") {
		t.Errorf("unknown tool through scratchpad-mcp: %s", via.Steps["unknown tool"])
	}
	// The server asks for roots on its own schedule (at start, and again
	// from a tool while its first request is still out): compare what was
	// asked, not when or how often.
	if a, b := distinct(direct.Asked), distinct(via.Asked); !reflect.DeepEqual(a, b) {
		t.Errorf("the server asked the client\ndirect: %q\nproxy:  %q", a, b)
	}
	// The server sends its last progress as it answers, and even a direct
	// client sometimes gets the answer first and drops it: progress must
	// agree with the direct run where both have it, and more than one
	// must arrive.
	n := min(len(via.Progress), len(direct.Progress))
	if len(via.Progress) < 2 || !reflect.DeepEqual(via.Progress[:n], direct.Progress[:n]) || via.Logged != direct.Logged || !reflect.DeepEqual(via.Updated, direct.Updated) {
		t.Errorf("notifications: progress %v (direct %v), logged %v (direct %v), updated %v (direct %v)",
			via.Progress, direct.Progress, via.Logged, direct.Logged, via.Updated, direct.Updated)
	}
	// What scratchpad-mcp proxies must be declared; it adds its own.
	for _, c := range []string{"tools", "resources", "prompts", "logging", "completions"} {
		if direct.Capabilities[c] != nil && via.Capabilities[c] == nil {
			t.Errorf("capability %q: the server declares it, scratchpad-mcp does not", c)
		}
	}
}

// jsonEqual compares two JSON values, a member that is false counting as
// absent: MCP's schema defaults such booleans (required, hasMore, isError)
// to false, and mcp-go's types omit them when false.
func jsonEqual(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return bytes.Equal(a, b)
	}
	return reflect.DeepEqual(dropFalse(x), dropFalse(y))
}

// firstDiff names where two JSON values first differ, and the two values
// there, so that a failure points at the member rather than a whole listing.
func firstDiff(a, b json.RawMessage) string {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return "(not JSON)"
	}
	return diffAt("$", dropFalse(x), dropFalse(y))
}

func diffAt(at string, x, y any) string {
	switch x := x.(type) {
	case map[string]any:
		if y, ok := y.(map[string]any); ok {
			keys := make([]string, 0, len(x)+len(y))
			for k := range x {
				keys = append(keys, k)
			}
			for k := range y {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range slices.Compact(keys) {
				if !reflect.DeepEqual(x[k], y[k]) {
					return diffAt(at+"."+k, x[k], y[k])
				}
			}
			return ""
		}
	case []any:
		if y, ok := y.([]any); ok {
			for i := range min(len(x), len(y)) {
				if !reflect.DeepEqual(x[i], y[i]) {
					return diffAt(fmt.Sprintf("%s[%d]", at, i), x[i], y[i])
				}
			}
			if len(x) != len(y) {
				return fmt.Sprintf("%s: %d items vs %d", at, len(x), len(y))
			}
			return ""
		}
	}
	xs, _ := json.Marshal(x)
	ys, _ := json.Marshal(y)
	return fmt.Sprintf("%s: %s vs %s", at, short(string(xs)), short(string(ys)))
}

func dropFalse(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if x == false {
				delete(v, k)
			} else {
				v[k] = dropFalse(x)
			}
		}
	case []any:
		for i, x := range v {
			v[i] = dropFalse(x)
		}
	}
	return v
}

// distinct is list sorted, without repeats.
func distinct(list []string) []string {
	out := append([]string(nil), list...)
	sort.Strings(out)
	return slices.Compact(out)
}

func containsPrefix(list []string, prefix string) bool {
	for _, s := range list {
		if len(s) >= len(prefix) && s[:len(prefix)] == prefix {
			return true
		}
	}
	return false
}
