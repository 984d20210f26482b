package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scratchpad-mcp/scratchpad-mcp/explore"
	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testwait"
	"github.com/scratchpad-mcp/scratchpad-mcp/server"
	"github.com/scratchpad-mcp/scratchpad-mcp/tool"
)

// slowGrep is a grep RE2 runs slowly (bounded repeats tried at every
// byte, as in explore's TestSlowGrepCancels) over a file big enough that
// the search, run to its end, takes minutes: a call that is still
// running when the test looks is one nobody stopped.
var slowGrep = map[string]any{"file": "big.log", "pattern": `[^\n]{0,1000}[^\n]{0,1000}[JQ]`}

// slowExplore is an exploration Env over a directory holding big.log,
// with the per-agent bound of calls at once, and the server's own tools
// for it. Its calls also end when the test does (a test of the code
// before the fix would otherwise leave a grep running for minutes): the
// test's own stop, not anything the server does.
func slowExplore(t testing.TB) (*explore.Env, *server.Own) {
	t.Helper()
	dir := t.TempDir()
	line := strings.Repeat("abcdefghik ", 30) + "\n"
	if err := os.WriteFile(filepath.Join(dir, "big.log"), []byte(strings.Repeat(line, (8<<20)/len(line))), 0o600); err != nil {
		t.Fatal(err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { root.Close() })
	env := &explore.Env{Root: root, Count: func(s string) int { return len(strings.Fields(s)) },
		Slots: make(chan struct{}, explore.DefaultConcurrency)}
	testCtx, stop := context.WithCancel(context.Background())
	t.Cleanup(func() {
		stop()
		testwait.For(t, "the test's calls to end", func() bool { return len(env.Slots) == 0 })
	})
	defs := explore.Tools(func(context.Context) (*explore.Env, error) { return env, nil })
	for i := range defs {
		h := defs[i].Handler
		defs[i].Handler = func(ctx context.Context, args json.RawMessage) tool.Result {
			ctx, cancel := context.WithCancel(ctx)
			defer context.AfterFunc(testCtx, cancel)()
			defer cancel()
			return h(ctx, args)
		}
	}
	return env, &server.Own{Tools: defs}
}

// cutter dials a client's connections and can cut them all at once, the
// way a client that dies or loses its network does: no cancellation, no
// DELETE, and no connection after.
type cutter struct {
	mu    sync.Mutex
	conns []net.Conn
	cut   bool
}

func (c *cutter) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cut {
		return nil, errors.New("the test cut this client's network")
	}
	conn, err := (&net.Dialer{}).DialContext(ctx, network, addr)
	if err == nil {
		c.conns = append(c.conns, conn)
	}
	return conn, err
}

func (c *cutter) cutAll() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.cut = true
	for _, conn := range c.conns {
		_ = conn.Close()
	}
}

func (c *cutter) client() *http.Client {
	return &http.Client{Transport: &http.Transport{DialContext: c.dial}}
}

// cuttable connects a client to e over front and returns the function
// that cuts it off: its TCP connections closed (http, sse), its output
// to the server closed (stdio).
func cuttable(t *testing.T, e *env, front string, r *recorder) (*mcp.ClientSession, func()) {
	t.Helper()
	c := &cutter{}
	switch front {
	case "http":
		return connectOver(t, &mcp.StreamableClientTransport{Endpoint: e.url, MaxRetries: -1, HTTPClient: c.client()}, r), c.cutAll
	case "sse":
		return connectOver(t, &mcp.SSEClientTransport{Endpoint: e.sseURL, HTTPClient: c.client()}, r), c.cutAll
	case "stdio":
		fromServer, toServer := e.stdioPipes(t)
		return connectOver(t, &mcp.IOTransport{Reader: fromServer, Writer: toServer}, r), func() { _ = toServer.Close() }
	}
	t.Fatalf("unknown front %q", front)
	return nil, nil
}

// startSlow starts the slow grep on cs and waits until it runs (it holds
// one of the agent's slots).
func startSlow(t *testing.T, cs *mcp.ClientSession, env *explore.Env) {
	t.Helper()
	go func() {
		_, _ = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "grep", Arguments: slowGrep})
	}()
	testwait.For(t, "the slow grep to run", func() bool { return len(env.Slots) == 1 })
}

