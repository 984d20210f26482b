package proxy

import (
	"context"
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/scratchpad-mcp/scratchpad-mcp/config"
	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testupstream"
	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testwait"
)

// searchProxy is a proxy in search mode over two test upstreams: "k8s"
// found by search, "misc" always listed.
func searchProxy(t *testing.T) *Proxy {
	k8s := stdioServer(t, "k8s", false)
	k8s.Prefix, k8s.Filter, k8s.FilterSet = "k8s", []config.Pattern{mustPattern(t, "listing"), mustPattern(t, "pid")}, true
	misc := stdioServer(t, "misc", false)
	misc.Prefix, misc.Filter, misc.FilterSet, misc.Listing = "misc", []config.Pattern{mustPattern(t, "echo")}, true, config.ListingAlways
	p := New(Options{Logger: quiet(), Servers: []config.Server{k8s, misc}, Search: true})
	p.Start(context.Background(), nil)
	t.Cleanup(p.Close)
	if !testwait.Until(testwait.Timeout, func() bool { return p.HasTool("k8s__listing") && p.HasTool("misc__echo") }) {
		t.Fatal("tools never listed")
	}
	return p
}

func mustPattern(t *testing.T, s string) config.Pattern {
	t.Helper()
	pt, err := config.CompilePattern(s)
	if err != nil {
		t.Fatal(err)
	}
	return pt
}

func resultText(t *testing.T, raw json.RawMessage) (string, bool) {
	t.Helper()
	var r struct {
		Content []struct{ Text string } `json:"content"`
		IsError bool                    `json:"isError"`
	}
	if err := json.Unmarshal(raw, &r); err != nil || len(r.Content) != 1 {
		t.Fatalf("not a one-text result: %s", raw)
	}
	return r.Content[0].Text, r.IsError
}

func TestSearchModeListsOnlyWhatIsAlwaysListed(t *testing.T) {
	p := searchProxy(t)
	tools, _, _, _ := p.Names()
	if !slices.Equal(tools, []string{"misc__echo"}) {
		t.Fatalf("listed %v", tools)
	}
	if got := len(p.ListToolsWith(func(n string) bool { return n == "k8s__pid" })); got != 2 {
		t.Fatalf("with one tool found, %d listed", got)
	}
	if !p.HasTool("k8s__listing") {
		t.Fatal("a hidden tool cannot be called")
	}
}

func TestSearchTools(t *testing.T) {
	p := searchProxy(t)
	for _, tc := range []struct {
		name, args string
		isError    bool
		want       []string
		found      []string
	}{
		{"query", `{"query":"list the pods"}`, false, []string{"tools for \"list the pods\"", "k8s__listing(n: number) — returns a Kubernetes-style pod listing"}, []string{"k8s__listing"}},
		{"describe", `{"describe":"k8s__pid"}`, false, []string{`"name":"k8s__pid"`, `"inputSchema"`}, []string{"k8s__pid"}},
		{"describe misspelt", `{"describe":"k8s_pdi"}`, true, []string{`no tool "k8s_pdi"`, "Closest", "k8s__pid()"}, nil},
		{"no query", `{}`, true, []string{"give a query"}, nil},
		{"bad arguments", `{"query":3}`, true, []string{"the arguments must be"}, nil},
		{"nothing matches", `{"query":"zebra xylophone"}`, false, []string{"no tool matches", "k8s, misc"}, nil},
		// What the model sent is repeated at most in part (it echoed a
		// whole 3 MB query), and past the schema's bound refused.
		{"long query, echoed in part", `{"query":"` + strings.Repeat("zebra ", 160) + `"}`, false, []string{`no tool matches "` + strings.Repeat("zebra ", 13) + `ze…"`}, nil},
		{"query past its bound", `{"query":"` + strings.Repeat("zebra ", 3<<20/6) + `"}`, true, []string{"query must be at most 1000 characters, not 3145728."}, nil},
		{"describe past its bound", `{"describe":"` + strings.Repeat("k", 200_000) + `"}`, true, []string{"describe must be at most 256 characters, not 200000."}, nil},
		{"describe echoed in part", `{"describe":"` + strings.Repeat("k", 250) + `"}`, true, []string{`no tool "` + strings.Repeat("k", 80) + `…"`}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			raw, found := p.SearchTools(context.Background(), nil, json.RawMessage(tc.args))
			text, isErr := resultText(t, raw)
			if len(text) > 2000 {
				t.Errorf("answer of %d bytes: %.200s", len(text), text)
			}
			if isErr != tc.isError {
				t.Fatalf("isError %v: %s", isErr, text)
			}
			for _, w := range tc.want {
				if !strings.Contains(text, w) {
					t.Errorf("answer lacks %q:\n%s", w, text)
				}
			}
			if tc.found != nil && !slices.Equal(found[:min(len(found), len(tc.found))], tc.found) {
				t.Errorf("found %v, want %v first", found, tc.found)
			}
		})
	}
}

