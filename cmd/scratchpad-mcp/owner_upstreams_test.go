//lint:file-ignore SA1019 sampling and logging are what this test checks the proxy routes (deprecated in 2026-07-28, still served)

package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testwait"
)

// ownerPeer is one client of an owner: what its sampling handler was
// asked and the log messages it received.
type ownerPeer struct {
	cs      *mcp.ClientSession
	sampled atomic.Int32
	mu      sync.Mutex
	logs    []string
	// progressed gets the token of each progress notification received.
	progressed chan any
}

// inFlight starts a call to the upstream's slow tool (steps of ms each)
// with a progress token, and returns once its first progress came back:
// the call has then reached the upstream and runs for (steps-1)*ms more.
// done gets its text.
func (p *ownerPeer) inFlight(t *testing.T, steps, ms int) (done <-chan string) {
	t.Helper()
	tok := fmt.Sprintf("slow-%d", time.Now().UnixNano())
	out := make(chan string, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		params := &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{"steps": steps, "ms": ms}}
		params.SetProgressToken(tok)
		res, err := p.cs.CallTool(ctx, params)
		if err != nil {
			out <- "error: " + err.Error()
			return
		}
		out <- text(res)
	}()
	for {
		select {
		case got := <-p.progressed:
			if got == tok {
				return out
			}
		case r := <-out:
			t.Fatalf("the slow call ended before any progress came: %s", r)
		case <-time.After(testwait.Timeout):
			t.Fatal("no progress of the slow call came back")
		}
	}
}

func (p *ownerPeer) logged() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.logs...)
}