// waitStopped waits for the agent's slots to be free again: the call's
// work ended. It logs how long that took after since.
func waitStopped(t *testing.T, env *explore.Env, what string, since time.Time) {
	t.Helper()
	testwait.For(t, "the grep to stop after "+what, func() bool { return len(env.Slots) == 0 })
	t.Logf("%s: the grep stopped %s after", what, time.Since(since).Round(time.Millisecond))
}

// A client that goes away without cancelling leaves no work running:
// its connection cut (streamable HTTP, legacy SSE) or its input closed
// (stdio: after the input's grace, 200 ms here, in which what it asked is
// still answered), the grep it started stops, and a forwarded call is
// cancelled at the upstream as a client's cancellation is.
func TestDisconnectStopsCalls(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a slow regexp")
	}
	env, own := slowExplore(t)
	// The upstream's own time bound on a call must not be what cancels it.
	up := blockerUpstream("b")
	up.Timeout = testwait.Timeout + 15*time.Second
	e := startEnvWith(t, envOptions{own: own, inputGrace: 200 * time.Millisecond}, up)
	// Another client reads the upstream's count of cancellations.
	reader := connect(t, e, "http", nil)
	waitTool(t, reader, "cancelled")
	cancelled := 0
	for _, front := range fronts {
		t.Run(front+"/own", func(t *testing.T) {
			cs, cut := cuttable(t, e, front, nil)
			startSlow(t, cs, env)
			cut()
			waitStopped(t, env, front+" client gone", time.Now())
		})
		t.Run(front+"/forwarded", func(t *testing.T) {
			r := &recorder{}
			cs, cut := cuttable(t, e, front, r)
			go func() {
				p := &mcp.CallToolParams{Name: "block", Arguments: map[string]any{}}
				p.SetProgressToken("blocking")
				_, _ = cs.CallTool(context.Background(), p)
			}()
			r.waitNotes(t, "notifications/progress", 1) // the upstream has the call
			cut()
			cancelled++
			want := fmt.Sprint(cancelled)
			testwait.For(t, "the upstream to see notifications/cancelled", func() bool { return text(call(t, reader, "cancelled", nil)) == want })
		})
	}
}

// rawSession initializes a streamable HTTP session with raw requests and
// returns its id, for a test that sends what go-sdk's client would not.
func rawSession(t *testing.T, url string) string {
	t.Helper()
	post := func(session, body string) *http.Response {
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
			req.Header.Set("Mcp-Protocol-Version", protocol)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp
	}
	resp := post("", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"`+protocol+`","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	sid := resp.Header.Get("Mcp-Session-Id")
	if sid == "" {
		t.Fatalf("initialize: HTTP %d, no session", resp.StatusCode)
	}
	post(sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return sid
}

// A session's DELETE is answered at once, its calls cancelled rather
// than waited for.
func TestDeleteCancelsCalls(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a slow regexp")
	}
	env, own := slowExplore(t)
	e := startEnvWith(t, envOptions{own: own})
	sid := rawSession(t, e.url)
	// The call's POST stays open: only the DELETE ends the session.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		args, _ := json.Marshal(slowGrep)
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, e.url, strings.NewReader(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"grep","arguments":`+string(args)+`}}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Session-Id", sid)
		req.Header.Set("Mcp-Protocol-Version", protocol)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}()
	testwait.For(t, "the slow grep to run", func() bool { return len(env.Slots) == 1 })
	req, _ := http.NewRequest(http.MethodDelete, e.url, nil)
	req.Header.Set("Mcp-Session-Id", sid)
	req.Header.Set("Mcp-Protocol-Version", protocol)
	start := time.Now()
	resp, err := (&http.Client{Timeout: testwait.Timeout}).Do(req)
	if err != nil {
		t.Fatalf("DELETE while a call runs: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		t.Fatalf("DELETE: HTTP %d", resp.StatusCode)
	}
	t.Logf("DELETE answered after %s", time.Since(start).Round(time.Millisecond))
	waitStopped(t, env, "DELETE", start)
}

// A session that passes its idle timeout ends, and its calls with it:
// the client left (its POST is gone), and the resumption window is longer
// than the timeout, so only the session's end stops the call.
func TestSessionTimeoutCancelsCalls(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a slow regexp")
	}
	env, own := slowExplore(t)
	e := startEnvWith(t, envOptions{own: own, http: server.StreamableHTTPOptions{SessionTimeout: 300 * time.Millisecond, ResumeWindow: time.Hour}})
	cs, cut := cuttable(t, e, "http", nil)
	startSlow(t, cs, env)
	cut()
	waitStopped(t, env, "the session timeout", time.Now())
}

