package main

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testredis"
	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testwait"
)

// Two processes, one Redis: a 2025 client calls the upstream's slow tool
// (progress, then an answer) on A, loses its stream after the prime
// event, and resumes it (GET, Last-Event-ID) on B, as a round-robin
// balancer sends it. B gets every progress notification and the answer,
// under A's event ids, and the stream ends after the answer.
func TestReplicasResumeStreamOnAnotherReplica(t *testing.T) {
	bases := resumeReplicas(t)
	resumeAcross(t, resumeRoute{post: bases[0] + "/mcp", get: bases[1] + "/mcp"})
}

// The same through a real haproxy balancing round-robin with no
// stickiness: every request goes to the front, and the resumption is
// checked to have been served by the other replica (X-Served-By).
func TestReplicasResumeStreamThroughHAProxy(t *testing.T) {
	front := startHAProxy(t, resumeReplicas(t)) + "/mcp"
	resumeAcross(t, resumeRoute{post: front, get: front, viaBalancer: true})
}

func resumeReplicas(t *testing.T) []string {
	srv := testredis.Start(t)
	var bases []string
	for range 2 {
		cfg, _ := writeConfig(t, clusterConfig(srv.URL()))
		bases = append(bases, startHTTP(t, "http", cfg))
	}
	return bases
}

// resumeRoute is where a resumption test sends its requests: the POST
// (and the session's set-up) and the GET that resumes. viaBalancer: both
// are one front, and the GET must be served by another replica than the
// POST's.
type resumeRoute struct {
	post, get   string
	viaBalancer bool
}

func resumeAcross(t *testing.T, route resumeRoute) {
	client := &http.Client{Timeout: 30 * time.Second}
	req := func(method, base, session, lastID, body string) *http.Response {
		t.Helper()
		r, _ := http.NewRequest(method, base, strings.NewReader(body))
		r.Header.Set("Accept", "application/json, text/event-stream")
		if body != "" {
			r.Header.Set("Content-Type", "application/json")
		}
		if session != "" {
			r.Header.Set("Mcp-Session-Id", session)
			r.Header.Set("Mcp-Protocol-Version", protocolVersion)
		}
		if lastID != "" {
			r.Header.Set("Last-Event-ID", lastID)
		}
		resp, err := client.Do(r)
		if err != nil {
			t.Fatalf("%s %s: %v", method, body, err)
		}
		return resp
	}
	all := func(resp *http.Response) string {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return string(b)
	}
	a, b := route.post, route.get
	resp := req("POST", a, "", "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"`+protocolVersion+`","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	all(resp)
	session := resp.Header.Get("Mcp-Session-Id")
	if session == "" {
		t.Fatalf("no session id (HTTP %d)", resp.StatusCode)
	}
	all(req("POST", a, session, "", `{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	testwait.For(t, "tool slow listed", func() bool {
		return strings.Contains(all(req("POST", a, session, "", `{"jsonrpc":"2.0","id":3,"method":"tools/list"}`)), `"slow"`)
	})

	const steps = 4
	// The call, on an event stream whose first id it reads before the
	// network blinks. Through the balancer a loaded machine can answer
	// it with a 503 (both replicas' health checks failed at once): then
	// it is sent again, as a client would.
	holder, prime, last := "", "", ""
	call := 2
	if !testwait.Until(testwait.Timeout, func() bool {
		post := req("POST", a, session, "", fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"slow","arguments":{"steps":%d,"ms":150},"_meta":{"progressToken":"p%d"}}}`, call, steps, call))
		call++
		if ct := post.Header.Get("Content-Type"); post.StatusCode != http.StatusOK || !strings.HasPrefix(ct, "text/event-stream") {
			last = fmt.Sprintf("HTTP %d %s: %.300s", post.StatusCode, ct, all(post))
			return false
		}
		holder = post.Header.Get("X-Served-By")
		sc := bufio.NewScanner(post.Body)
		for prime == "" && sc.Scan() {
			if id, ok := strings.CutPrefix(sc.Text(), "id: "); ok {
				prime = id
			}
		}
		post.Body.Close() // the network blinked
		last = "an event stream without an id"
		return prime != ""
	}) {
		t.Fatalf("no prime event id on the POST stream: the last answer was %s", last)
	}
	stream, _, ok := strings.Cut(prime, "_")
	if !ok {
		t.Fatalf("the prime event id %q names no stream", prime)
	}

	// Through the balancer, round-robin sends the next request to the
	// replica after the one that served the last: pings (answered by
	// any replica, the session is shared) until the holder served one,
	// so the GET goes to the other. Bounded by time, not by a count of
	// pings: a loaded machine can fail one of the holder's health checks
	// (fall 1), and until it passes again every ping goes to the other.
	ping := 100
	aligned := func() {
		if !route.viaBalancer {
			return
		}
		if !testwait.Until(testwait.Timeout, func() bool {
			r := req("POST", a, session, "", fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping"}`, ping))
			ping++
			all(r)
			return r.Header.Get("X-Served-By") == holder
		}) {
			t.Fatalf("the balancer never sent a ping to %s, the stream's replica", holder)
		}
	}
	// The holder answers 409 until it has seen the client leave.
	var get *http.Response
	testwait.For(t, "the resumption on the other replica taken", func() bool {
		aligned()
		get = req("GET", b, session, prime, "")
		if get.StatusCode == http.StatusConflict {
			all(get)
			return false
		}
		return true
	})
	served := get.Header.Get("X-Served-By")
	body := all(get)
	if get.StatusCode != http.StatusOK {
		t.Fatalf("resumption: HTTP %d %s", get.StatusCode, body)
	}
	if route.viaBalancer && (holder == "" || served == holder) {
		t.Fatalf("the stream was held by %q and resumed on %q: not across replicas", holder, served)
	}
	evs := parseSSE(body)
	if len(evs) != steps+1 {
		t.Fatalf("resumed on %s: %d events, want %d progress and the answer:\n%s", served, len(evs), steps, body)
	}
	for i, e := range evs {
		want := `"notifications/progress"`
		if i == steps {
			want = fmt.Sprintf("done after %d steps", steps)
		}
		if !strings.Contains(e.data, want) || e.id != fmt.Sprintf("%s_%d", stream, i+1) {
			t.Errorf("event %d resumed: id %q %s, want id %s_%d and %s", i, e.id, e.data, stream, i+1, want)
		}
	}
}
