package main

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testredis"
	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testwait"
)

// splitter sends a session's GET to one replica and every other request
// to the other: a balancer that puts the long-lived stream apart from the
// calls, as round-robin does whenever they land apart.
type splitter struct {
	get, rest *url.URL
	gets      atomic.Int64
}

func (s *splitter) RoundTrip(r *http.Request) (*http.Response, error) {
	u := s.rest
	if r.Method == http.MethodGet {
		u = s.get
		s.gets.Add(1)
	}
	r = r.Clone(r.Context())
	r.URL.Scheme, r.URL.Host, r.Host = u.Scheme, u.Host, u.Host
	return http.DefaultTransport.RoundTrip(r)
}

// Two processes, one Redis: the client's GET stream on A, its calls on B.
// A tool B's upstream adds is announced (tools/list_changed, made by B's
// copy of the session) on the stream A holds; the client's DELETE, on B,
// ends A's copy too, which then answers 404 at once rather than serving
// the deleted session until its idle timeout.
func TestReplicasRelayGETStreamAndDelete(t *testing.T) {
	srv := testredis.Start(t)
	var bases []*url.URL
	for range 2 {
		cfg, _ := writeConfig(t, clusterConfig(srv.URL()))
		u, err := url.Parse(startHTTP(t, "http", cfg))
		if err != nil {
			t.Fatal(err)
		}
		bases = append(bases, u)
	}
	sp := &splitter{get: bases[0], rest: bases[1]}
	changed := make(chan struct{}, 16)
	c := mcp.NewClient(&mcp.Implementation{Name: "relay-test", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: "http://balancer/mcp", HTTPClient: &http.Client{Transport: sp}}, &mcp.ClientSessionOptions{ProtocolVersion: protocolVersion})
	if err != nil {
		t.Fatalf("initialize: %v", err)
	}
	waitForTool(t, cs, "listing")
	testwait.For(t, "the client's GET stream on A", func() bool { return sp.gets.Load() > 0 })

	// A listens once its GET holds the stream: a tool added before that
	// is announced where no one listens. Each try adds another tool.
	got := false
	for i := 0; i < 20 && !got; i++ {
		callTool(t, cs, "add_tool", map[string]any{"name": fmt.Sprintf("added_%d", i)})
		select {
		case <-changed:
			got = true
		case <-time.After(500 * time.Millisecond):
		}
	}
	if !got {
		t.Fatal("tools/list_changed made on B never reached the GET stream on A")
	}

	id := cs.ID()
	if err := cs.Close(); err != nil { // DELETE, to B
		t.Fatalf("close: %v", err)
	}
	ping := func() int {
		req, _ := http.NewRequest(http.MethodPost, bases[0].String()+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":9,"method":"ping"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Session-Id", id)
		req.Header.Set("Mcp-Protocol-Version", protocolVersion)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	testwait.For(t, "A's copy of the session deleted on B to end", func() bool { return ping() == http.StatusNotFound })
}
