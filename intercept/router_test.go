package intercept

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/scratchpad-mcp/scratchpad-mcp/config"
	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testupstream"
	"github.com/scratchpad-mcp/scratchpad-mcp/upstream"
)

func TestMain(m *testing.M) {
	testupstream.MaybeRun()
	os.Exit(m.Run())
}

// wordCounter counts whitespace-separated words plus commas: exact and
// predictable (testupstream.Words(n) is n), so threshold edges can be
// tested to the token, and compact JSON still counts as large. Real token
// counts are package tokens' business.
type wordCounter struct{}

func (wordCounter) Count(b []byte) int             { return len(bytes.Fields(b)) + bytes.Count(b, []byte(",")) }
func (w wordCounter) AtLeast(b []byte, n int) bool { return w.Count(b) >= n }

func thresholds(t testing.TB, kv ...any) []config.Threshold {
	t.Helper()
	var out []config.Threshold
	for i := 0; i < len(kv); i += 2 {
		p, err := config.CompilePattern(kv[i].(string))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, config.Threshold{Pattern: p, MinTokens: kv[i+1].(int)})
	}
	return out
}

// stdioUpstream configures the test binary itself as a stdio upstream.
func stdioUpstream(name string, th []config.Threshold) config.Server {
	return config.Server{
		Name: name, Transport: config.TransportStdio,
		Cmd:                []string{os.Args[0]},
		Env:                map[string]string{testupstream.EnvMode: "stdio"},
		Timeout:            10 * time.Second,
		RestartMaxAttempts: 20,
		RestartBackoffMax:  500 * time.Millisecond,
		Thresholds:         th,
	}
}

type proxy struct {
	router *Router
	srv    *server.MCPServer
	url    string
	dir    string
	mu     sync.Mutex
	got    []int // OnIntercept counts
}

