package server_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scratchpad-mcp/scratchpad-mcp/config"
	"github.com/scratchpad-mcp/scratchpad-mcp/divert"
	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testupstream"
	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testwait"
	"github.com/scratchpad-mcp/scratchpad-mcp/proxy"
	"github.com/scratchpad-mcp/scratchpad-mcp/server"
)

func TestMain(m *testing.M) {
	testupstream.MaybeRun()
	maybeRunBlocker()
	os.Exit(m.Run())
}

// protocol is the version test clients ask for: the latest one with an
// initialize handshake (2026-07-28 clients discover instead).
const protocol = "2025-11-25"

// fronts are the transports the server serves its clients over.
var fronts = []string{"stdio", "http", "sse"}

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

func quietLogger() *slog.Logger {
	if testing.Verbose() {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

// stdioUpstream configures the test binary itself as a stdio upstream
// (testupstream's MCP server).
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

// rawUpstream runs testupstream's hand-written upstream: JSON-RPC errors
// of its own ([testupstream.RawErrors]), a request it cancels, progress
// sent at once before its result, roots asked outside any call.
func rawUpstream(name string) config.Server {
	up := stdioUpstream(name, nil)
	up.Env = map[string]string{testupstream.EnvMode: testupstream.RawMode}
	return up
}

// remoteUpstream serves a fresh test upstream in process over kind
// (config.TransportSSE or config.TransportHTTPStreamable).
func remoteUpstream(t testing.TB, name, kind string) config.Server {
	t.Helper()
	var h http.Handler
	path := "/mcp"
	if kind == config.TransportSSE {
		path = "/sse"
		h = testupstream.SSEHandler()
	} else {
		h = testupstream.Handler()
	}
	ts := httptest.NewServer(h)
	t.Cleanup(func() { ts.CloseClientConnections(); ts.Close() })
	return config.Server{Name: name, Transport: kind, URL: ts.URL + path, Timeout: 10 * time.Second,
		RestartMaxAttempts: 20, RestartBackoffMax: 500 * time.Millisecond}
}

// env is a proxy and its server, served over streamable HTTP (url) and
// legacy SSE (sseURL) on loopback; stdio clients are served in process.
type env struct {
	px     *proxy.Proxy
	srv    *server.Server
	dir    string // the agent's scratchpad dir
	url    string
	sseURL string

	mu  sync.Mutex
	got []int // exact counts of diverted outputs (envAccount)
	// identified are the Identify calls so far, by whether each was a
	// tools/call's.
	identified []bool
}

type envOptions struct {
	// mirror starts the upstreams at the first client's initialize,
	// offered what it declared (as over stdio).
	mirror        bool
	progressDelay time.Duration
	own           *server.Own
	http          server.StreamableHTTPOptions // the streamable HTTP handler's
	callTimeout   time.Duration                // server.Options.CallTimeout
	inputGrace    time.Duration                // server.Options.InputGrace
}

func startEnv(t testing.TB, servers ...config.Server) *env {
	t.Helper()
	return startEnvWith(t, envOptions{}, servers...)
}

func startEnvWith(t testing.TB, o envOptions, servers ...config.Server) *env {
	t.Helper()
	e := &env{dir: filepath.Join(t.TempDir(), "scratchpad")}
	var srv atomic.Pointer[server.Server]
	e.px = proxy.New(proxy.Options{
		Servers: servers, Logger: quietLogger(), Version: "test",
		ReservedTools: []string{"head", "grep"},
		ProgressDelay: o.progressDelay,
		OnChange: func(k proxy.Kind) {
			if s := srv.Load(); s != nil {
				s.Changed(e.px, k)
			}
		},
	})
	ctx, cancel := context.WithCancel(context.Background())
	opts := server.Options{Name: "scratchpad-mcp", Version: "test", Logger: quietLogger(), Proxy: e.px,
		Session: func(server.SessionInfo) (*server.Own, error) {
			if o.own != nil {
				return o.own, nil
			}
			return &server.Own{}, nil
		},
		CallTimeout: o.callTimeout, InputGrace: o.inputGrace,
		Identify: func(ctx context.Context, req *proxy.Request, call bool) (context.Context, error) {
			e.mu.Lock()
			e.identified = append(e.identified, call)
			e.mu.Unlock()
			req.Agent = &divert.Agent{Enabled: true, Dir: e.dir, Counter: wordCounter{}, Account: envAccount{e}}
			return ctx, nil
		}}
	if o.mirror {
		opts.StartUpstreams = ctx
	}
	e.srv = server.New(opts)
	srv.Store(e.srv)
	if !o.mirror {
		e.px.Start(ctx, nil)
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", e.srv.StreamableHTTP(o.http))
	mux.Handle("/sse", e.srv.SSE())
	ts := httptest.NewServer(mux)
	e.url, e.sseURL = ts.URL+"/mcp", ts.URL+"/sse"
	t.Cleanup(func() {
		ts.CloseClientConnections()
		ts.Close()
		cancel()
		e.px.Close()
	})
	return e
}

// envAccount is the test agents' [divert.Account]: no budget bound, the
// exact counts of diverted outputs kept in order.
type envAccount struct{ e *env }

func (envAccount) Left() int             { return -1 }
func (envAccount) Charge(int)            {}
func (envAccount) Masked(map[string]int) {}
func (envAccount) Stored(string)         {}
func (envAccount) Reserve(int64) error   { return nil }
func (envAccount) Track() func()         { return func() {} }
func (a envAccount) Intercepted(n int) {
	a.e.mu.Lock()
	a.e.got = append(a.e.got, n)
	a.e.mu.Unlock()
}

// intercepted returns the exact counts of diverted outputs so far.
func (e *env) intercepted() []int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]int(nil), e.got...)
}

