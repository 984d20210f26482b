package e2e

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// systemMonitorEntry is @modelcontextprotocol/server-system-monitor's
// entry script (an MCP Apps server: get-system-info names a ui:// page,
// poll-system-stats is for that page only), relative to e2e/.
var systemMonitorEntry = filepath.Join("node_modules", "@modelcontextprotocol", "server-system-monitor", "dist", "index.js")

// appsRun is what apps.mjs printed: each step's JSON.
type appsRun struct {
	Connect struct {
		ProtocolVersion string `json:"protocolVersion"`
		Error           string `json:"error"`
	} `json:"connect"`
	Tools   json.RawMessage `json:"tools"`
	Page    json.RawMessage `json:"page"`
	Model   json.RawMessage `json:"model"`
	View    json.RawMessage `json:"view"`
	Poll    json.RawMessage `json:"poll"`
	Budget  json.RawMessage `json:"budget"`
	ByModel json.RawMessage `json:"byModel"`
}

// appsResult is the part of a tools/call result the test judges.
type appsResult struct {
	Content []struct {
		Text string `json:"text"`
	} `json:"content"`
	Structured json.RawMessage            `json:"structuredContent"`
	IsError    bool                       `json:"isError"`
	Meta       map[string]json.RawMessage `json:"_meta"`
	Error      string                     `json:"error"` // the step failed
}

func (r appsResult) diverted() bool { _, ok := r.Meta["scratchpad/diverted"]; return ok }

func (r appsResult) text() string {
	var b strings.Builder
	for _, c := range r.Content {
		b.WriteString(c.Text)
	}
	return b.String()
}

