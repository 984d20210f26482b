package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testwait"
)

// writeConfig writes a config with the test upstream as server "k8s".
func writeConfig(t *testing.T, extra string) (path, mem string) {
	t.Helper()
	return writeAgentConfig(t, "", extra)
}

// writeAgentConfig is [writeConfig] with lines for its [agent] table
// (e.g. "context_window = 50000000\n").
func writeAgentConfig(t *testing.T, agent, extra string) (path, mem string) {
	t.Helper()
	dir := t.TempDir()
	mem = filepath.Join(dir, "mem")
	cfg := fmt.Sprintf(`memory_dir = %q

[agent]
model = "gpt-4o"
%s
[agent.scratchpad]
max_extraction_tokens = 2000

[mcp.servers.k8s]
transport = "stdio"
cmd = [%q]
env = { SCRATCHPAD_TESTUPSTREAM = "stdio" }

[mcp.servers.k8s.scratchpad]
"listing" = { min_tokens = 1000 }
"words" = 500
%s`, mem, agent, upstreamCmd(), extra)
	path = filepath.Join(dir, "scratchpad.toml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return path, mem
}

// protocolVersion is the version most tests' clients ask for: the latest
// with an initialize handshake, sessions and resumable streams, which
// those tests are about. go-sdk's default, 2026-07-28, sends
// server/discover instead of initialize; tests of that era ask for it
// by name ([connectWith]).
const protocolVersion = "2025-11-25"

// connect starts a go-sdk client session over tr: initialize, then
// notifications/initialized. The initialize must answer within 30 s; the
// session itself is not bound to that deadline (go-sdk's SSE client keeps
// Connect's context for its stream).
func connect(t *testing.T, tr mcp.Transport) *mcp.ClientSession {
	t.Helper()
	return connectWith(t, tr, nil, protocolVersion)
}

// connectWith is [connect] with the client's options (nil: go-sdk's
// defaults) and the protocol version it asks for.
func connectWith(t *testing.T, tr mcp.Transport, opts *mcp.ClientOptions, version string) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	timer := time.AfterFunc(30*time.Second, cancel)
	c := mcp.NewClient(&mcp.Implementation{Name: "serve-test", Version: "1"}, opts)
	cs, err := c.Connect(ctx, tr, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil || !timer.Stop() {
		cancel()
		t.Fatalf("initialize: %v", err)
	}
	return cs
}

// stdioSession runs bin with args as a stdio MCP server (env nil: this
// process's environment) and connects to it.
func stdioSession(t *testing.T, env []string, bin string, args ...string) *mcp.ClientSession {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	if testing.Verbose() {
		cmd.Stderr = os.Stderr
	}
	return connect(t, &mcp.CommandTransport{Command: cmd})
}

func waitForTool(t *testing.T, c *mcp.ClientSession, name string) []*mcp.Tool {
	t.Helper()
	var tools []*mcp.Tool
	var err error
	listed := testwait.Until(testwait.Timeout, func() bool {
		var res *mcp.ListToolsResult
		if res, err = c.ListTools(context.Background(), nil); err != nil {
			return false
		}
		for _, tl := range res.Tools {
			if tl.Name == name {
				tools = res.Tools
				return true
			}
		}
		return false
	})
	if !listed {
		t.Fatalf("tool %q never listed (last error %v)", name, err)
	}
	return tools
}

// text joins a result's text content.
func text(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, ct := range res.Content {
		if tc, ok := ct.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

func callTool(t *testing.T, c *mcp.ClientSession, name string, args map[string]any) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := c.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return text(res)
}

func short(s string) string {
	if len(s) > 1500 {
		return s[:1500] + "…"
	}
	return s
}

var suggestedCall = regexp.MustCompile(`(?m)^- (iterate_over) (\{.*\})$`)

// exerciseSession runs the product's core loop against a connected
// client: a large upstream result is diverted, the pointer's own
// suggested call works, exploration respects the per-call cap.
func exerciseSession(t *testing.T, c *mcp.ClientSession) {
	t.Helper()
	tools := waitForTool(t, c, "listing")
	names := map[string]bool{}
	for _, tl := range tools {
		names[tl.Name] = true
	}
	for _, want := range []string{"head", "slice", "grep", "schema", "item_schema", "get_in", "iterate_over", "read", "read_scratchpad", "echo"} {
		if !names[want] {
			t.Errorf("tool %q not listed", want)
		}
	}
	if got := callTool(t, c, "echo", map[string]any{"text": "small"}); got != "small" {
		t.Fatalf("small result changed: %q", got)
	}
	pointer := callTool(t, c, "listing", map[string]any{"n": 400})
	if !strings.Contains(pointer, "was diverted to the scratchpad") {
		t.Fatalf("large listing not diverted:\n%s", short(pointer))
	}
	m := suggestedCall.FindStringSubmatch(pointer)
	if m == nil {
		t.Fatalf("pointer has no iterate_over suggestion:\n%s", pointer)
	}
	var args map[string]any
	if err := json.Unmarshal([]byte(m[2]), &args); err != nil {
		t.Fatal(err)
	}
	rows := callTool(t, c, "iterate_over", args)
	if !strings.Contains(rows, `"_index": 0`) && !strings.Contains(rows, `"_index":0`) || !strings.Contains(rows, "web-0") {
		t.Fatalf("suggested iterate_over did not return rows:\n%s", short(rows))
	}
	if !strings.Contains(rows, "--- iterate_over:") {
		t.Errorf("no footer:\n%s", short(rows))
	}
	file := args["file"].(string)
	schema := callTool(t, c, "schema", map[string]any{"file": file})
	if !strings.Contains(schema, "items") {
		t.Errorf("schema lacks items:\n%s", short(schema))
	}
	tooBig := callTool(t, c, "head", map[string]any{"file": file, "lines": 100000})
	var e struct {
		Error       string           `json:"error"`
		Suggestions []map[string]any `json:"suggestions"`
	}
	if err := json.Unmarshal([]byte(tooBig), &e); err != nil || e.Error != "head_too_large" || len(e.Suggestions) == 0 {
		t.Errorf("over-cap head: want head_too_large with suggestions, got:\n%s", short(tooBig))
	}
	esc := callTool(t, c, "head", map[string]any{"file": "../../../etc/passwd"})
	if strings.Contains(esc, "root:x:") || !strings.Contains(esc, `"error":"file_outside_root"`) {
		t.Errorf("path escape not refused:\n%s", short(esc))
	}
}

func TestServeStdioEndToEnd(t *testing.T) {
	cfg, mem := writeConfig(t, "")
	c := stdioSession(t, nil, binary(t), "serve", "--config", cfg, "--log-level", "warn")
	defer c.Close()
	res := c.InitializeResult()
	if !strings.Contains(res.Instructions, "max_extraction_tokens=2000") {
		t.Errorf("instructions do not advertise limits: %q", res.Instructions)
	}
	exerciseSession(t, c)
	entries, _ := os.ReadDir(filepath.Join(mem, "scratchpad"))
	if len(entries) != 1 || !strings.HasPrefix(entries[0].Name(), "k8s-listing-") {
		t.Errorf("stored outputs: %v", entries)
	}
	c.Close()
	// stdio EOF finishes the agent: one usage record.
	var b []byte
	if !testwait.Until(testwait.Timeout, func() bool {
		b, _ = os.ReadFile(filepath.Join(mem, "usage.jsonl"))
		return strings.Count(string(b), "\n") == 1
	}) {
		t.Fatalf("usage.jsonl after EOF: %q", b)
	}
	if !strings.Contains(string(b), `"agent_name":"main"`) {
		t.Errorf("usage record: %s", b)
	}
}

// startHTTP runs `serve --transport kind` on a free loopback port and
// returns its base URL.
func startHTTP(t *testing.T, kind, cfg string, extra ...string) string {
	t.Helper()
	return startHTTPLogged(t, kind, cfg, nil, extra...)
}

// serverLog is what a server started by [startHTTPLogged] wrote to its
// log (stderr) so far.
type serverLog struct {
	mu    sync.Mutex
	lines []string
}

func (l *serverLog) add(line string) {
	l.mu.Lock()
	l.lines = append(l.lines, line)
	l.mu.Unlock()
}

// first is the first line so far that match accepts ("" when none).
func (l *serverLog) first(match func(string) bool) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, line := range l.lines {
		if match(line) {
			return line
		}
	}
	return ""
}

// wait is [serverLog.first], waiting up to limit for a line match
// accepts ("" when none came).
func (l *serverLog) wait(t *testing.T, limit time.Duration, match func(string) bool) string {
	t.Helper()
	var line string
	testwait.Until(limit, func() bool { line = l.first(match); return line != "" })
	return line
}

// tail is the last n lines so far.
func (l *serverLog) tail(n int) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines[max(0, len(l.lines)-n):], "\n")
}

