package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestModernClientHTTP and TestModernClientStdio run the TypeScript SDK v2
// client (modern.mjs), pinned to 2026-07-28 and in auto mode, through
// scratchpad-mcp served over streamable HTTP and over stdio, with two
// upstreams: server-filesystem (2025, stdio; read_text_file diverted above
// 1,000 tokens) and modern-server.mjs (modern-only, streamable HTTP; big
// diverted above 1,000 tokens). Each failure names its step:
// negotiation (2026-07-28 negotiated), list (the tools of both upstreams
// and the proxy's), divert (a large read comes back as a pointer), explore
// (head on the stored output, with its budget footer), pad
// (append_scratchpad, then read_scratchpad shows the note), confirm (the
// modern upstream's input-required elicitation completes through the
// proxy), divert-modern (the modern upstream's big result is diverted).
func TestModernClientHTTP(t *testing.T) { testModernClient(t, "http") }

// TestModernClientStdio: see [TestModernClientHTTP].
func TestModernClientStdio(t *testing.T) { testModernClient(t, "stdio") }

func testModernClient(t *testing.T, transport string) {
	if testing.Short() {
		t.Skip("e2e: skipped under -short (runs node and npm packages)")
	}
	node := requireNode(t)
	fsEntry := ensureNodeModules(t)
	bin := scratchpadBin(t)
	modern := startModernServer(t, node)
	data := t.TempDir()
	big := filepath.Join(data, "big.json")
	if err := os.WriteFile(big, bigJSONLines(1500), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(t.TempDir(), "scratchpad.toml")
	writeConfig(t, cfg, fmt.Sprintf(`memory_dir = %q

[mcp.servers.fs]
transport = "stdio"
cmd = [%q, %q, %q]

[mcp.servers.fs.scratchpad]
read_text_file = 1000

[mcp.servers.modern]
transport = "http_streamable"
url = %q

[mcp.servers.modern.scratchpad]
big = 1000
`, filepath.Join(t.TempDir(), "mem"), node, fsEntry, data, modern))

	var target []string
	if transport == "http" {
		target = []string{"--url", startHTTP(t, bin, cfg, "http") + "/mcp"}
	} else {
		target = []string{"--", bin, "serve", "--config", cfg, "--log-level", "warn"}
	}
	note := "e2e finding: the 2026 client reached the pad"
	ops := []map[string]any{
		{"op": "list", "until": "confirm", "ms": 20000},
		{"op": "call", "name": "read_text_file", "args": map[string]any{"path": big}},
		{"op": "call", "name": "head", "args": map[string]any{"file": "$diverted", "lines": 3}},
		{"op": "call", "name": "append_scratchpad", "args": map[string]any{"note": note}},
		{"op": "call", "name": "read_scratchpad", "args": map[string]any{}},
		{"op": "call", "name": "confirm", "args": map[string]any{}},
		{"op": "call", "name": "big", "args": map[string]any{"n": 3000}},
	}
	for _, era := range []string{"pin", "auto"} {
		t.Run(era, func(t *testing.T) {
			r := runModern(t, node, era, transport, target, ops)
			r.negotiated(t, "2026-07-28")
			r.listed(t, 0, "read_text_file", "head", "append_scratchpad", "read_scratchpad", "echo", "big", "confirm")
			r.explored(t, 2, r.diverted(t, "divert", 1))
			r.padded(t, 3, 4, note)
			r.confirmed(t, 5)
			r.diverted(t, "divert-modern", 6)
		})
	}
}

// TestUpstreamEras mounts a modern-only upstream (modern-server.mjs,
// streamable HTTP) and a 2025-only one (@modelcontextprotocol/server-everything,
// stdio, prefix ev) side by side: doctor must find both ready, and
// scratchpad-mcp served over streamable HTTP must serve both to the 2025
// client (modern.mjs --era legacy: SDK 1.32.2) and to the 2026 one (SDK v2
// pinned to 2026-07-28): each lists both servers' tools, calls a tool of
// each, gets the modern upstream's big result diverted, and completes the
// modern upstream's confirm (for the 2025 client the proxy turns the
// input-required result into an elicitation/create request).
func TestUpstreamEras(t *testing.T) {
	if testing.Short() {
		t.Skip("e2e: skipped under -short (runs node and npm packages)")
	}
	node := requireNode(t)
	ensureNodeModules(t)
	everything, err := filepath.Abs(everythingEntry)
	if err != nil {
		t.Fatal(err)
	}
	bin := scratchpadBin(t)
	modern := startModernServer(t, node)
	cfg := filepath.Join(t.TempDir(), "scratchpad.toml")
	writeConfig(t, cfg, fmt.Sprintf(`memory_dir = %q

[mcp.servers.modern]
transport = "http_streamable"
url = %q

[mcp.servers.modern.scratchpad]
big = 1000

[mcp.servers.everything]
transport = "stdio"
cmd = [%q, %q, "stdio"]
prefix = "ev"
`, filepath.Join(t.TempDir(), "mem"), modern, node, everything))

	t.Run("doctor", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		out, err := exec.CommandContext(ctx, bin, "doctor", "--config", cfg).CombinedOutput()
		for _, re := range []string{
			`(?m)^server modern \(http_streamable .*\): ready$`,
			`(?m)^server everything \(stdio .*\): ready$`,
			`(?m)^  big +intercepted at >= 1000 tokens$`,
			`(?m)^  ev__echo +never intercepted$`,
		} {
			if !regexp.MustCompile(re).Match(out) {
				t.Errorf("doctor: no line matching %s", re)
			}
		}
		if err != nil || t.Failed() {
			t.Errorf("doctor: %v\n%s", err, out)
		}
	})

	url := startHTTP(t, bin, cfg, "http") + "/mcp"
	ops := []map[string]any{
		{"op": "list", "until": "echo", "ms": 20000},
		{"op": "call", "name": "echo", "args": map[string]any{"text": "from the modern upstream"}},
		{"op": "call", "name": "ev__echo", "args": map[string]any{"message": "from the 2025 upstream"}},
		{"op": "call", "name": "big", "args": map[string]any{"n": 3000}},
		{"op": "call", "name": "confirm", "args": map[string]any{}},
	}
	for _, c := range []struct{ name, era, version string }{
		{"client_2025", "legacy", "2025-11-25"},
		{"client_2026", "pin", "2026-07-28"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := runModern(t, node, c.era, "http", []string{"--url", url}, ops)
			r.negotiated(t, c.version)
			r.listed(t, 0, "echo", "big", "confirm", "ev__echo", "ev__get-sum", "read_scratchpad")
			r.called(t, "call (modern upstream)", 1, "from the modern upstream")
			r.called(t, "call (2025 upstream)", 2, "from the 2025 upstream")
			r.diverted(t, "divert", 3)
			r.confirmed(t, 4)
		})
	}
}