func connectOwner(t *testing.T, base, token, answer string) *ownerPeer {
	t.Helper()
	p := &ownerPeer{progressed: make(chan any, 64)}
	c := mcp.NewClient(&mcp.Implementation{Name: "owner-test", Version: "1"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
			select {
			case p.progressed <- r.Params.ProgressToken:
			default:
			}
		},
		CreateMessageHandler: func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			p.sampled.Add(1)
			return &mcp.CreateMessageResult{Role: "assistant", Model: "m", Content: &mcp.TextContent{Text: answer}}, nil
		},
		LoggingMessageHandler: func(_ context.Context, r *mcp.LoggingMessageRequest) {
			p.mu.Lock()
			p.logs = append(p.logs, string(r.Params.Level))
			p.mu.Unlock()
		},
	})
	hc := &http.Client{Transport: headerTransport{map[string]string{"Authorization": "Bearer " + token}, http.DefaultTransport}}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: base + "/mcp", HTTPClient: hc}, &mcp.ClientSessionOptions{ProtocolVersion: protocolVersion})
	if err != nil {
		t.Fatalf("initialize: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	p.cs = cs
	return p
}

func callTextOf(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return text(res)
}

// Two owners and a stdio upstream that samples and logs (issue 26): each
// owner has its own instance of the upstream, so alice's sampling request
// reaches alice only, even while bob has a call in flight to the same
// server, and her upstream's log messages never reach bob's stream.
// Within one owner, a request that cannot be attributed (two sessions
// with calls in flight over stdio) is refused, not guessed.
func TestOwnersHaveTheirOwnUpstreams(t *testing.T) {
	cfg, _, tokens := tenancyConfig(t, "", "alice", "bob")
	// The upstream's ask_sampling sends sampling/createMessage from inside
	// a call, which only the 2025 revisions have (go-sdk refuses it while
	// serving a 2026-07-28 request): pinned, as a user of such a server
	// would pin it.
	pin2025(t, cfg, "k8s")
	base := startHTTP(t, "http", cfg)
	alice := connectOwner(t, base, tokens["alice"], "alice's answer")
	bob := connectOwner(t, base, tokens["bob"], "bob's answer")

	// One process each.
	if a, b := callTextOf(t, alice.cs, "pid", nil), callTextOf(t, bob.cs, "pid", nil); a == b {
		t.Fatalf("alice and bob share the upstream process %s", a)
	}

	// Bob's call is in flight (the most recent: its first progress came
	// back) while alice's upstream asks for sampling.
	bobDone := bob.inFlight(t, 4, 500)
	got := callTextOf(t, alice.cs, "ask_sampling", nil)
	if !strings.Contains(got, "alice's answer") || alice.sampled.Load() != 1 || bob.sampled.Load() != 0 {
		t.Fatalf("alice's sampling: result %q, alice asked %d, bob asked %d", got, alice.sampled.Load(), bob.sampled.Load())
	}
	<-bobDone

	// Logs: both ask for everything; alice's upstream logs four.
	for _, p := range []*ownerPeer{alice, bob} {
		if err := p.cs.SetLoggingLevel(context.Background(), &mcp.SetLoggingLevelParams{Level: "debug"}); err != nil {
			t.Fatal(err)
		}
	}
	callTextOf(t, alice.cs, "log", nil)
	if !testwait.Until(testwait.Timeout, func() bool { return len(alice.logged()) >= 4 }) {
		t.Fatalf("alice got logs %v", alice.logged())
	}
	// Then bob's own four: had alice's reached him, they would be queued
	// before them.
	callTextOf(t, bob.cs, "log", nil)
	if !testwait.Until(testwait.Timeout, func() bool { return len(bob.logged()) >= 4 }) {
		t.Fatalf("bob got logs %v", bob.logged())
	}
	if l := bob.logged(); len(l) != 4 {
		t.Fatalf("bob got %d log messages, his own are 4: %v", len(l), l)
	}

	// Two sessions of alice, both with calls in flight on her stdio
	// upstream: its sampling request cannot be attributed and is refused.
	alice2 := connectOwner(t, base, tokens["alice"], "alice2's answer")
	// Alice's call is in flight (its first progress came back, 1.5 s of
	// it to go) when alice2's asks, 0.5 s into its own.
	slowDone := alice.inFlight(t, 4, 500)
	got = callTextOf(t, alice2.cs, "ask_sampling", map[string]any{"delay_ms": 500})
	if !strings.Contains(got, "rather than guess") || alice2.sampled.Load() != 0 || alice.sampled.Load() != 1 {
		t.Fatalf("ambiguous sampling: result %q, alice asked %d, alice2 asked %d", got, alice.sampled.Load(), alice2.sampled.Load())
	}
	<-slowDone
}

// stalledSession opens a session of token's owner that asks for every
// log message and then never reads its standalone (GET) stream.
func stalledSession(t *testing.T, base, token string) (sid string) {
	t.Helper()
	sid, post := rawSession(t, base, token, "stalled")
	post(sid, `{"jsonrpc":"2.0","id":2,"method":"logging/setLevel","params":{"level":"debug"}}`)
	conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	// A tiny receive buffer: the server's writes block soon.
	if tc, ok := conn.(*net.TCPConn); ok {
		_ = tc.SetReadBuffer(4096)
	}
	fmt.Fprintf(conn, "GET /mcp HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nAccept: text/event-stream\r\nMcp-Session-Id: %s\r\nMcp-Protocol-Version: %s\r\n\r\n",
		strings.TrimPrefix(base, "http://"), token, sid, protocolVersion)
	// ... and nothing is ever read from conn.
	return sid
}

// A client that stops reading its stream holds no one else (issue 26):
// alice's second session stalls its GET stream while asking for every
// log message; her upstream floods it with log messages; her first
// session's calls to the same upstream still answer at once (before,
// the upstream's one delivery goroutine blocked on the stalled socket).
//
// "At once" is said by the server's own log, not by a clock: the fix has
// two halves and each leaves its line. The stalled session's bounded
// queue fills and drops ("client does not read its stream"); its stream's
// write deadline (10 s) later ends the blocked write ("stream write
// failed … timeout"). The calls must all answer before that second
// line: with delivery on the caller's goroutine (no queue) the flood and
// the calls wait for the deadline, so the timeout is logged first and no
// drop ever is; with no deadline the blocked write never ends.
func TestStalledReaderHoldsNoOne(t *testing.T) {
	cfg, _, tokens := tenancyConfig(t, "", "alice")
	log := &serverLog{}
	base := startHTTPLogged(t, "http", cfg, log, "--log-level", "debug")
	alice := connectOwner(t, base, tokens["alice"], "")
	callTextOf(t, alice.cs, "pid", nil)
	sid := stalledSession(t, base, tokens["alice"])
	stalled := func(msg string) func(string) bool {
		return func(line string) bool {
			return strings.Contains(line, msg) && strings.Contains(line, sid)
		}
	}
	timedOut := func(line string) bool {
		return stalled("stream write failed")(line) && strings.Contains(line, "timeout")
	}
	// 8 MB of log messages: far beyond any socket buffer.
	if got := callTextOf(t, alice.cs, "log_flood", map[string]any{"n": 4000, "size": 2000}); got != "flooded" {
		t.Fatalf("log_flood: %q", got)
	}
	for i := range 3 {
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		res, err := alice.cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "still here"}})
		cancel()
		if err != nil || text(res) != "still here" {
			t.Fatalf("call %d after the flood: %v %v (held by the stalled reader)", i, err, res)
		}
	}
	if line := log.first(timedOut); line != "" {
		t.Fatalf("the stalled stream's write deadline passed before the calls answered (they waited on it):\n%s", line)
	}
	if log.wait(t, 20*time.Second, stalled("client does not read its stream")) == "" {
		t.Fatalf("the stalled session's queue never dropped a notification (delivered without a bounded queue?); log:\n%s", log.tail(20))
	}
	if log.wait(t, 30*time.Second, timedOut) == "" {
		t.Fatalf("the stalled stream's blocked write never timed out (no write deadline?); log:\n%s", log.tail(20))
	}
}