func (l *serverLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}

// startHTTPLogged is [startHTTP] recording the server's log in log (when
// not nil).
func startHTTPLogged(t *testing.T, kind, cfg string, log *serverLog, extra ...string) string {
	t.Helper()
	base, _ := startHTTPProcess(t, kind, cfg, log, extra...)
	return base
}

// startHTTPProcess is [startHTTPLogged] returning the process too (to
// kill it as a crash would).
func startHTTPProcess(t *testing.T, kind, cfg string, log *serverLog, extra ...string) (string, *exec.Cmd) {
	t.Helper()
	cmd := exec.Command(binary(t), append([]string{"serve", "--config", cfg, "--transport", kind, "--addr", "127.0.0.1:0"}, extra...)...)
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
		}
	})
	addrRe := regexp.MustCompile(`msg=serving .*addr=(\S+)`)
	sc := bufio.NewScanner(stderr)
	found := make(chan string, 1)
	go func() {
		for sc.Scan() {
			if log != nil {
				log.add(sc.Text())
			}
			if m := addrRe.FindStringSubmatch(sc.Text()); m != nil {
				found <- m[1]
			}
			if testing.Verbose() {
				fmt.Fprintln(os.Stderr, "server:", sc.Text())
			}
		}
	}()
	select {
	case addr := <-found:
		return "http://" + addr, cmd
	case <-time.After(30 * time.Second):
		t.Fatal("server did not report its address")
	}
	return "", cmd
}