// modernLine is one line modern.mjs prints.
type modernLine struct {
	Op              string          `json:"op"`
	Name            string          `json:"name"`
	ProtocolVersion string          `json:"protocolVersion"`
	Era             string          `json:"era"`
	Result          json.RawMessage `json:"result"`
	Error           *struct {
		Message string          `json:"message"`
		Code    json.RawMessage `json:"code"`
		Data    json.RawMessage `json:"data"`
	} `json:"error"`
}

// modernCall is a tools/call result as modern.mjs prints it.
type modernCall struct {
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
	IsError  bool           `json:"isError"`
	Meta     map[string]any `json:"_meta"`
	Elicited int            `json:"elicited"`
}

func (c *modernCall) text() string {
	var b strings.Builder
	for _, x := range c.Content {
		if x.Type == "text" {
			b.WriteString(x.Text)
		}
	}
	return b.String()
}

// modernRun is one run of modern.mjs: the connect line, then one line per op.
type modernRun struct {
	connect modernLine
	ops     []modernLine
	stderr  string
}

// runModern runs modern.mjs with the ops and returns its lines. It fails
// the test (step "negotiation") when the client could not connect.
func runModern(t *testing.T, node, era, transport string, target []string, ops []map[string]any) *modernRun {
	t.Helper()
	script, err := json.Marshal(ops)
	if err != nil {
		t.Fatal(err)
	}
	args := append([]string{"modern.mjs", "--era", era, "--transport", transport, "--ops", string(script)}, target...)
	// The stdio transport's server (and the SDK's probe sibling) are the
	// client's children: runNode kills the whole group.
	stdout, stderr, runErr := runNode(node, "", 50*time.Second, args...)
	r := &modernRun{stderr: stderr}
	for line := range strings.Lines(stdout) {
		var l modernLine
		if err := json.Unmarshal([]byte(line), &l); err != nil {
			t.Fatalf("modern.mjs --era %s: a line is not JSON: %v: %s\nstderr:\n%s", era, err, short(line), tail(r.stderr))
		}
		if l.Op == "connect" {
			r.connect = l
		} else {
			r.ops = append(r.ops, l)
		}
	}
	if r.connect.Op == "" || r.connect.Error != nil {
		msg := "no connect line"
		if r.connect.Error != nil {
			msg = r.connect.Error.Message
		}
		t.Fatalf("negotiation: the %s client (--era %s) did not connect over %s: %s (%v)\nstderr:\n%s", eraName(era), era, transport, msg, runErr, tail(r.stderr))
	}
	if runErr != nil || len(r.ops) != len(ops) {
		hung := "none"
		if len(r.ops) < len(ops) {
			b, _ := json.Marshal(ops[len(r.ops)])
			hung = string(b)
		}
		t.Fatalf("modern.mjs --era %s: %v, %d of %d ops answered (the first unanswered: %s)\nstderr:\n%s", era, runErr, len(r.ops), len(ops), hung, tail(r.stderr))
	}
	return r
}

