package server

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scratchpad-mcp/scratchpad-mcp/frontdoor"
	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testredis"
	"github.com/scratchpad-mcp/scratchpad-mcp/proxy"
	"github.com/scratchpad-mcp/scratchpad-mcp/state"
	"github.com/scratchpad-mcp/scratchpad-mcp/tool"
)

// replica is one server process behind a load balancer: its own server,
// proxy and sessions, sharing st with the others.
func replica(t *testing.T, st state.Store, name string) *httptest.Server {
	t.Helper()
	ts, _ := replicaWith(t, st, name, 0, StreamableHTTPOptions{})
	return ts
}

// replicaWith is [replica] with a claim lease ([Options].Lease) and
// transport options of its own.
func replicaWith(t *testing.T, st state.Store, name string, lease time.Duration, hopts StreamableHTTPOptions) (*httptest.Server, *Server) {
	t.Helper()
	who := tool.Def{Name: "who", InputSchema: json.RawMessage(`{"type":"object"}`),
		Handler: func(context.Context, json.RawMessage) tool.Result { return tool.Text(name) }}
	return replicaTools(t, st, lease, hopts, who)
}

// replicaTools is [replicaWith] whose sessions have the given own tools.
func replicaTools(t *testing.T, st state.Store, lease time.Duration, hopts StreamableHTTPOptions, tools ...tool.Def) (*httptest.Server, *Server) {
	t.Helper()
	px := proxy.New(proxy.Options{Logger: quietLog()})
	srv := New(Options{Proxy: px, Logger: quietLog(), State: st, Lease: lease,
		Session: func(SessionInfo) (*Own, error) { return &Own{Tools: tools}, nil }})
	ctx, cancel := context.WithCancel(context.Background())
	px.Start(ctx, nil)
	h := srv.StreamableHTTP(hopts)
	// The owner, as a front door would put it (a test header here).
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c := frontdoor.Caller{Owner: r.Header.Get("X-Test-Owner")}
		if a := r.Header.Get("X-Test-Agent"); a != "" {
			c.Agent = c.Owner + "|" + a
		}
		h.ServeHTTP(w, r.WithContext(frontdoor.WithCaller(r.Context(), c)))
	}))
	t.Cleanup(func() {
		ts.CloseClientConnections()
		ts.Close()
		srv.Shutdown()
		cancel()
		px.Close()
	})
	return ts, srv
}

// roundRobin sends each request to the next replica, as a load balancer
// without stickiness does.
type roundRobin struct {
	targets []*url.URL
	n       atomic.Int64
	base    http.RoundTripper
}

func (rr *roundRobin) RoundTrip(r *http.Request) (*http.Response, error) {
	u := rr.targets[int(rr.n.Add(1)-1)%len(rr.targets)]
	r = r.Clone(r.Context())
	r.URL.Scheme, r.URL.Host, r.Host = u.Scheme, u.Host, u.Host
	return rr.base.RoundTrip(r)
}

// A 2025 session made on one replica is answered by the others: no
// "session not found" behind a balancer with no stickiness.
func TestSessionTakenUpByAnotherReplica(t *testing.T) {
	rs := testredis.Start(t)
	rr := &roundRobin{base: http.DefaultTransport}
	for _, name := range []string{"a", "b", "c"} {
		st, err := state.NewRedis(state.RedisOptions{URL: rs.URL(), Prefix: "t", MemoryDir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		u, _ := url.Parse(replica(t, st, name).URL)
		rr.targets = append(rr.targets, u)
	}
	tr := &mcp.StreamableClientTransport{Endpoint: "http://balancer/", HTTPClient: &http.Client{Transport: rr}, DisableStandaloneSSE: true}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(context.Background(), tr, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if err := cs.SetLoggingLevel(context.Background(), &mcp.SetLoggingLevelParams{Level: "warning"}); err != nil {
		t.Fatalf("setLevel through the balancer: %v", err)
	}
	seen := map[string]int{}
	for i := range 9 {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "who", Arguments: map[string]any{}})
		if err != nil {
			t.Fatalf("call %d through the balancer: %v", i, err)
		}
		seen[res.Content[0].(*mcp.TextContent).Text]++
	}
	if len(seen) != 3 {
		t.Errorf("answered by %v: want all three replicas", seen)
	}
	if _, err := cs.ListTools(context.Background(), nil); err != nil {
		t.Errorf("tools/list: %v", err)
	}
}

// Without a replicated store nothing is taken up: another process's
// session is unknown, as before.
func TestSessionNotTakenUpLocally(t *testing.T) {
	st := state.NewLocal(state.LocalOptions{})
	rr := &roundRobin{base: http.DefaultTransport}
	for _, name := range []string{"a", "b"} {
		u, _ := url.Parse(replica(t, st, name).URL)
		rr.targets = append(rr.targets, u)
	}
	tr := &mcp.StreamableClientTransport{Endpoint: "http://balancer/", HTTPClient: &http.Client{Transport: rr}, DisableStandaloneSSE: true}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(context.Background(), tr, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err == nil {
		defer cs.Close()
		_, err = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "who", Arguments: map[string]any{}})
	}
	if err == nil {
		t.Fatal("a session of another process was answered without a shared store")
	}
}

// A record is its owner's: another owner naming the session is answered
// as for an unknown one, and DELETE forgets it for every replica.
func TestSessionRecordOwnerAndDelete(t *testing.T) {
	rs := testredis.Start(t)
	mk := func() *state.Redis {
		st, err := state.NewRedis(state.RedisOptions{URL: rs.URL(), Prefix: "t"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		return st
	}
	a, b := replica(t, mk(), "a"), replica(t, mk(), "b")
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	post := func(base, sid, owner, body string) *http.Response {
		req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, base, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		if sid != "" {
			req.Header.Set("Mcp-Session-Id", sid)
		}
		req.Header.Set("X-Test-Owner", owner)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { resp.Body.Close() })
		return resp
	}
	resp := post(a.URL, "", "alice", init)
	sid := resp.Header.Get("Mcp-Session-Id")
	if sid == "" {
		t.Fatalf("initialize on a: %d, no session id", resp.StatusCode)
	}
	_, _ = io.ReadAll(resp.Body)
	ping := `{"jsonrpc":"2.0","id":2,"method":"ping"}`
	if r := post(b.URL, sid, "bob", ping); r.StatusCode != http.StatusNotFound {
		t.Errorf("alice's session named by bob on b: %d, want 404", r.StatusCode)
	}
	if r := post(b.URL, sid, "alice", ping); r.StatusCode != http.StatusOK {
		t.Fatalf("ping on b: %d", r.StatusCode)
	}
	del, _ := http.NewRequest(http.MethodDelete, b.URL, nil)
	del.Header.Set("Mcp-Session-Id", sid)
	del.Header.Set("X-Test-Owner", "alice")
	if r, err := http.DefaultClient.Do(del); err != nil || r.StatusCode != http.StatusNoContent {
		t.Fatalf("DELETE on b: %v %v", r, err)
	}
	c := replica(t, mk(), "c")
	if r := post(c.URL, sid, "alice", ping); r.StatusCode != http.StatusNotFound {
		t.Errorf("a deleted session taken up on c: %d", r.StatusCode)
	}
}