// TestAppsWithSystemMonitor (issue 55) puts the real MCP Apps server
// @modelcontextprotocol/server-system-monitor 2.0.3 behind scratchpad-mcp
// with every tool divertable at 5 tokens (what `init` writes is every tool
// divertable), and runs apps.mjs: the TypeScript SDK v2 client as an MCP
// Apps host with ext-apps 2.0.4's AppBridge and, on its other side, the
// view's App. Both eras (2025-11-25 and 2026-07-28), and a host without
// the extension. Each failure names its step:
//   - tools: get-system-info (the page's tool) and poll-system-stats (the
//     page's only) keep their outputSchema and _meta.ui;
//   - page: the ui:// page reads whole, byte for byte (never diverted);
//   - model: get-system-info over its threshold: content is the pointer,
//     structuredContent the upstream's (the SDK validates it against the
//     outputSchema, so a pointer breaking it fails the call);
//   - view: the page, handed that result by AppBridge
//     (ui/notifications/tool-result), gets the data it renders;
//   - poll: the page's own call comes back whole, as the upstream wrote it;
//   - budget: three polls by the page cost the agent's budget nothing.
//
// Without the extension, the host shows every tool to its model: the
// page's tool is diverted like any other, and so is its budget's charge.
func TestAppsWithSystemMonitor(t *testing.T) {
	if testing.Short() {
		t.Skip("e2e: skipped under -short (runs node and npm packages)")
	}
	node := requireNode(t)
	ensureNodeModules(t)
	entry, err := filepath.Abs(systemMonitorEntry)
	if err != nil {
		t.Fatal(err)
	}
	page, err := os.ReadFile(filepath.Join(filepath.Dir(entry), "mcp-app.html"))
	if err != nil {
		t.Fatalf("the system monitor's page: %v", err)
	}
	bin := scratchpadBin(t)
	config := func(extra string) string {
		cfg := filepath.Join(t.TempDir(), "scratchpad.toml")
		writeConfig(t, cfg, fmt.Sprintf(`memory_dir = %q
%s
[mcp.servers.monitor]
transport = "stdio"
cmd = [%q, %q, "--stdio"]
listing = "always"

[mcp.servers.monitor.scratchpad]
"*" = 5
`, filepath.Join(t.TempDir(), "mem"), extra, node, entry))
		return cfg
	}
	plain, search := config(""), config("\n[catalogue]\nmode = \"search\"\n")

	for _, tt := range []struct {
		name    string
		era     string // apps.mjs --era
		version string // negotiated
		ui      bool   // the host declares io.modelcontextprotocol/ui
		search  bool   // [catalogue] mode = "search": call_tool is the model's
	}{
		{"2025 apps host", "legacy", "2025-11-25", true, false},
		{"2026 apps host", "pin", "2026-07-28", true, false},
		{"2025 host without apps", "legacy", "2025-11-25", false, false},
		{"2026 host without apps", "pin", "2026-07-28", false, false},
		{"2026 apps host, search mode", "pin", "2026-07-28", true, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := plain
			if tt.search {
				cfg = search
			}
			r := runApps(t, node, tt.era, tt.ui, bin, cfg)
			var byModel appsResult
			_ = json.Unmarshal(r.ByModel, &byModel)
			if tt.search && (byModel.Error != "" || !byModel.diverted()) {
				t.Errorf("byModel: poll-system-stats through call_tool is the model's call, yet not diverted: %s", short(string(r.ByModel)))
			}
			if r.Connect.ProtocolVersion != tt.version {
				t.Fatalf("connect: negotiated %q (%s), want %s", r.Connect.ProtocolVersion, r.Connect.Error, tt.version)
			}
			checkAppsListing(t, r.Tools)

			var pg struct {
				URI, MimeType, Sha256, Error string
				Bytes                        int
			}
			_ = json.Unmarshal(r.Page, &pg)
			sum := sha256.Sum256(page)
			switch {
			case !tt.ui && (pg.Error != "" || pg.Bytes == 0):
				t.Errorf("page: a host without the extension could not read the page (%q, %d bytes): it is a resource like any other, diverted over its threshold", pg.Error, pg.Bytes)
			case !tt.ui && (pg.MimeType == "text/html;profile=mcp-app" || pg.Sha256 == hex.EncodeToString(sum[:])):
				t.Errorf("page: a host without the extension read the page whole (%s, %d bytes): it is a resource like any other, over its threshold", pg.MimeType, pg.Bytes)
			case tt.ui && (pg.MimeType != "text/html;profile=mcp-app" || pg.Sha256 != hex.EncodeToString(sum[:])):
				t.Errorf("page: %s, %s, %d bytes (%s), want the page as the server has it: %d bytes", pg.URI, pg.MimeType, pg.Bytes, pg.Error, len(page))
			}

			var model appsResult
			if err := json.Unmarshal(r.Model, &model); err != nil || model.Error != "" {
				t.Fatalf("model: the call failed: %s %v", model.Error, err)
			}
			if !model.diverted() || !strings.Contains(model.text(), "Output of monitor/get-system-info was diverted") {
				t.Errorf("model: get-system-info not diverted: %s", short(string(r.Model)))
			}
			if model.IsError {
				t.Errorf("model: the pointer is an error result: %s", short(string(r.Model)))
			}
			var info struct {
				Hostname string
				CPU      struct{ Count int }
			}
			if err := json.Unmarshal(model.Structured, &info); err != nil || info.Hostname == "" || info.CPU.Count == 0 {
				t.Errorf("model: structuredContent %s is not the system's info (%v)", short(string(model.Structured)), err)
			}

			var poll appsResult
			if err := json.Unmarshal(r.Poll, &poll); err != nil || poll.Error != "" {
				t.Fatalf("poll: the call failed: %s %v", poll.Error, err)
			}
			before, after := budgetFooters(t, r.Budget)
			if !tt.ui {
				// A host without the extension shows the tool to its model.
				if !poll.diverted() {
					t.Errorf("poll: a host without the extension got poll-system-stats whole: %s", short(string(r.Poll)))
				}
				if spent := before.left - after.left; spent <= after.cost {
					t.Errorf("budget: three polls diverted for the model cost %d tokens in all with the second head's %d", spent, after.cost)
				}
				return
			}

			var view struct {
				Received appsResult `json:"received"`
				Error    string     `json:"error"`
			}
			if err := json.Unmarshal(r.View, &view); err != nil || view.Error != "" {
				t.Fatalf("view: %s %v", view.Error, err)
			}
			if len(view.Received.Structured) == 0 || !jsonEqual(view.Received.Structured, model.Structured) || view.Received.text() != model.text() {
				t.Errorf("view: the page received %s, want the result the host got: %s", short(string(r.View)), short(string(r.Model)))
			}

			if poll.diverted() || poll.IsError {
				t.Errorf("poll: the page's own tool was diverted or failed: %s", short(string(r.Poll)))
			}
			var stats struct {
				CPU struct {
					Cores []struct{ Idle, Total float64 }
				}
				Timestamp string
			}
			if err := json.Unmarshal(poll.Structured, &stats); err != nil || len(stats.CPU.Cores) == 0 || stats.Timestamp == "" {
				t.Errorf("poll: structuredContent %s is not the stats (%v)", short(string(poll.Structured)), err)
			}
			if !jsonEqual(json.RawMessage(poll.text()), poll.Structured) {
				t.Errorf("poll: the text is not the data whole: %s", short(poll.text()))
			}
			if spent := before.left - after.left; spent != after.cost {
				t.Errorf("budget: %d left before three polls by the page, %d after; only the second head's %d should be spent", before.left, after.left, after.cost)
			}
		})
	}
}

