package server

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testredis"
	"github.com/scratchpad-mcp/scratchpad-mcp/state"
)

// rawSession is a 2025 session driven by hand over HTTP, with the
// owner header the test replicas read.
type rawSession struct {
	t     *testing.T
	owner string
	id    string
}

func (s *rawSession) do(method, base, body string) *http.Response {
	s.t.Helper()
	req, _ := http.NewRequestWithContext(context.Background(), method, base, strings.NewReader(body))
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	req.Header.Set("X-Test-Owner", s.owner)
	if s.id != "" {
		req.Header.Set("Mcp-Session-Id", s.id)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	s.t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// open initializes a session on base, as a client taking URL
// elicitations, and says it is initialized.
func openRaw(t *testing.T, base, owner string) *rawSession {
	t.Helper()
	s := &rawSession{t: t, owner: owner}
	resp := s.do(http.MethodPost, base, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{"url":{}}},"clientInfo":{"name":"t","version":"1"}}}`)
	_, _ = io.ReadAll(resp.Body)
	if s.id = resp.Header.Get("Mcp-Session-Id"); s.id == "" {
		t.Fatalf("initialize of %s: %d, no session", owner, resp.StatusCode)
	}
	if r := s.do(http.MethodPost, base, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); r.StatusCode != http.StatusAccepted {
		t.Fatalf("initialized: %d", r.StatusCode)
	}
	return s
}

// ping makes the session live on base (taken up there if another replica
// made it).
func (s *rawSession) ping(base string) {
	s.t.Helper()
	r := s.do(http.MethodPost, base, `{"jsonrpc":"2.0","id":2,"method":"ping"}`)
	_, _ = io.ReadAll(r.Body)
	if r.StatusCode != http.StatusOK {
		s.t.Fatalf("ping on %s: %d", base, r.StatusCode)
	}
}

// stream opens the session's GET stream on base: its data lines arrive
// on the channel, closed when the stream ends.
func (s *rawSession) stream(base string) <-chan string {
	s.t.Helper()
	resp := s.do(http.MethodGet, base, "")
	if resp.StatusCode != http.StatusOK {
		s.t.Fatalf("GET on %s: %d", base, resp.StatusCode)
	}
	lines := make(chan string, 64)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok && d != "" {
				lines <- d
			}
		}
	}()
	return lines
}

// A notification a copy of the session on replica B makes (a login
// through B completed) reaches the GET stream replica A holds; another
// owner's GET stream on A gets nothing of it; a DELETE on B ends A's copy,
// whose GET stream ends.
func TestNotificationReachesGETStreamOnAnotherReplica(t *testing.T) {
	rs := testredis.Start(t)
	mk := func() *state.Redis {
		st, err := state.NewRedis(state.RedisOptions{URL: rs.URL(), Prefix: "relay", Timeout: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		return st
	}
	a, _ := replicaWith(t, mk(), "a", 0, StreamableHTTPOptions{})
	b, srvB := replicaWith(t, mk(), "b", 0, StreamableHTTPOptions{})
	alice, bob := openRaw(t, a.URL, "alice"), openRaw(t, a.URL, "bob")
	alice.ping(b.URL)
	bob.ping(b.URL)
	aliceGET, bobGET := alice.stream(a.URL), bob.stream(a.URL)
	// The GET listens once its stream is open: wait until a publish
	// reaches a listener.
	deadline, probe := time.Now().Add(10*time.Second), mk()
	for {
		stream, _ := sessionChannels("alice", alice.id)
		n, err := probe.Publish(context.Background(), stream, []byte(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"probe"}}`))
		if err == nil && n == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("A never listened for alice's stream: %d %v", n, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if got := <-aliceGET; !strings.Contains(got, "probe") {
		t.Fatalf("alice's GET on A: %s", got)
	}

	sent := time.Now()
	srvB.ElicitationComplete("alice", "login-1")
	select {
	case got := <-aliceGET:
		if !strings.Contains(got, "notifications/elicitation/complete") || !strings.Contains(got, "login-1") {
			t.Fatalf("alice's GET on A got %s", got)
		}
		t.Logf("B's notification on A's GET stream after %s", time.Since(sent).Round(10*time.Microsecond))
	case <-time.After(10 * time.Second):
		t.Fatal("B's notification for alice's session never reached her GET stream on A")
	}
	select {
	case got := <-bobGET:
		t.Fatalf("bob's GET on A got %s", got)
	case <-time.After(300 * time.Millisecond):
	}

	// DELETE on B: A's copy ends, and with it the GET stream.
	if r := alice.do(http.MethodDelete, b.URL, ""); r.StatusCode != http.StatusNoContent {
		t.Fatalf("DELETE on B: %d", r.StatusCode)
	}
	select {
	case got, open := <-aliceGET:
		if open {
			t.Fatalf("alice's GET on A after DELETE on B: %s", got)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("A's copy of the deleted session lives on: its GET stream did not end")
	}
	if r := alice.do(http.MethodPost, a.URL, `{"jsonrpc":"2.0","id":3,"method":"ping"}`); r.StatusCode != http.StatusNotFound {
		t.Fatalf("ping on A after DELETE on B: %d, want 404", r.StatusCode)
	}
	bob.ping(a.URL) // another session is untouched
}