// Shutting the server down cancels every session's calls.
func TestShutdownCancelsCalls(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a slow regexp")
	}
	env, own := slowExplore(t)
	e := startEnvWith(t, envOptions{own: own})
	for _, front := range fronts {
		t.Run(front, func(t *testing.T) {
			cs := connect(t, e, front, nil)
			startSlow(t, cs, env)
			start := time.Now()
			e.srv.Shutdown()
			waitStopped(t, env, "shutdown", start)
		})
	}
}

// The time bound of one call of the server's own tools ends a call that
// runs past it, which answers saying so.
func TestCallTimeBound(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a slow regexp")
	}
	_, own := slowExplore(t)
	e := startEnvWith(t, envOptions{own: own, callTimeout: 500 * time.Millisecond})
	for _, front := range fronts {
		t.Run(front, func(t *testing.T) {
			cs := connect(t, e, front, nil)
			ctx, cancel := context.WithTimeout(context.Background(), testwait.Timeout)
			defer cancel()
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "grep", Arguments: slowGrep})
			if err != nil {
				t.Fatalf("the call past its time bound: %v", err)
			}
			if got := text(res); !strings.Contains(got, `"error":"cancelled"`) || !strings.Contains(got, "time bound") {
				t.Fatalf("the call past its time bound answered %.300s", got)
			}
		})
	}
}

// A client whose stream broke and that resumes it (Last-Event-ID) within
// the resumption window keeps its call: MCP says a disconnection is not a
// cancellation. The call is held well past the window after the resume,
// then answers.
func TestResumedCallGoesOn(t *testing.T) {
	const window = time.Second
	release := make(chan struct{})
	wait := tool.Def{Name: "wait", InputSchema: tool.Object(), Handler: func(ctx context.Context, _ json.RawMessage) tool.Result {
		select {
		case <-release:
			return tool.Text("released")
		case <-ctx.Done():
			return tool.Error(fmt.Sprintf("cancelled: %v", context.Cause(ctx)))
		}
	}}
	e := startEnvWith(t, envOptions{own: &server.Own{Tools: []tool.Def{wait}}, http: server.StreamableHTTPOptions{ResumeWindow: window}})
	sid := rawSession(t, e.url)
	req, _ := http.NewRequest(http.MethodPost, e.url, strings.NewReader(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"wait","arguments":{}}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", sid)
	req.Header.Set("Mcp-Protocol-Version", protocol)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	// The prime event gives the id to resume from; then the client's
	// connection breaks.
	var last string
	buf := make([]byte, 4096)
	for got := ""; last == ""; {
		n, err := resp.Body.Read(buf)
		got += string(buf[:n])
		if i := strings.Index(got, "id: "); i >= 0 && strings.Contains(got[i:], "\n") {
			last = strings.TrimSpace(strings.SplitN(got[i+4:], "\n", 2)[0])
		}
		if err != nil && last == "" {
			t.Fatalf("no prime event: %v %q", err, got)
		}
	}
	resp.Body.Close()
	get, _ := http.NewRequest(http.MethodGet, e.url, nil)
	get.Header.Set("Accept", "text/event-stream")
	get.Header.Set("Mcp-Session-Id", sid)
	get.Header.Set("Mcp-Protocol-Version", protocol)
	get.Header.Set("Last-Event-ID", last)
	answered := make(chan string, 1)
	go func() {
		for {
			// Its headers come with the first event: the answer. 409:
			// the server has not yet seen the POST's connection close
			// (go-sdk's client waits the prime event's retry delay).
			resumed, err := http.DefaultClient.Do(get)
			if err != nil {
				answered <- err.Error()
				return
			}
			b, err := io.ReadAll(resumed.Body)
			resumed.Body.Close()
			if resumed.StatusCode == http.StatusConflict {
				time.Sleep(10 * time.Millisecond)
				continue
			}
			answered <- fmt.Sprintf("HTTP %d %s %v", resumed.StatusCode, b, err)
			return
		}
	}()
	time.Sleep(3 * window) // a call cancelled at the window's end would answer now
	close(release)
	if got := <-answered; !strings.Contains(got, "HTTP 200") || !strings.Contains(got, "released") {
		t.Fatalf("the resumed call answered %q", got)
	}
}