// One owner at its bound of stored data is refused alone (issue 26):
// with [retention] owner_max_bytes, alice's outputs stop being diverted
// once she stores that much, with an error saying why, while bob's are
// still stored.
func TestOwnerByteBound(t *testing.T) {
	cfg, _, tokens := tenancyConfig(t, "\n[retention]\nowner_max_bytes = \"200KB\"\n", "alice", "bob")
	base := startHTTP(t, "http", cfg)
	alice := ownerClient(t, base, tokens["alice"], nil)
	bob := ownerClient(t, base, tokens["bob"], nil)
	refused := ""
	for i := 0; i < 20 && refused == ""; i++ {
		out := callTool(t, alice, "listing", map[string]any{"n": 200 + i}) // ~40 KB each
		switch {
		case strings.Contains(out, "owner_max_bytes"):
			refused = out
		case !storedName.MatchString(out):
			t.Fatalf("call %d: neither stored nor refused: %.300s", i, out)
		}
	}
	if refused == "" || !strings.Contains(refused, "was not stored") || !strings.Contains(refused, "its bound is 195.3 KiB") {
		t.Fatalf("alice was never refused, or not clearly: %.400s", refused)
	}
	if out := callTool(t, bob, "listing", map[string]any{"n": 300}); !storedName.MatchString(out) {
		t.Fatalf("bob's output was not stored: %.300s", out)
	}
}

// pin2025 sets protocol = "2025-11-25" for server in the config file cfg
// (its [mcp.servers.NAME] table written by writeConfig).
func pin2025(t *testing.T, cfg, server string) {
	t.Helper()
	b, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	head := "[mcp.servers." + server + "]\n"
	if !strings.Contains(string(b), head) {
		t.Fatalf("%s has no %s", cfg, head)
	}
	b = []byte(strings.Replace(string(b), head, head+"protocol = \"2025-11-25\"\n", 1))
	if err := os.WriteFile(cfg, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// rawSession opens a 2025 session over raw HTTP with token (initialize,
// then initialized) and returns its id and a function that POSTs one
// message in it (sid "" for none), its answer read and dropped, giving
// back the Mcp-Session-Id it answered with.
func rawSession(t *testing.T, base, token, client string) (string, func(sid, body string) string) {
	t.Helper()
	post := func(sid, body string) string {
		req, _ := http.NewRequest(http.MethodPost, base+"/mcp", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", protocolVersion)
		if sid != "" {
			req.Header.Set("Mcp-Session-Id", sid)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		_, _ = io.Copy(io.Discard, resp.Body)
		return resp.Header.Get("Mcp-Session-Id")
	}
	sid := post("", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"`+protocolVersion+`","capabilities":{},"clientInfo":{"name":"`+client+`","version":"1"}}}`)
	if sid == "" {
		t.Fatal("no session id")
	}
	post(sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return sid, post
}