func eraName(era string) string {
	if era == "legacy" {
		return "2025 (SDK 1.32.2)"
	}
	return "2026 (SDK v2, " + era + ")"
}

// negotiated checks the negotiated protocol version.
func (r *modernRun) negotiated(t *testing.T, want string) {
	t.Helper()
	if r.connect.ProtocolVersion != want {
		t.Errorf("negotiation: negotiated %q (era %s), want %s", r.connect.ProtocolVersion, r.connect.Era, want)
	}
}

// op returns op i's result, failing the step when it is an error.
func (r *modernRun) op(t *testing.T, step string, i int) (json.RawMessage, bool) {
	t.Helper()
	l := r.ops[i]
	if l.Error != nil {
		what := l.Op
		if l.Name != "" {
			what += " " + l.Name
		}
		msg := strings.Join(strings.Fields(l.Error.Message), " ")
		if len(msg) > 600 {
			msg = msg[:600] + "…"
		}
		t.Errorf("%s: %s failed: %s (code %s, data %s)", step, what, msg, l.Error.Code, l.Error.Data)
		return nil, false
	}
	return l.Result, true
}

// call returns op i's tools/call result, failing the step when it is an
// error or a tool error.
func (r *modernRun) call(t *testing.T, step string, i int) (*modernCall, bool) {
	t.Helper()
	raw, ok := r.op(t, step, i)
	if !ok {
		return nil, false
	}
	var c modernCall
	if err := json.Unmarshal(raw, &c); err != nil {
		t.Errorf("%s: %s: not a tools/call result: %v: %s", step, r.ops[i].Name, err, short(string(raw)))
		return nil, false
	}
	if c.IsError {
		t.Errorf("%s: %s answered with a tool error: %s", step, r.ops[i].Name, short(c.text()))
		return nil, false
	}
	return &c, true
}

func (r *modernRun) listed(t *testing.T, i int, want ...string) {
	t.Helper()
	raw, ok := r.op(t, "list", i)
	if !ok {
		return
	}
	var l struct {
		Tools []string `json:"tools"`
	}
	if err := json.Unmarshal(raw, &l); err != nil {
		t.Errorf("list: %v: %s", err, short(string(raw)))
		return
	}
	for _, w := range want {
		if !contains(l.Tools, w) {
			t.Errorf("list: tools/list lacks %q: %v", w, l.Tools)
		}
	}
}

func (r *modernRun) called(t *testing.T, step string, i int, want string) {
	t.Helper()
	if c, ok := r.call(t, step, i); ok && !strings.Contains(c.text(), want) {
		t.Errorf("%s: %s answered %q, want it to contain %q", step, r.ops[i].Name, short(c.text()), want)
	}
}