// stdioPipes serves e's server over stdio on a pair of pipes; it
// returns the client's ends.
func (e *env) stdioPipes(t testing.TB) (fromServer io.ReadCloser, toServer io.WriteCloser) {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = e.srv.ServeStdio(ctx, inR, outW)
		outW.Close()
	}()
	t.Cleanup(func() { cancel(); inW.Close(); outR.Close(); <-done })
	return outR, inW
}

// transport is a go-sdk client transport to e over front.
func (e *env) transport(t testing.TB, front string) mcp.Transport {
	t.Helper()
	switch front {
	case "http":
		return &mcp.StreamableClientTransport{Endpoint: e.url, MaxRetries: -1}
	case "sse":
		return &mcp.SSEClientTransport{Endpoint: e.sseURL}
	case "stdio":
		r, w := e.stdioPipes(t)
		return &mcp.IOTransport{Reader: r, Writer: w}
	}
	t.Fatalf("unknown front %q", front)
	return nil
}

// note is one notification a client received.
type note struct {
	method string
	params json.RawMessage
}

// recorder is a test client's handlers: it answers what upstreams ask
// and records what reached it.
type recorder struct {
	mu    sync.Mutex
	asked []note // sampling, elicitation and roots requests, in order
	notes []note
	// block, when set, holds sampling answers until it is closed (or the
	// request is cancelled: then cancelled gets the error).
	block     chan struct{}
	cancelled chan error
	sampled   chan struct{} // when set, told of every sampling request
}

func (r *recorder) note(method string, params any) {
	b, _ := json.Marshal(params)
	r.mu.Lock()
	r.notes = append(r.notes, note{method, b})
	r.mu.Unlock()
}

// options are the client's options; declare names what it declares:
// "sampling", "elicitation" (form), "elicitation.url", "roots".
func (r *recorder) options(declare ...string) *mcp.ClientOptions {
	caps := &mcp.ClientCapabilities{}
	o := &mcp.ClientOptions{
		Logger:       quietLogger(),
		Capabilities: caps,
		ToolListChangedHandler: func(_ context.Context, q *mcp.ToolListChangedRequest) {
			r.note("notifications/tools/list_changed", q.Params)
		},
		PromptListChangedHandler: func(_ context.Context, q *mcp.PromptListChangedRequest) {
			r.note("notifications/prompts/list_changed", q.Params)
		},
		ResourceListChangedHandler: func(_ context.Context, q *mcp.ResourceListChangedRequest) {
			r.note("notifications/resources/list_changed", q.Params)
		},
		ResourceUpdatedHandler: func(_ context.Context, q *mcp.ResourceUpdatedNotificationRequest) {
			r.note("notifications/resources/updated", q.Params)
		},
		LoggingMessageHandler: func(_ context.Context, q *mcp.LoggingMessageRequest) { r.note("notifications/message", q.Params) },
		ProgressNotificationHandler: func(_ context.Context, q *mcp.ProgressNotificationClientRequest) {
			r.note("notifications/progress", q.Params)
		},
		ElicitationCompleteHandler: func(_ context.Context, q *mcp.ElicitationCompleteNotificationRequest) {
			r.note("notifications/elicitation/complete", q.Params)
		},
	}
	for _, d := range declare {
		switch d {
		case "sampling":
			o.CreateMessageHandler = r.createMessage
		case "elicitation":
			o.ElicitationHandler = r.elicit
			if caps.Elicitation == nil {
				caps.Elicitation = &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}}
			}
		case "elicitation.url":
			o.ElicitationHandler = r.elicit
			caps.Elicitation = &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}, URL: &mcp.URLElicitationCapabilities{}}
		case "roots":
			caps.RootsV2 = &mcp.RootCapabilities{ListChanged: true}
		}
	}
	return o
}