func TestCallToolTarget(t *testing.T) {
	p := searchProxy(t)
	for _, tc := range []struct {
		name, args   string
		target, want string
	}{
		{"ok", `{"name":"k8s__listing","arguments":{"n":3}}`, "k8s__listing", ""},
		{"no arguments", `{"name":"k8s__pid"}`, "k8s__pid", ""},
		{"null arguments", `{"name":"k8s__pid","arguments":null}`, "k8s__pid", ""},
		{"misspelt", `{"name":"k8s__lsting"}`, "", "Closest, ready to run with call_tool:\nk8s__listing(n: number)"},
		{"no name", `{"arguments":{}}`, "", "the arguments must be"},
		{"arguments not an object", `{"name":"k8s__pid","arguments":[1]}`, "", "arguments must be a JSON object"},
		{"name past its bound", `{"name":"` + strings.Repeat("k", 200_000) + `"}`, "", "call_tool: name must be at most 256 characters, not 200000."},
		{"name echoed in part", `{"name":"` + strings.Repeat("k", 256) + `"}`, "", `no tool "` + strings.Repeat("k", 80) + `…"`},
		{"arguments echoed in part", `{"name":"k8s__pid","arguments":"` + strings.Repeat("x", 200_000) + `"}`, "", `not "` + strings.Repeat("x", 79) + `…`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			name, args, errRes := p.CallToolTarget(context.Background(), nil, json.RawMessage(tc.args))
			if tc.want == "" {
				if errRes != nil || name != tc.target {
					t.Fatalf("target %q, error %s", name, errRes)
				}
				if tc.name == "ok" && string(args) != `{"n":3}` {
					t.Fatalf("arguments %s", args)
				}
				if tc.name != "ok" && args != nil {
					t.Fatalf("arguments %s", args)
				}
				return
			}
			text, isErr := resultText(t, errRes)
			if len(text) > 2000 {
				t.Errorf("answer of %d bytes: %.200s", len(text), text)
			}
			if !isErr || !strings.Contains(text, tc.want) {
				t.Fatalf("error %v %q, want %q", isErr, text, tc.want)
			}
		})
	}
}

// TestSearchHidesAppOnlyToolsFromAppsHosts: an MCP Apps host hides an
// app-only tool from its model, so search_tools neither finds nor
// describes one for it; any other client's model is shown every tool.
func TestSearchHidesAppOnlyToolsFromAppsHosts(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	sc := config.Server{Name: "apps", Transport: config.TransportStdio, Cmd: []string{exe},
		Env: map[string]string{testupstream.EnvMode: testupstream.AppsMode}, Timeout: 20 * time.Second}
	p := New(Options{Logger: quiet(), Servers: []config.Server{sc}, Search: true})
	p.Start(context.Background(), nil)
	t.Cleanup(p.Close)
	if !testwait.Until(testwait.Timeout, func() bool { return p.HasTool("disk_poll") }) {
		t.Fatal("tools never listed")
	}
	for _, tc := range []struct {
		name   string
		r      *Request
		hidden bool
	}{
		{"apps host", &Request{Session: &capsSession{caps: apps()}}, true},
		{"other host", &Request{Session: &capsSession{}}, false},
		{"no session", nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, found := p.SearchTools(context.Background(), tc.r, json.RawMessage(`{"query":"mounted disk","limit":3}`))
			if !slices.Contains(found, "disk_usage") || !slices.Contains(found, "disk_list") {
				t.Errorf("found %v, want the page tool and the plain one", found)
			}
			if got := slices.Contains(found, "disk_poll"); got == tc.hidden {
				t.Errorf("found %v: the app-only tool found %v, want %v", found, got, !tc.hidden)
			}
			res, _ := p.SearchTools(context.Background(), tc.r, json.RawMessage(`{"describe":"disk_poll"}`))
			if text, isErr := resultText(t, res); isErr != tc.hidden {
				t.Errorf("describe disk_poll: error %v (%s), want %v", isErr, text, tc.hidden)
			}
		})
	}
}