// checkAppsListing: both tools listed with their outputSchema and _meta.ui.
func checkAppsListing(t *testing.T, raw json.RawMessage) {
	t.Helper()
	var tools []struct {
		Name         string
		OutputSchema json.RawMessage
		Meta         struct {
			UI struct {
				ResourceURI string   `json:"resourceUri"`
				Visibility  []string `json:"visibility"`
			} `json:"ui"`
		} `json:"_meta"`
	}
	if err := json.Unmarshal(raw, &tools); err != nil {
		t.Fatalf("tools: %v: %s", err, short(string(raw)))
	}
	found := 0
	for _, tl := range tools {
		switch tl.Name {
		case "get-system-info":
			found++
			if tl.Meta.UI.ResourceURI != "ui://system-monitor/mcp-app.html" {
				t.Errorf("tools: get-system-info's _meta.ui.resourceUri %q", tl.Meta.UI.ResourceURI)
			}
		case "poll-system-stats":
			found++
			if len(tl.Meta.UI.Visibility) != 1 || tl.Meta.UI.Visibility[0] != "app" {
				t.Errorf("tools: poll-system-stats's visibility %v", tl.Meta.UI.Visibility)
			}
		default:
			continue
		}
		if !bytes.Contains(tl.OutputSchema, []byte(`"required"`)) {
			t.Errorf("tools: %s lost its outputSchema (%s)", tl.Name, tl.OutputSchema)
		}
	}
	if found != 2 {
		t.Fatalf("tools: the system monitor's two tools are not listed: %s", short(string(raw)))
	}
}

// footer is what an exploration answer's footer says.
type footer struct{ cost, left int }

// budgetFooters reads the budget step's two heads.
func budgetFooters(t *testing.T, raw json.RawMessage) (before, after footer) {
	t.Helper()
	var b struct{ Before, After, Error string }
	_ = json.Unmarshal(raw, &b)
	parse := func(s string) footer {
		m := footerRE.FindStringSubmatch(s)
		if m == nil {
			t.Fatalf("budget: no footer in %q (%s)", short(s), b.Error)
		}
		n := func(s string) int { v, _ := strconv.Atoi(strings.ReplaceAll(s, ",", "")); return v }
		return footer{n(m[1]), n(m[2])}
	}
	return parse(b.Before), parse(b.After)
}

// runApps runs apps.mjs against scratchpad-mcp over stdio.
func runApps(t *testing.T, node, era string, ui bool, bin, cfg string) appsRun {
	t.Helper()
	args := []string{"apps.mjs", "--era", era, "--tool", "get-system-info", "--poll", "poll-system-stats"}
	if !ui {
		args = append(args, "--no-ui")
	}
	args = append(args, "--", bin, "serve", "--config", cfg, "--log-level", "warn")
	out, stderr, err := runNode(node, "", 90*time.Second, args...)
	var r appsRun
	if jerr := json.Unmarshal([]byte(out), &r); jerr != nil {
		t.Fatalf("apps.mjs: %v, %v\nstdout: %s\nstderr: %s", err, jerr, short(out), tail(stderr))
	}
	return r
}