func quietLogger() *slog.Logger {
	if testing.Verbose() {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

// startProxy runs a Router in front of servers, served over real
// streamable HTTP on loopback.
func startProxy(t testing.TB, servers ...config.Server) *proxy {
	t.Helper()
	return startProxyWith(t, Options{}, servers...)
}

// startProxyWith is startProxy with router options; Servers, Logger,
// Version, Reserved and Agent are filled in.
func startProxyWith(t testing.TB, o Options, servers ...config.Server) *proxy {
	t.Helper()
	p := &proxy{dir: filepath.Join(t.TempDir(), "scratchpad")}
	o.Servers, o.Logger, o.Version = servers, quietLogger(), "test"
	o.Reserved = []string{"head", "grep"}
	o.Agent = func(ctx context.Context) (*Agent, error) {
		return &Agent{Enabled: true, Dir: p.dir, Counter: wordCounter{}, OnIntercept: func(n int) {
			p.mu.Lock()
			p.got = append(p.got, n)
			p.mu.Unlock()
		}}, nil
	}
	p.router = New(o)
	p.srv = server.NewMCPServer("scratchpad-mcp", "test", server.WithToolCapabilities(true), server.WithLogging())
	p.router.Attach(p.srv)
	ctx, cancel := context.WithCancel(context.Background())
	p.router.Start(ctx)
	ts := httptest.NewServer(p.router.OutputHTTP(server.NewStreamableHTTPServer(p.srv)))
	p.url = ts.URL + "/mcp"
	t.Cleanup(func() {
		ts.Close()
		cancel()
		p.router.Close()
	})
	return p
}

func connect(t testing.TB, url string) *client.Client {
	t.Helper()
	c, err := client.NewStreamableHttpClient(url, transport.WithContinuousListening())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	req := mcp.InitializeRequest{}
	req.Params.ProtocolVersion = mcp.LATEST_LEGACY_PROTOCOL_VERSION
	req.Params.ClientInfo = mcp.Implementation{Name: "test", Version: "1"}
	if _, err := c.Initialize(ctx, req); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// waitTool polls tools/list until name shows up.
func waitTool(t testing.TB, c *client.Client, name string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		res, err := c.ListTools(context.Background(), mcp.ListToolsRequest{})
		if err == nil {
			for _, tl := range res.Tools {
				if tl.Name == name {
					return
				}
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("tool %q never listed", name)
}

func call(t testing.TB, c *client.Client, name string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	req := mcp.CallToolRequest{}
	req.Params.Name = name
	req.Params.Arguments = args
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := c.CallTool(ctx, req)
	if err != nil {
		t.Fatalf("call %s: %v", name, err)
	}
	return res
}

func text(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

func isPointer(res *mcp.CallToolResult) bool {
	return strings.Contains(text(res), "was diverted to the scratchpad")
}

// directClient connects to a fresh upstream process without the proxy.
func directClient(t testing.TB) *client.Client {
	t.Helper()
	env := append(os.Environ(), testupstream.EnvMode+"=stdio")
	c, err := client.NewStdioMCPClient(os.Args[0], env)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	req := mcp.InitializeRequest{}
	req.Params.ProtocolVersion = mcp.LATEST_LEGACY_PROTOCOL_VERSION
	if _, err := c.Initialize(ctx, req); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func TestPassThroughBelowThresholdIsIdentical(t *testing.T) {
	p := startProxy(t, stdioUpstream("up", thresholds(t, "*", 100)))
	c := connect(t, p.url)
	waitTool(t, c, "words")
	d := directClient(t)
	for _, tc := range []struct {
		tool string
		args map[string]any
	}{
		{"words", map[string]any{"n": 99}},
		{"echo", map[string]any{"text": "héllo <b>&</b>"}},
		{"listing", map[string]any{"n": 2}},
	} {
		viaProxy, _ := json.Marshal(call(t, c, tc.tool, tc.args))
		direct, _ := json.Marshal(call(t, d, tc.tool, tc.args))
		if !bytes.Equal(viaProxy, direct) {
			t.Errorf("%s: proxy result differs from direct\nproxy:  %s\ndirect: %s", tc.tool, viaProxy, direct)
		}
	}
	if entries, _ := os.ReadDir(p.dir); len(entries) != 0 {
		t.Errorf("nothing should be stored, found %d files", len(entries))
	}
}

func TestDivertAtExactlyThreshold(t *testing.T) {
	p := startProxy(t, stdioUpstream("up", thresholds(t, "words", 100)))
	c := connect(t, p.url)
	waitTool(t, c, "words")
	if res := call(t, c, "words", map[string]any{"n": 99}); isPointer(res) || text(res) != testupstream.Words(99) {
		t.Fatalf("99 words (one below) must pass through, got %q", truncate(text(res), 200))
	}
	res := call(t, c, "words", map[string]any{"n": 100})
	if !isPointer(res) {
		t.Fatalf("100 words (at threshold) must be diverted, got %q", truncate(text(res), 200))
	}
	entries, err := os.ReadDir(p.dir)
	if err != nil || len(entries) != 1 {
		t.Fatalf("want one stored file, got %v %v", entries, err)
	}
	name := entries[0].Name()
	if !strings.HasPrefix(name, "up-words-") || !strings.HasSuffix(name, ".txt") {
		t.Errorf("stored name %q", name)
	}
	stored, _ := os.ReadFile(filepath.Join(p.dir, name))
	if string(stored) != testupstream.Words(100)+"\n" {
		t.Errorf("stored content differs")
	}
	if !strings.Contains(text(res), name) || !strings.Contains(text(res), "100 tokens") {
		t.Errorf("pointer lacks file name or count:\n%s", text(res))
	}
	fi, _ := os.Stat(filepath.Join(p.dir, name))
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("stored file mode %v, want 0600", fi.Mode().Perm())
	}
	di, _ := os.Stat(p.dir)
	if di.Mode().Perm() != 0o700 {
		t.Errorf("scratchpad dir mode %v, want 0700", di.Mode().Perm())
	}
	// The same output again is the same file.
	call(t, c, "words", map[string]any{"n": 100})
	if entries, _ := os.ReadDir(p.dir); len(entries) != 1 {
		t.Errorf("identical output stored twice: %d files", len(entries))
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.got) != 2 || p.got[0] != 100 {
		t.Errorf("OnIntercept got %v, want [100 100]", p.got)
	}
}

func TestPatternPrecedence(t *testing.T) {
	// words matches "*" (10), "w*" (1000) and "words" (50): the longest wins.
	// echo matches "*" (10) and "e?ho" / "ech?" (both 4 chars: smallest, 30, wins).
	p := startProxy(t, stdioUpstream("up", thresholds(t, "*", 10, "w*", 1000, "words", 50, "e?ho", 40, "ech?", 30)))
	c := connect(t, p.url)
	waitTool(t, c, "words")
	for _, tc := range []struct {
		tool    string
		args    map[string]any
		divert  bool
		comment string
	}{
		{"words", map[string]any{"n": 49}, false, "49 < 50"},
		{"words", map[string]any{"n": 50}, true, "50 ≥ 50"},
		{"echo", map[string]any{"text": testupstream.Words(29)}, false, "29 < 30"},
		{"echo", map[string]any{"text": testupstream.Words(30)}, true, "30 ≥ 30"},
		{"listing", map[string]any{"n": 3}, true, "* = 10"},
	} {
		if got := isPointer(call(t, c, tc.tool, tc.args)); got != tc.divert {
			t.Errorf("%s (%s): diverted=%v, want %v", tc.tool, tc.comment, got, tc.divert)
		}
	}
}

func TestUnmatchedToolsAreNeverIntercepted(t *testing.T) {
	p := startProxy(t, stdioUpstream("up", thresholds(t, "listing", 10)))
	c := connect(t, p.url)
	waitTool(t, c, "words")
	if res := call(t, c, "words", map[string]any{"n": 5000}); isPointer(res) {
		t.Fatal("a tool no pattern matches was intercepted")
	}
}

func TestErrorsAndImagesAreNeverDiverted(t *testing.T) {
	p := startProxy(t, stdioUpstream("up", thresholds(t, "*", 10)))
	c := connect(t, p.url)
	waitTool(t, c, "fail")
	res := call(t, c, "fail", nil)
	if isPointer(res) || !res.IsError {
		t.Errorf("isError result diverted or flag lost")
	}
	res = call(t, c, "image", nil)
	if isPointer(res) {
		t.Errorf("image result diverted")
	}
	if len(res.Content) != 2 {
		t.Errorf("image result content: %d items", len(res.Content))
	}
}

func TestJSONIsStoredPrettyWithSketch(t *testing.T) {
	p := startProxy(t, stdioUpstream("up", thresholds(t, "listing", 50)))
	c := connect(t, p.url)
	waitTool(t, c, "listing")
	res := call(t, c, "listing", map[string]any{"n": 200})
	out := text(res)
	for _, want := range []string{"format: json", "items: array[200] of objects {metadata, spec, status}", `iterate_over {"file":"up-listing-`, `","path":"$.items","fields":"metadata.name,metadata.namespace,status.phase","limit":20}`} {
		if !strings.Contains(out, want) {
			t.Errorf("pointer lacks %q:\n%s", want, truncate(out, 2000))
		}
	}
	entries, _ := os.ReadDir(p.dir)
	if len(entries) != 1 {
		t.Fatalf("want 1 stored file, got %d", len(entries))
	}
	stored, _ := os.ReadFile(filepath.Join(p.dir, entries[0].Name()))
	if !strings.HasPrefix(string(stored), "{\n  \"apiVersion\": \"v1\",\n") {
		t.Errorf("JSON not stored pretty-printed: %q", stored[:40])
	}
	var v any
	if err := json.Unmarshal(stored, &v); err != nil {
		t.Errorf("stored JSON invalid: %v", err)
	}
	if n := len(strings.Fields(out)); n > 300 {
		t.Errorf("pointer is %d words, want a short pointer", n)
	}
}

func TestStructuredToolLosesOutputSchemaAndDiverts(t *testing.T) {
	p := startProxy(t, stdioUpstream("up", thresholds(t, "structured", 50)))
	c := connect(t, p.url)
	waitTool(t, c, "structured")
	raw := rawToolsList(t, p.url)
	if bytes.Contains(toolRaw(t, raw, "structured"), []byte("outputSchema")) {
		t.Errorf("divertable tool kept its outputSchema")
	}
	res := call(t, c, "structured", map[string]any{"n": 100})
	if !isPointer(res) {
		t.Fatalf("structured output not diverted: %s", truncate(text(res), 300))
	}
	if !strings.Contains(text(res), "format: json") {
		t.Errorf("structured content not stored as JSON:\n%s", text(res))
	}
}

// rawToolsList performs tools/list over streamable HTTP and returns the
// result bytes exactly as sent.
func rawToolsList(t testing.TB, url string) json.RawMessage {
	t.Helper()
	return rawRequest(t, url, "tools/list", nil)
}

// rawRequest initializes a fresh streamable HTTP session, sends one
// request and returns the result bytes exactly as sent.
func rawRequest(t testing.TB, url, method string, params any) json.RawMessage {
	t.Helper()
	tr, err := transport.NewStreamableHTTP(url)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := tr.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	if _, err := tr.SendRequest(ctx, transport.JSONRPCRequest{JSONRPC: "2.0", ID: mcp.NewRequestId(1), Method: "initialize",
		Params: map[string]any{"protocolVersion": mcp.LATEST_LEGACY_PROTOCOL_VERSION, "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "raw", "version": "1"}}}); err != nil {
		t.Fatal(err)
	}
	_ = tr.SendNotification(ctx, mcp.JSONRPCNotification{JSONRPC: "2.0", Notification: mcp.Notification{Method: "notifications/initialized"}})
	resp, err := tr.SendRequest(ctx, transport.JSONRPCRequest{JSONRPC: "2.0", ID: mcp.NewRequestId(2), Method: method, Params: params})
	if err != nil || resp.Error != nil {
		t.Fatalf("%s: %v %v", method, err, resp.Error)
	}
	return resp.Result
}

func toolRaw(t testing.TB, list json.RawMessage, name string) json.RawMessage {
	t.Helper()
	var l struct {
		Tools []json.RawMessage `json:"tools"`
	}
	if err := json.Unmarshal(list, &l); err != nil {
		t.Fatal(err)
	}
	for _, raw := range l.Tools {
		var tl struct{ Name string }
		_ = json.Unmarshal(raw, &tl)
		if tl.Name == name {
			return raw
		}
	}
	t.Fatalf("tool %s not in list", name)
	return nil
}

func TestSchemaPassesThroughByteIdentical(t *testing.T) {
	p := startProxy(t, stdioUpstream("up", nil))
	c := connect(t, p.url)
	waitTool(t, c, "fancy")
	var viaProxy struct {
		InputSchema json.RawMessage `json:"inputSchema"`
	}
	_ = json.Unmarshal(toolRaw(t, rawToolsList(t, p.url), "fancy"), &viaProxy)
	// The upstream itself, through package upstream's raw client alone.
	up := upstream.New(upstream.Options{Server: stdioUpstream("direct", nil), Logger: quietLogger()})
	up.Start(context.Background(), nil)
	defer up.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := up.Call(ctx, "ping", nil); err != nil {
		t.Fatal(err)
	}
	tools := up.Tools()
	var direct struct {
		InputSchema json.RawMessage `json:"inputSchema"`
	}
	for _, tl := range tools {
		if tl.Name == "fancy" {
			_ = json.Unmarshal(tl.Raw, &direct)
		}
	}
	if len(direct.InputSchema) == 0 || !bytes.Equal(viaProxy.InputSchema, direct.InputSchema) {
		t.Fatalf("schema changed in transit\nproxy:  %s\ndirect: %s", viaProxy.InputSchema, direct.InputSchema)
	}
	for _, kw := range []string{"anyOf", "oneOf", "top-level description kept", "additionalProperties"} {
		if !bytes.Contains(viaProxy.InputSchema, []byte(kw)) {
			t.Errorf("schema lost %q", kw)
		}
	}
}

func TestUpstreamCrashAndRestart(t *testing.T) {
	p := startProxy(t, stdioUpstream("flaky", nil))
	c := connect(t, p.url)
	waitTool(t, c, "pid")
	pid1 := text(call(t, c, "pid", nil))
	res := call(t, c, "crash", nil)
	if !res.IsError || !strings.Contains(text(res), `"flaky"`) || !strings.Contains(text(res), "exit") {
		t.Fatalf("in-flight call on a crashing upstream: want a tool error naming the server, got %q", text(res))
	}
	// A call made while it restarts waits for it.
	res = call(t, c, "pid", nil)
	if res.IsError {
		t.Fatalf("call after restart failed: %s", text(res))
	}
	if pid2 := text(res); pid2 == pid1 {
		t.Fatalf("same pid %s after crash: not restarted", pid2)
	}
}

func TestListChangedPropagates(t *testing.T) {
	p := startProxy(t, stdioUpstream("up", nil))
	var mu sync.Mutex
	changed := 0
	c := connect(t, p.url)
	c.OnNotification(func(n mcp.JSONRPCNotification) {
		if n.Method == "notifications/tools/list_changed" {
			mu.Lock()
			changed++
			mu.Unlock()
		}
	})
	waitTool(t, c, "add_tool")
	call(t, c, "add_tool", map[string]any{"name": "late_tool"})
	waitTool(t, c, "late_tool")
	if got := text(call(t, c, "late_tool", nil)); got != "hello from late_tool" {
		t.Fatalf("late_tool answered %q", got)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		mu.Lock()
		n := changed
		mu.Unlock()
		if n > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("client never got notifications/tools/list_changed")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestConcurrentClients(t *testing.T) {
	p := startProxy(t, stdioUpstream("up", thresholds(t, "words", 500)))
	first := connect(t, p.url)
	waitTool(t, first, "echo")
	var wg sync.WaitGroup
	errs := make(chan string, 200)
	for ci := 0; ci < 4; ci++ {
		c := connect(t, p.url)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 25; i++ {
				want := fmt.Sprintf("client %d call %d", ci, i)
				req := mcp.CallToolRequest{}
				req.Params.Name = "echo"
				req.Params.Arguments = map[string]any{"text": want}
				res, err := c.CallTool(context.Background(), req)
				if err != nil {
					errs <- err.Error()
					continue
				}
				if got := text(res); got != want {
					errs <- fmt.Sprintf("got %q want %q", got, want)
				}
				if i%5 == 0 {
					req.Params.Name = "words"
					req.Params.Arguments = map[string]any{"n": 600}
					if res, err := c.CallTool(context.Background(), req); err != nil || !isPointer(res) {
						errs <- fmt.Sprintf("divert under concurrency: %v", err)
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

func TestProgressIsForwardedWithCallersToken(t *testing.T) {
	p := startProxy(t, stdioUpstream("up", nil))
	c := connect(t, p.url)
	var mu sync.Mutex
	var tokens []any
	c.OnNotification(func(n mcp.JSONRPCNotification) {
		if n.Method == "notifications/progress" {
			mu.Lock()
			tokens = append(tokens, n.Params.AdditionalFields["progressToken"])
			mu.Unlock()
		}
	})
	waitTool(t, c, "slow")
	req := mcp.CallToolRequest{}
	req.Params.Name = "slow"
	req.Params.Arguments = map[string]any{"steps": 3, "ms": 5}
	req.Params.Meta = &mcp.Meta{ProgressToken: "caller-token-7"}
	if _, err := c.CallTool(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		mu.Lock()
		n := len(tokens)
		mu.Unlock()
		if n >= 3 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(tokens) != 3 {
		t.Fatalf("got %d progress notifications, want 3", len(tokens))
	}
	for _, tok := range tokens {
		if tok != "caller-token-7" {
			t.Errorf("progress token %v, want the caller's", tok)
		}
	}
}

func TestBrokenUpstreamDoesNotBlockOthers(t *testing.T) {
	bad := config.Server{Name: "missing", Transport: config.TransportStdio, Cmd: []string{"/nonexistent/mcp-server"},
		Timeout: 2 * time.Second, RestartMaxAttempts: 1, RestartBackoffMax: 100 * time.Millisecond}
	garbage := config.Server{Name: "garbage", Transport: config.TransportStdio, Cmd: []string{"sh", "-c", "echo 'this is not json-rpc'; exec cat >/dev/null"},
		Timeout: time.Second, RestartMaxAttempts: 1, RestartBackoffMax: 100 * time.Millisecond}
	p := startProxy(t, bad, garbage, stdioUpstream("good", nil))
	c := connect(t, p.url)
	waitTool(t, c, "echo")
	if got := text(call(t, c, "echo", map[string]any{"text": "ok"})); got != "ok" {
		t.Fatalf("good upstream answered %q", got)
	}
	deadline := time.Now().Add(20 * time.Second)
	for _, u := range p.router.Upstreams()[:2] {
		for {
			state, err := u.State()
			if state == StateFailed {
				if err == nil {
					t.Errorf("%s failed without an error", u.Name())
				}
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: state %s, want failed", u.Name(), state)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	_, err := p.router.Upstreams()[0].State()
	if !strings.Contains(err.Error(), "/nonexistent/mcp-server") {
		t.Errorf("error does not name the command: %v", err)
	}
}

func TestWriteFailureLeavesNothingBehind(t *testing.T) {
	p := startProxy(t, stdioUpstream("up", thresholds(t, "words", 10)))
	// A file where the scratchpad dir should be: every write fails.
	if err := os.MkdirAll(filepath.Dir(p.dir), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p.dir, []byte("in the way"), 0o600); err != nil {
		t.Fatal(err)
	}
	c := connect(t, p.url)
	waitTool(t, c, "words")
	res := call(t, c, "words", map[string]any{"n": 50})
	if !res.IsError || !strings.Contains(text(res), "could not be saved") {
		t.Fatalf("want a clear save error, got %q", text(res))
	}
	if b, _ := os.ReadFile(p.dir); string(b) != "in the way" {
		t.Errorf("existing file was touched")
	}
}

func TestSaveIsAtomicAndDeterministic(t *testing.T) {
	dir := t.TempDir()
	a, err := Save(dir, "srv", "fs/read", []byte(`[{"a":1},{"a":2}]`))
	if err != nil {
		t.Fatal(err)
	}
	b, err := Save(dir, "srv", "fs/read", []byte(`[{"a":1},{"a":2}]`))
	if err != nil {
		t.Fatal(err)
	}
	if a.Name != b.Name || !b.Reused {
		t.Errorf("same content, different files: %s %s reused=%v", a.Name, b.Name, b.Reused)
	}
	if !strings.HasPrefix(a.Name, "srv-fs_read-") || !strings.HasSuffix(a.Name, ".json") {
		t.Errorf("name %q", a.Name)
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp-") {
			t.Errorf("temp file left: %s", e.Name())
		}
	}
}

func TestDetectFormat(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"a":1}`, FormatJSON},
		{` [1,2,3] `, FormatJSON},
		{"{\"a\":1}\n{\"a\":2}\n", FormatNDJSON},
		{"{\"a\":1}\nnot json\n", FormatText},
		{"# Title\n\nsome text\n## Part\n", FormatMarkdown},
		{"plain log line\nanother\n", FormatText},
		{"", FormatText},
		{`{"broken":`, FormatText},
	} {
		if got := DetectFormat([]byte(tc.in)); got != tc.want {
			t.Errorf("DetectFormat(%q) = %s, want %s", tc.in, got, tc.want)
		}
	}
}

// TestDiskFullLeavesNothingBehind diverts into a real full filesystem: a
// 64 KiB tmpfs (mounting needs root; elsewhere the test skips).
func TestDiskFullLeavesNothingBehind(t *testing.T) {
	p := startProxy(t, stdioUpstream("up", thresholds(t, "words", 10)))
	if err := os.MkdirAll(p.dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", p.dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a small tmpfs here (%v: %s)", err, bytes.TrimSpace(out))
	}
	t.Cleanup(func() { _ = exec.Command("umount", p.dir).Run() })
	// Something already stored must survive the failed write untouched.
	kept := filepath.Join(p.dir, "up-words-00000000.txt")
	if err := os.WriteFile(kept, []byte("earlier output\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c := connect(t, p.url)
	waitTool(t, c, "words")
	res := call(t, c, "words", map[string]any{"n": 40000}) // ~250 KB
	if !res.IsError || !strings.Contains(text(res), "could not be saved") || !strings.Contains(text(res), "no space left") {
		t.Fatalf("want a clear disk-full error, got %q", truncate(text(res), 300))
	}
	entries, _ := os.ReadDir(p.dir)
	if len(entries) != 1 || entries[0].Name() != filepath.Base(kept) {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Fatalf("after a failed write the dir holds %v, want only the earlier file", names)
	}
	if b, _ := os.ReadFile(kept); string(b) != "earlier output\n" {
		t.Errorf("earlier output changed: %q", b)
	}
	// Space freed: the same call now succeeds.
	_ = os.Remove(kept)
	if res := call(t, c, "words", map[string]any{"n": 2000}); !isPointer(res) {
		t.Errorf("after freeing space the divert still fails: %q", truncate(text(res), 300))
	}
}

// TestUpstreamDyingAtStartSaysWhy: a server that exits before answering
// initialize is reported with its exit status and last stderr lines, not
// as a broken pipe.
func TestUpstreamDyingAtStartSaysWhy(t *testing.T) {
	dying := config.Server{Name: "dying", Transport: config.TransportStdio,
		Cmd:     []string{"sh", "-c", "echo 'Error: Cannot find module @acme/mcp' >&2; exit 3"},
		Timeout: 5 * time.Second, RestartMaxAttempts: config.NeverRestart}
	p := startProxy(t, dying)
	u := p.router.Upstreams()[0]
	deadline := time.Now().Add(20 * time.Second)
	for {
		state, err := u.State()
		if state == StateFailed {
			if err == nil || !strings.Contains(err.Error(), "exit status 3") || !strings.Contains(err.Error(), "Cannot find module @acme/mcp") {
				t.Fatalf("want exit status and stderr in the error, got %v", err)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("state %s", state)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