var fullClient = []string{"sampling", "elicitation.url", "roots"}

func (r *recorder) ask(method string, params any) {
	b, _ := json.Marshal(params)
	r.mu.Lock()
	r.asked = append(r.asked, note{method, b})
	r.mu.Unlock()
}

func (r *recorder) createMessage(ctx context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
	r.ask("sampling/createMessage", req.Params)
	r.mu.Lock()
	block, cancelled, sampled := r.block, r.cancelled, r.sampled
	r.mu.Unlock()
	if sampled != nil {
		sampled <- struct{}{}
	}
	if block != nil {
		select {
		case <-block:
		case <-ctx.Done():
			if cancelled != nil {
				cancelled <- ctx.Err()
			}
			return nil, ctx.Err()
		}
	}
	return &mcp.CreateMessageResult{Role: "assistant", Content: &mcp.TextContent{Text: "4"}, Model: "test-model", StopReason: "endTurn"}, nil
}

func (r *recorder) elicit(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	r.ask("elicitation/create", req.Params)
	res := &mcp.ElicitResult{Action: "accept"}
	if req.Params.Mode != "url" {
		content := map[string]any{"name": "ada"}
		// Whatever else the form requires gets a word, so that the
		// answer is one a client would give.
		var schema struct{ Required []string }
		if b, err := json.Marshal(req.Params.RequestedSchema); err == nil {
			_ = json.Unmarshal(b, &schema)
		}
		for _, k := range schema.Required {
			if _, ok := content[k]; !ok {
				content[k] = "blue"
			}
		}
		res.Content = content
	}
	return res, nil
}

// notesOf returns the notifications with method received so far.
func (r *recorder) notesOf(method string) []note {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []note
	for _, n := range r.notes {
		if n.method == method {
			out = append(out, n)
		}
	}
	return out
}

// askedAll returns every request the client was asked.
func (r *recorder) askedAll() []note {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]note(nil), r.asked...)
}

// askedOf returns the requests with method the client was asked.
func (r *recorder) askedOf(method string) []note {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []note
	for _, n := range r.asked {
		if n.method == method {
			out = append(out, n)
		}
	}
	return out
}

// waitNotes polls until at least n notifications with method arrived.
func (r *recorder) waitNotes(t testing.TB, method string, n int) []note {
	t.Helper()
	var got []note
	if !testwait.Until(testwait.Timeout, func() bool { got = r.notesOf(method); return len(got) >= n }) {
		t.Fatalf("got %d %s notifications, want %d", len(got), method, n)
	}
	return got
}

// field returns one top-level field of a notification's params.
func (n note) field(name string) any {
	var m map[string]any
	_ = json.Unmarshal(n.params, &m)
	return m[name]
}

// connect connects a go-sdk client to e over front. r may be nil.
func connect(t testing.TB, e *env, front string, r *recorder, declare ...string) *mcp.ClientSession {
	t.Helper()
	return connectOver(t, e.transport(t, front), r, declare...)
}

func connectOver(t testing.TB, tr mcp.Transport, r *recorder, declare ...string) *mcp.ClientSession {
	t.Helper()
	_, cs := connectClient(t, tr, r, declare...)
	return cs
}

// connectClient is connectOver that also returns the client (to change
// its roots).
func connectClient(t testing.TB, tr mcp.Transport, r *recorder, declare ...string) (*mcp.Client, *mcp.ClientSession) {
	t.Helper()
	if r == nil {
		r = &recorder{}
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, r.options(declare...))
	if contains(declare, "roots") {
		c.AddRoots(&mcp.Root{URI: "file:///work", Name: "work"})
	}
	// go-sdk answers roots/list itself: count the requests.
	c.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "roots/list" {
				r.ask(method, req.GetParams())
			}
			return next(ctx, method, req)
		}
	})
	// The SSE transport's stream lives as long as Connect's context.
	cs, err := c.Connect(context.Background(), tr, &mcp.ClientSessionOptions{ProtocolVersion: protocol})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return c, cs
}