// diverted checks that op i's result is a pointer to a stored output and
// says whether it is.
func (r *modernRun) diverted(t *testing.T, step string, i int) bool {
	t.Helper()
	c, ok := r.call(t, step, i)
	if !ok {
		return false
	}
	d, _ := c.Meta["scratchpad/diverted"].(map[string]any)
	if file, _ := d["file"].(string); file == "" || !strings.Contains(c.text(), "was diverted to the scratchpad") || !strings.Contains(c.text(), file) {
		t.Errorf("%s: %s was not diverted to a pointer (_meta %v): %s", step, r.ops[i].Name, c.Meta, short(c.text()))
		return false
	}
	if len(c.text()) > 4000 {
		t.Errorf("%s: the pointer is %d bytes; it should be short", step, len(c.text()))
	}
	return true
}

var footerRE = regexp.MustCompile(`~([\d,]+) tokens, ~([\d,]+) left of ([\d,]+)`)

// explored checks op i, head on the output diverted before it (stored:
// whether there is one).
func (r *modernRun) explored(t *testing.T, i int, stored bool) {
	t.Helper()
	if !stored {
		t.Errorf("explore: not checked: nothing was diverted to explore")
		return
	}
	c, ok := r.call(t, "explore", i)
	if !ok {
		return
	}
	if !strings.Contains(c.text(), `"id": 0`) || !footerRE.MatchString(c.text()) {
		t.Errorf("explore: head on the stored output: want its first lines and the budget footer, got: %s", short(c.text()))
	}
}

func (r *modernRun) padded(t *testing.T, appendOp, readOp int, note string) {
	t.Helper()
	if _, ok := r.call(t, "pad", appendOp); !ok {
		return
	}
	if c, ok := r.call(t, "pad", readOp); ok && !strings.Contains(c.text(), note) {
		t.Errorf("pad: read_scratchpad after append_scratchpad lacks the note %q: %s", note, short(c.text()))
	}
}

func (r *modernRun) confirmed(t *testing.T, i int) {
	t.Helper()
	c, ok := r.call(t, "confirm", i)
	if !ok {
		return
	}
	if c.text() != "confirmed" || c.Elicited != 1 {
		t.Errorf("confirm: want \"confirmed\" after exactly one elicitation answered by the client, got %q after %d", short(c.text()), c.Elicited)
	}
}

// startModernServer runs modern-server.mjs on a free loopback port and
// returns its URL; it is killed at cleanup.
func startModernServer(t *testing.T, node string) string {
	t.Helper()
	return startScriptServer(t, node, "modern-server.mjs")
}

// startScriptServer runs a Node HTTP server script of e2e/ that takes
// HOST:PORT and prints "listening URL" on a free loopback port, and
// returns its URL; it is killed at cleanup.
func startScriptServer(t *testing.T, node, script string) string {
	t.Helper()
	cmd := exec.Command(node, script, "127.0.0.1:0")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var logs lockedBuffer
	cmd.Stderr = bufferWriter{&logs}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	urlc := make(chan string, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			logs.WriteString(sc.Text() + "\n")
			if u, ok := strings.CutPrefix(sc.Text(), "listening "); ok {
				select {
				case urlc <- u:
				default:
				}
			}
		}
		_, _ = io.Copy(io.Discard, stdout)
	}()
	exited := make(chan struct{})
	go func() { <-done; _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
		if t.Failed() {
			t.Logf("%s:\n%s", script, tail(logs.String()))
		}
	})
	select {
	case u := <-urlc:
		return u
	case <-exited:
		t.Fatalf("%s exited before listening:\n%s", script, logs.String())
	case <-time.After(30 * time.Second):
		t.Fatalf("%s did not listen within 30s:\n%s", script, logs.String())
	}
	return ""
}

// bigJSONLines is a pretty-printed JSON array of n items, one field a line
// (about 25 tokens an item), whose first item's name is item-0.
func bigJSONLines(n int) []byte {
	var b bytes.Buffer
	b.WriteString("[\n")
	for i := range n {
		if i > 0 {
			b.WriteString(",\n")
		}
		fmt.Fprintf(&b, "  {\n    \"id\": %d,\n    \"name\": \"item-%d\",\n    \"status\": %q\n  }", i, i, []string{"ok", "failed"}[i%2])
	}
	b.WriteString("\n]\n")
	return b.Bytes()
}