// TestAppsExtensionReachesUpstreams (issue 55): an MCP Apps server may list
// its page's tool only to a host that declared io.modelcontextprotocol/ui
// (apps-server.mjs does, as ext-apps documents it). Two such upstreams
// behind scratchpad-mcp, a 2025 one (stdio: decided at initialize) and a
// 2026-07-28 one (streamable HTTP: decided per request), and clients of
// both eras with and without the extension, plus an extension the proxy
// does not carry (never declared to an upstream). What each upstream saw
// declared is what its caps tool answers.
//
// The proxy's offer (proxy/extensions.go): over stdio a 2025 client's
// initialize is mirrored (the upstreams are told what it declared of the
// carried extensions); with no single client known at start (a 2026
// client, whose capabilities come per request, or HTTP) the upstreams
// are told the extensions the proxy carries. A 2026 upstream is told the
// caller's own with every call.
func TestAppsExtensionReachesUpstreams(t *testing.T) {
	if testing.Short() {
		t.Skip("e2e: skipped under -short (runs node and npm packages)")
	}
	node := requireNode(t)
	ensureNodeModules(t)
	bin := scratchpadBin(t)
	modern := startScriptServer(t, node, "apps-server.mjs")
	script, err := filepath.Abs("apps-server.mjs")
	if err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(t.TempDir(), "scratchpad.toml")
	writeConfig(t, cfg, fmt.Sprintf(`memory_dir = %q

[mcp.servers.a25]
transport = "stdio"
cmd = [%q, %q, "--stdio"]
prefix = "a25"

[mcp.servers.a26]
transport = "http_streamable"
url = %q
prefix = "a26"
`, filepath.Join(t.TempDir(), "mem"), node, script, modern))
	stdio := []string{"--", bin, "serve", "--config", cfg, "--log-level", "warn"}
	http := startHTTP(t, bin, cfg, "http") + "/mcp"
	const ui = `"io.modelcontextprotocol/ui":{"mimeTypes":["text/html;profile=mcp-app"]}`
	ops := []map[string]any{
		{"op": "list", "until": "a26__caps", "ms": 20000},
		{"op": "call", "name": "a25__caps"},
		{"op": "call", "name": "a26__caps"},
	}
	for _, tt := range []struct {
		name      string
		era       string
		transport string
		apps      bool // the client declares the extension
		want25    bool // the 2025 upstream was told of it (lists weather)
		want26    bool // the 2026 upstream's listing was
		call26    bool // the 2026 upstream's call was
	}{
		{"stdio, 2025 apps host", "legacy", "stdio", true, true, true, true},
		{"stdio, 2025 other host", "legacy", "stdio", false, false, false, false},
		{"stdio, 2026 apps host", "pin", "stdio", true, true, true, true},
		{"stdio, 2026 other host", "pin", "stdio", false, true, true, false},
		{"http, 2025 other host", "legacy", "http", false, true, true, false},
		{"http, 2026 apps host", "pin", "http", true, true, true, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			target := append([]string(nil), stdio...)
			if tt.transport == "http" {
				target = []string{"--url", http}
			}
			if tt.apps {
				// com.example/x is carried by no one: never passed on.
				target = append([]string{"--extensions", `{` + ui + `,"com.example/x":{}}`}, target...)
			}
			r := runModern(t, node, tt.era, tt.transport, target, ops)
			lists := func(name string) bool {
				raw, _ := r.op(t, "list", 0)
				var l struct{ Tools []string }
				_ = json.Unmarshal(raw, &l)
				return contains(l.Tools, name)
			}
			for _, u := range []struct {
				name string
				want bool
			}{{"a25", tt.want25}, {"a26", tt.want26}} {
				if got := lists(u.name + "__weather"); got != u.want || lists(u.name+"__weather-text") == u.want {
					t.Errorf("list: %s lists its page's tool %v, want %v (the extension declared to it)", u.name, got, u.want)
				}
			}
			for i, want := range map[int]bool{1: tt.want25, 2: tt.call26} {
				c, ok := r.call(t, "caps", i)
				if !ok {
					continue
				}
				if got := strings.Contains(c.text(), `"io.modelcontextprotocol/ui"`); got != want {
					t.Errorf("caps: %s was told %s; want the extension declared %v", r.ops[i].Name, c.text(), want)
				}
				if strings.Contains(c.text(), "com.example/x") {
					t.Errorf("caps: %s was told of an extension the proxy does not carry: %s", r.ops[i].Name, c.text())
				}
			}
		})
	}
}