// direct connects a go-sdk client straight to a fresh upstream process.
func direct(t testing.TB, r *recorder, declare ...string) *mcp.ClientSession {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), testupstream.EnvMode+"=stdio")
	return connectOver(t, &mcp.CommandTransport{Command: cmd}, r, declare...)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func callErr(cs *mcp.ClientSession, name string, args map[string]any) (*mcp.CallToolResult, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if args == nil {
		args = map[string]any{}
	}
	return cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
}

func call(t testing.TB, cs *mcp.ClientSession, name string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	res, err := callErr(cs, name, args)
	if err != nil {
		t.Fatalf("call %s: %v", name, err)
	}
	return res
}

func text(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

func isPointer(res *mcp.CallToolResult) bool {
	return strings.Contains(text(res), "was diverted to the scratchpad")
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

func mustJSON(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// waitTool polls tools/list until name shows up.
func waitTool(t testing.TB, cs *mcp.ClientSession, name string) {
	t.Helper()
	testwait.For(t, "tool "+name+" to be listed", func() bool { return slices.Contains(listedTools(t, cs), name) })
}

// listedTools follows cursors through tools/list and returns the names
// in the order listed.
func listedTools(t testing.TB, cs *mcp.ClientSession) []string {
	t.Helper()
	var out []string
	for tl, err := range cs.Tools(context.Background(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, tl.Name)
	}
	return out
}

// listedResources, listedPrompts: every item's JSON by key, all pages.
func listedResources(t testing.TB, cs *mcp.ClientSession) map[string]string {
	t.Helper()
	out := map[string]string{}
	for r, err := range cs.Resources(context.Background(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		out[r.URI] = mustJSON(t, r)
	}
	return out
}

func listedPrompts(t testing.TB, cs *mcp.ClientSession) map[string]string {
	t.Helper()
	out := map[string]string{}
	for p, err := range cs.Prompts(context.Background(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		out[p.Name] = mustJSON(t, p)
	}
	return out
}

// sameJSON reports whether a and b are the same JSON value.
func sameJSON(t testing.TB, a, b []byte) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Fatalf("%s: %v", a, err)
	}
	if err := json.Unmarshal(b, &y); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	xb, _ := json.Marshal(x)
	yb, _ := json.Marshal(y)
	return bytes.Equal(xb, yb)
}

// msg is one JSON-RPC message as a raw client sees it.
type msg struct {
	ID     json.RawMessage `json:"id,omitempty"`
	Method string          `json:"method,omitempty"`
	Params json.RawMessage `json:"params,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  json.RawMessage `json:"error,omitempty"`
}

// rawConn is a JSON-RPC client with no MCP library: what the server
// writes reaches it as bytes, in the order written (per stream).
type rawConn struct {
	t    testing.TB
	in   chan msg
	send func(b []byte) error
	next int
	init json.RawMessage // the initialize result
	// closed is closed when the server ends the connection (stdio).
	closed chan struct{}
	close  func() // ends the connection (stdio)
}

func (c *rawConn) push(line []byte) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return
	}
	var m msg
	if err := json.Unmarshal(line, &m); err != nil {
		c.t.Errorf("not JSON-RPC: %q", line)
		return
	}
	c.in <- m
}

// readSSE pushes the data of every event read from r.
func (c *rawConn) readSSE(r io.Reader, endpoint chan<- string) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 64<<20)
	var event string
	var data []byte
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if event == "endpoint" && endpoint != nil {
				endpoint <- string(data)
			} else if len(data) > 0 {
				c.push(data)
			}
			event, data = "", nil
		case strings.HasPrefix(line, "event:"):
			event = strings.TrimSpace(strings.TrimPrefix(line, "event:"))
		case strings.HasPrefix(line, "data:"):
			d := strings.TrimPrefix(strings.TrimPrefix(line, "data:"), " ")
			if data != nil {
				data = append(data, '\n')
			}
			data = append(data, d...)
		}
	}
}

// rawConnect opens a raw connection to e over front and initializes it,
// declaring caps (a JSON object).
func rawConnect(t testing.TB, e *env, front, caps string) *rawConn {
	t.Helper()
	c := &rawConn{t: t, in: make(chan msg, 1024), closed: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	switch front {
	case "stdio":
		r, w := e.stdioPipes(t)
		go func() {
			defer close(c.closed)
			sc := bufio.NewScanner(r)
			sc.Buffer(make([]byte, 0, 64<<10), 64<<20)
			for sc.Scan() {
				c.push(sc.Bytes())
			}
		}()
		var mu sync.Mutex
		c.close = func() { w.Close() }
		c.send = func(b []byte) error {
			mu.Lock()
			defer mu.Unlock()
			select {
			case <-c.closed:
				return errors.New("the server closed the connection")
			default:
			}
			_, err := w.Write(append(b, '\n'))
			return err
		}
	case "sse":
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, e.sseURL, nil)
		req.Header.Set("Accept", "text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		endpoint := make(chan string, 1)
		go func() { defer resp.Body.Close(); c.readSSE(resp.Body, endpoint) }()
		var post string
		select {
		case ep := <-endpoint:
			u, err := resp.Request.URL.Parse(ep)
			if err != nil {
				t.Fatal(err)
			}
			post = u.String()
		case <-time.After(20 * time.Second):
			t.Fatal("no endpoint event")
		}
		c.send = func(b []byte) error {
			resp, err := http.Post(post, "application/json", bytes.NewReader(b))
			if err != nil {
				return err
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode/100 != 2 {
				return fmt.Errorf("POST: %s", resp.Status)
			}
			return nil
		}
	case "http":
		var session atomic.Value
		session.Store("")
		c.send = func(b []byte) error {
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, e.url, bytes.NewReader(b))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			if id := session.Load().(string); id != "" {
				req.Header.Set("Mcp-Session-Id", id)
				req.Header.Set("Mcp-Protocol-Version", protocol)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				return err
			}
			if id := resp.Header.Get("Mcp-Session-Id"); id != "" {
				session.Store(id)
			}
			if resp.StatusCode/100 != 2 {
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				return fmt.Errorf("POST: %s %s", resp.Status, body)
			}
			go func() {
				defer resp.Body.Close()
				if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
					c.readSSE(resp.Body, nil)
					return
				}
				b, _ := io.ReadAll(resp.Body)
				c.push(b)
			}()
			return nil
		}
	default:
		t.Fatalf("unknown front %q", front)
	}
	resp, _, err := c.request("initialize", map[string]any{"protocolVersion": protocol, "capabilities": json.RawMessage(caps), "clientInfo": map[string]any{"name": "raw", "version": "1"}})
	if err != nil || resp.Error != nil {
		t.Fatalf("initialize: %v %s", err, resp.Error)
	}
	c.init = resp.Result
	if err := c.notify("notifications/initialized", nil); err != nil {
		t.Fatal(err)
	}
	return c
}

func (c *rawConn) notify(method string, params any) error {
	m := map[string]any{"jsonrpc": "2.0", "method": method}
	if params != nil {
		m["params"] = params
	}
	b, _ := json.Marshal(m)
	return c.send(b)
}

// request sends a request and returns its response and the messages
// that arrived before it. Requests from the server are answered with an
// error.
func (c *rawConn) request(method string, params any) (resp msg, before []msg, err error) {
	c.next++
	id := fmt.Sprint(c.next)
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": c.next, "method": method, "params": params})
	if err := c.send(b); err != nil {
		return msg{}, nil, err
	}
	timeout := time.After(30 * time.Second)
	for {
		select {
		case m := <-c.in:
			if m.Method == "" && string(m.ID) == id {
				return m, before, nil
			}
			before = append(before, m)
		case <-timeout:
			return msg{}, before, errors.New(method + ": no response")
		case <-c.closed:
			return msg{}, before, errors.New(method + ": the server closed the connection")
		}
	}
}

// mustRequest is request for a result, failing on a JSON-RPC error.
func (c *rawConn) mustRequest(method string, params any) json.RawMessage {
	c.t.Helper()
	resp, _, err := c.request(method, params)
	if err != nil {
		c.t.Fatal(err)
	}
	if resp.Error != nil {
		c.t.Fatalf("%s: %s", method, resp.Error)
	}
	return resp.Result
}

// toolRaw returns a tool's object from a tools/list result.
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

// blockerMode runs [runBlocker] as the upstream.
const blockerMode = "server-test-blocker"

// blockerUpstream is a hand-written upstream: block
// sends one progress notification (the call has reached it), then waits
// for notifications/cancelled, which it counts and does not answer;
// cancelled returns the count; subscriptions says how many
// resources/subscribe and resources/unsubscribe it got (for its one
// resource, blocker://a); verbatim answers with hand-written bytes.
func blockerUpstream(name string) config.Server {
	up := stdioUpstream(name, nil)
	up.Env = map[string]string{testupstream.EnvMode: blockerMode}
	return up
}

func maybeRunBlocker() {
	if os.Getenv(testupstream.EnvMode) != blockerMode {
		return
	}
	runBlocker(os.Stdin, os.Stdout)
	os.Exit(0)
}

func runBlocker(in io.Reader, out io.Writer) {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	w := json.NewEncoder(out)
	blocked := map[string]bool{}
	cancelled := 0
	subs := map[string]int{} // resources/subscribe and unsubscribe received
	for sc.Scan() {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Name      string          `json:"name"`
				RequestID json.RawMessage `json:"requestId"`
				Meta      struct {
					ProgressToken json.RawMessage `json:"progressToken"`
				} `json:"_meta"`
			} `json:"params"`
		}
		if json.Unmarshal(sc.Bytes(), &m) != nil || m.Method == "" {
			continue
		}
		if len(m.ID) == 0 {
			if m.Method == "notifications/cancelled" && blocked[string(m.Params.RequestID)] {
				delete(blocked, string(m.Params.RequestID))
				cancelled++
			}
			continue
		}
		reply := map[string]any{"jsonrpc": "2.0", "id": m.ID}
		switch m.Method {
		case "initialize":
			reply["result"] = json.RawMessage(`{"protocolVersion":"2025-06-18","capabilities":{"tools":{},"resources":{"subscribe":true}},"serverInfo":{"name":"blocker","version":"1"}}`)
		case "tools/list":
			reply["result"] = json.RawMessage(`{"tools":[{"name":"block","inputSchema":{"type":"object"}},{"name":"cancelled","inputSchema":{"type":"object"}},{"name":"subscriptions","inputSchema":{"type":"object"}},{"name":"verbatim","inputSchema":{"type":"object"}}]}`)
		case "resources/list":
			reply["result"] = json.RawMessage(`{"resources":[{"uri":"blocker://a","name":"a"}]}`)
		case "resources/templates/list":
			reply["result"] = json.RawMessage(`{"resourceTemplates":[]}`)
		case "resources/subscribe", "resources/unsubscribe":
			subs[m.Method]++
			reply["result"] = json.RawMessage(`{}`)
		case "tools/call":
			if m.Params.Name == "verbatim" {
				// Written by hand: spacing, unescaped <&>, escaped é, a
				// field no SDK knows.
				if _, err := io.WriteString(out, `{"jsonrpc":"2.0","id":`+string(m.ID)+`,"result": {"content": [{"type":"text","text":"<&> é \u00e9"}], "future":{"x": 1}}}`+"\n"); err != nil {
					return
				}
				continue
			}
			if m.Params.Name == "subscriptions" {
				reply["result"] = map[string]any{"content": []any{map[string]any{"type": "text", "text": fmt.Sprintf("subscribe=%d unsubscribe=%d", subs["resources/subscribe"], subs["resources/unsubscribe"])}}}
				break
			}
			if m.Params.Name == "block" {
				blocked[string(m.ID)] = true
				if len(m.Params.Meta.ProgressToken) > 0 {
					_ = w.Encode(map[string]any{"jsonrpc": "2.0", "method": "notifications/progress", "params": map[string]any{"progressToken": m.Params.Meta.ProgressToken, "progress": 1}})
				}
				continue
			}
			reply["result"] = map[string]any{"content": []any{map[string]any{"type": "text", "text": fmt.Sprint(cancelled)}}}
		case "ping":
			reply["result"] = json.RawMessage(`{}`)
		default:
			reply["error"] = map[string]any{"code": -32601, "message": "Method not found"}
		}
		if w.Encode(reply) != nil {
			return
		}
	}
}

// testTokens are alice's and bob's bearer tokens, as config keeps them.
var testTokens = []config.Token{
	{Owner: "alice", SHA256: sha256.Sum256([]byte("alice-token"))},
	{Owner: "bob", SHA256: sha256.Sum256([]byte("bob-token"))},
}