func writeConfig(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestModernPeersDirect checks the harness itself, with no proxy in
// between: modern.mjs against the go-sdk's everything-server (stateless
// streamable HTTP and stdio for the 2026 client, pinned and auto; stateful
// HTTP and stdio for the 2025 client) and against modern-server.mjs, which
// must serve the 2026 client (confirm through an input-required round) and
// refuse the 2025 one. When the tests through the proxy fail, this says
// the peers and the driver are not why.
func TestModernPeersDirect(t *testing.T) {
	if testing.Short() {
		t.Skip("e2e: skipped under -short (runs node, npm packages and the go-sdk's conformance server)")
	}
	node := requireNode(t)
	ensureNodeModules(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	es := buildEverythingServer(ctx, t)
	stateless, stateful := startEverythingHTTP(t, es), startEverythingHTTP(t, es, "-stateless=false")
	modern := startModernServer(t, node)

	// The everything-server asks for input with an input-required result
	// on 2026-07-28 and with an elicitation/create request on 2025.
	esOps := func(elicit string) []map[string]any {
		return []map[string]any{
			{"op": "list", "until": "test_simple_text"},
			{"op": "call", "name": "test_simple_text"},
			{"op": "call", "name": elicit, "args": map[string]any{"message": "proceed?"}},
			{"op": "readResource", "uri": "test://static-text"},
		}
	}
	for _, c := range []struct {
		name, era, transport, version string
		target                        []string
		elicit                        string
	}{
		{"everything_http_pin", "pin", "http", "2026-07-28", []string{"--url", stateless}, "test_input_required_result_elicitation"},
		{"everything_http_auto", "auto", "http", "2026-07-28", []string{"--url", stateless}, "test_input_required_result_elicitation"},
		{"everything_stdio_pin", "pin", "stdio", "2026-07-28", []string{"--", es}, "test_input_required_result_elicitation"},
		{"everything_stdio_auto", "auto", "stdio", "2026-07-28", []string{"--", es}, "test_input_required_result_elicitation"},
		{"everything_http_legacy", "legacy", "http", "2025-11-25", []string{"--url", stateful}, "test_elicitation"},
		{"everything_stdio_legacy", "legacy", "stdio", "2025-11-25", []string{"--", es}, "test_elicitation"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := runModern(t, node, c.era, c.transport, c.target, esOps(c.elicit))
			r.negotiated(t, c.version)
			r.listed(t, 0, "test_simple_text", c.elicit)
			r.called(t, "call", 1, "simple text response")
			if e, ok := r.call(t, "elicit", 2); ok && e.Elicited != 1 {
				t.Errorf("elicit: %s: the client answered %d elicitations, want 1: %s", c.elicit, e.Elicited, short(e.text()))
			}
			if raw, ok := r.op(t, "readResource", 3); ok && !strings.Contains(string(raw), "static text resource") {
				t.Errorf("readResource: %s", short(string(raw)))
			}
		})
	}

	modernOps := []map[string]any{
		{"op": "list"},
		{"op": "call", "name": "echo", "args": map[string]any{"text": "hello"}},
		{"op": "call", "name": "big", "args": map[string]any{"n": 3}},
		{"op": "call", "name": "confirm"},
	}
	for _, era := range []string{"pin", "auto"} {
		t.Run("modern_"+era, func(t *testing.T) {
			r := runModern(t, node, era, "http", []string{"--url", modern}, modernOps)
			r.negotiated(t, "2026-07-28")
			r.listed(t, 0, "echo", "big", "confirm")
			r.called(t, "call", 1, "hello")
			if c, ok := r.call(t, "big", 2); ok && strings.Count(c.text(), "\n") != 2 {
				t.Errorf("big {n: 3}: want 3 lines, got %q", c.text())
			}
			r.confirmed(t, 3)
		})
	}
	t.Run("modern_legacy_refused", func(t *testing.T) {
		out, err := exec.CommandContext(ctx, node, "modern.mjs", "--era", "legacy", "--transport", "http", "--url", modern, "--ops", "[]").Output()
		var l modernLine
		if jerr := json.Unmarshal(bytes.TrimSpace(out), &l); err == nil || jerr != nil || l.Error == nil || !strings.Contains(l.Error.Message, "-32022") && !strings.Contains(l.Error.Message, "Unsupported protocol version") {
			t.Errorf("the 2025 client connected to the modern-only server, or failed otherwise: %v: %s", err, out)
		}
	})
}