// headerTransport adds fixed headers (identity, Authorization) to every
// request: the POSTs, the standalone GET stream and the closing DELETE.
type headerTransport struct {
	headers map[string]string
	base    http.RoundTripper
}

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range h.headers {
		r.Header.Set(k, v)
	}
	return h.base.RoundTrip(r)
}

// httpClient connects a go-sdk streamable HTTP client that sends headers
// on every request; the session is closed when the test ends.
func httpClient(t *testing.T, url string, headers map[string]string) *mcp.ClientSession {
	t.Helper()
	hc := &http.Client{Transport: headerTransport{headers, http.DefaultTransport}}
	c := connect(t, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: hc})
	t.Cleanup(func() { c.Close() })
	return c
}

func TestServeHTTPEndToEnd(t *testing.T) {
	cfg, mem := writeConfig(t, "")
	base := startHTTP(t, "http", cfg)

	// Subscribe to usage events before anything finishes.
	evReq, _ := http.NewRequest("GET", base+"/events", nil)
	evResp, err := http.DefaultClient.Do(evReq)
	if err != nil {
		t.Fatal(err)
	}
	defer evResp.Body.Close()
	events := make(chan string, 8)
	go func() {
		sc := bufio.NewScanner(evResp.Body)
		var ev string
		for sc.Scan() {
			line := sc.Text()
			if v, ok := strings.CutPrefix(line, "event: "); ok {
				ev = v
			}
			if v, ok := strings.CutPrefix(line, "data: "); ok && ev == "scratchpad_usage" {
				events <- v
			}
		}
	}()

	a := httpClient(t, base+"/mcp", map[string]string{"X-Scratchpad-Agent": "alice", "X-Scratchpad-Run": "run1", "X-Scratchpad-Iteration": "1"})
	b := httpClient(t, base+"/mcp", map[string]string{"X-Scratchpad-Agent": "bob", "X-Scratchpad-Run": "run1", "X-Scratchpad-Iteration": "2"})
	exerciseSession(t, a)
	exerciseSession(t, b)
	for _, it := range []string{"iteration-1", "iteration-2"} {
		entries, err := os.ReadDir(filepath.Join(mem, "run1", it, "scratchpad"))
		if err != nil || len(entries) != 1 {
			t.Errorf("%s: stored outputs %v %v", it, entries, err)
		}
	}
	// Ending alice's session emits her usage, streamed on /events.
	a.Close()
	select {
	case ev := <-events:
		var u struct {
			AgentName         string `json:"agent_name"`
			RunID             string `json:"run_id"`
			TokensIntercepted int    `json:"tokens_intercepted"`
			TokensExtracted   int    `json:"tokens_extracted"`
		}
		if err := json.Unmarshal([]byte(ev), &u); err != nil {
			t.Fatal(err)
		}
		if u.AgentName != "alice" || u.RunID != "run1" || u.TokensIntercepted == 0 || u.TokensExtracted == 0 {
			t.Errorf("usage event %s", ev)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("no scratchpad_usage event after the session ended")
	}
}

func TestServeSSEEndToEnd(t *testing.T) {
	cfg, _ := writeConfig(t, "")
	base := startHTTP(t, "sse", cfg)
	c := connect(t, &mcp.SSEClientTransport{Endpoint: base + "/sse"})
	defer c.Close()
	exerciseSession(t, c)
}

func TestServeHTTPRejectsBadIdentityAndOrigin(t *testing.T) {
	cfg, _ := writeConfig(t, "")
	base := startHTTP(t, "http", cfg)
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`
	for _, tc := range []struct {
		header, value string
		status        int
	}{
		{"X-Scratchpad-Run", "../../etc", http.StatusBadRequest},
		{"X-Scratchpad-Role", "root", http.StatusBadRequest},
		{"Origin", "https://evil.example", http.StatusForbidden},
		{"Host", "evil.example", http.StatusForbidden}, // DNS rebinding onto a loopback listener
	} {
		req, _ := http.NewRequest("POST", base+"/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if tc.header == "Host" {
			req.Host = tc.value
		} else {
			req.Header.Set(tc.header, tc.value)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.status {
			t.Errorf("%s: %s → %d %s, want %d", tc.header, tc.value, resp.StatusCode, b, tc.status)
		}
	}
}

func TestServeRefusesPublicBindWithoutAuth(t *testing.T) {
	cfg, _ := writeConfig(t, "")
	out, err := exec.Command(binary(t), "serve", "--config", cfg, "--transport", "http", "--addr", "0.0.0.0:0").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "not a loopback address") {
		t.Fatalf("want refusal, got err=%v\n%s", err, out)
	}
}

func TestServeBadConfigNamesFileAndLine(t *testing.T) {
	path, _ := writeConfig(t, "\n[mcp.servers.k8s.scratchpad]\n")
	bad := filepath.Join(filepath.Dir(path), "bad.toml")
	if err := os.WriteFile(bad, []byte("memory_dir = \"/tmp/x\"\n\n[agent.scratchpad]\nenabeld = true\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(binary(t), "serve", "--config", bad).CombinedOutput()
	if err == nil {
		t.Fatal("serve accepted an unknown key")
	}
	if !strings.Contains(string(out), "bad.toml:4") || !strings.Contains(string(out), "enabeld") {
		t.Errorf("error should name the file, line and key:\n%s", out)
	}
}

func TestServeOnDefaults(t *testing.T) {
	env := append(os.Environ(), "XDG_DATA_HOME="+t.TempDir())
	c := stdioSession(t, env, binary(t), "serve")
	defer c.Close()
	tools := waitForTool(t, c, "iterate_over")
	if len(tools) < 8 {
		t.Errorf("only %d tools on defaults", len(tools))
	}
}

func TestServeHTTPBearerTokens(t *testing.T) {
	cfg, _ := writeConfig(t, "\n[[http.tokens]]\nowner = \"orchestrator\"\ntoken = \"s3cret-token-value\"\n")
	base := startHTTP(t, "http", cfg)
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`
	for _, tc := range []struct {
		auth   string
		status int
	}{
		{"", http.StatusUnauthorized},
		{"Bearer wrong", http.StatusUnauthorized},
		{"Bearer s3cret-token-value", http.StatusOK},
	} {
		req, _ := http.NewRequest("POST", base+"/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if tc.auth != "" {
			req.Header.Set("Authorization", tc.auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.status {
			t.Errorf("Authorization %q: HTTP %d, want %d", tc.auth, resp.StatusCode, tc.status)
		}
	}
	// With tokens configured, /events is guarded too.
	resp, err := http.Get(base + "/events")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("/events without a token: HTTP %d", resp.StatusCode)
	}
	// A client sending the token on every request (POST, GET stream,
	// DELETE) holds a whole session.
	c := httpClient(t, base+"/mcp", map[string]string{"Authorization": "Bearer s3cret-token-value"})
	waitForTool(t, c, "echo")
	if got := callTool(t, c, "echo", map[string]any{"text": "authorized"}); got != "authorized" {
		t.Errorf("echo with a token: %q", got)
	}
}

// sseEvent is one server-sent event of a raw streamable HTTP answer.
type sseEvent struct{ id, name, data string }

func parseSSE(body string) []sseEvent {
	var evs []sseEvent
	for _, block := range strings.Split(strings.ReplaceAll(body, "\r\n", "\n"), "\n\n") {
		var e sseEvent
		seen := false
		for _, line := range strings.Split(block, "\n") {
			field, value, _ := strings.Cut(line, ":")
			value = strings.TrimPrefix(value, " ")
			switch field {
			case "id":
				e.id, seen = value, true
			case "event":
				e.name, seen = value, true
			case "data":
				e.data, seen = e.data+value, true
			}
		}
		if seen {
			evs = append(evs, e)
		}
	}
	return evs
}

// TestServeHTTPStreamsCarryResumableIDs checks resumability end to end
// with raw HTTP (go-sdk's client resumes on its own and hides it): the
// events answering a call carry ids, a GET with the Last-Event-ID of one
// of them replays what followed it, answer included, and a GET with an
// id the server never gave is refused.
func TestServeHTTPStreamsCarryResumableIDs(t *testing.T) {
	cfg, _ := writeConfig(t, "")
	base := startHTTP(t, "http", cfg)
	do := func(method, session, lastID, body string) (*http.Response, string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, method, base+"/mcp", strings.NewReader(body))
		if method == "POST" {
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
		} else {
			req.Header.Set("Accept", "text/event-stream")
		}
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
			req.Header.Set("Mcp-Protocol-Version", protocolVersion)
		}
		if lastID != "" {
			req.Header.Set("Last-Event-ID", lastID)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, body, err)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatalf("%s %s: reading the answer: %v\n%s", method, body, err, b)
		}
		return resp, string(b)
	}
	resp, _ := do("POST", "", "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"`+protocolVersion+`","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	session := resp.Header.Get("Mcp-Session-Id")
	if session == "" {
		t.Fatalf("no session id (HTTP %d)", resp.StatusCode)
	}
	do("POST", session, "", `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	// tools/list until the upstream's tools are there.
	if !testwait.Until(testwait.Timeout, func() bool {
		_, b := do("POST", session, "", `{"jsonrpc":"2.0","id":3,"method":"tools/list"}`)
		return strings.Contains(b, `"slow"`)
	}) {
		t.Fatal("tool slow never listed")
	}
	// A call that sends progress mid-way, then answers.
	resp, body := do("POST", session, "", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow","arguments":{"steps":2,"ms":10},"_meta":{"progressToken":"p1"}}}`)
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		t.Fatalf("the call was answered as %q, not an event stream:\n%s", ct, body)
	}
	evs := parseSSE(body)
	answer := -1
	for i, e := range evs {
		if e.id == "" {
			t.Errorf("event %d has no id:\n%s", i, body)
		}
		if strings.Contains(e.data, `"id":2`) && strings.Contains(e.data, `"result"`) {
			answer = i
		}
	}
	if answer < 1 {
		t.Fatalf("want an event before the call's answer, and the answer, each with an id:\n%s", body)
	}
	// Resume after the first event: what followed it comes again, with
	// the same ids, the answer included.
	resp, replay := do("GET", session, evs[0].id, "")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("resume from a known event id %q: HTTP %d %s", evs[0].id, resp.StatusCode, replay)
	}
	got := parseSSE(replay)
	var gotIDs, wantIDs []string
	for _, e := range got {
		gotIDs = append(gotIDs, e.id)
	}
	for _, e := range evs[1:] {
		wantIDs = append(wantIDs, e.id)
	}
	if strings.Join(gotIDs, " ") != strings.Join(wantIDs, " ") || len(got) < answer || got[answer-1].data != evs[answer].data {
		t.Errorf("resume from %q replayed:\n%s\nthe stream was:\n%s", evs[0].id, replay, body)
	}
	for _, bad := range []string{"999999", "nosuchstream_0"} {
		if resp, b := do("GET", session, bad, ""); resp.StatusCode == http.StatusOK {
			t.Errorf("resume from an unknown event id %q accepted:\n%s", bad, b)
		}
	}
}
