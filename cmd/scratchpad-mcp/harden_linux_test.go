package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testwait"
)

func openFiles(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd")
	}
	return len(ents)
}

// A request refused for its token (or its Host, Origin or identity) gets
// its answer and its connection closed: 500 refused sockets hold no
// descriptor once answered.
func TestRefusedRequestsCloseTheirConnection(t *testing.T) {
	cfg, _, _ := tenancyConfig(t, "", "alice")
	addr, _ := serveInProcess(t, cfg)
	before := openFiles(t)
	const n = 500
	conns := make([]net.Conn, 0, n)
	for range n {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
		fmt.Fprintf(c, "POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}", addr)
	}
	for i, c := range conns {
		_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
		b, err := io.ReadAll(c) // ends when the server closes
		if err != nil || !strings.HasPrefix(string(b), "HTTP/1.1 401") {
			t.Fatalf("socket %d: %v after %.80q (the connection was not closed)", i, err, b)
		}
		c.Close()
	}
	testwait.For(t, "the refused sockets' descriptors to be released", func() bool { return openFiles(t) <= before+10 })
}

// A body that dribbles in is cut when its time is up, with a token or
// not; the connection goes with it.
func TestSlowBodyIsCut(t *testing.T) {
	old := bodyTimeout
	bodyTimeout = 300 * time.Millisecond
	t.Cleanup(func() { bodyTimeout = old })
	cfg, _, tok := tenancyConfig(t, "", "alice")
	addr, _ := serveInProcess(t, cfg)
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "POST /mcp HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 4000000\r\n\r\n{\"jsonrpc\":", addr, tok["alice"])
	_ = c.SetReadDeadline(time.Now().Add(20 * time.Second))
	b, err := io.ReadAll(c)
	if err != nil {
		t.Fatalf("the stalled body's connection was held: %v (%q)", err, b)
	}
	// A whole body after it on another connection is served.
	c2 := httpClient(t, "http://"+addr+"/mcp", map[string]string{"Authorization": "Bearer " + tok["alice"]})
	if _, err := c2.ListTools(t.Context(), nil); err != nil {
		t.Fatal(err)
	}
}

// /events and /debug/* refuse a rebound Host as /mcp does.
func TestReboundHostRefusedEverywhere(t *testing.T) {
	cfg, _ := writeConfig(t, "")
	addr, _ := serveInProcess(t, cfg)
	for _, path := range []string{"/mcp", "/events", "/debug/stats"} {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: evil.example\r\n\r\n", path)
		_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
		b, _ := io.ReadAll(c)
		c.Close()
		if !strings.HasPrefix(string(b), "HTTP/1.1 403") {
			t.Errorf("%s with Host evil.example: %.120q", path, b)
		}
	}
}

// doctor names an upstream's URL without its password or query secrets.
func TestDoctorMasksURLSecrets(t *testing.T) {
	cfg, _ := writeConfig(t, "\n[mcp.servers.remote]\ntransport = \"http_streamable\"\nurl = \"http://alice:PASS-1234@127.0.0.1:1/mcp?api_key=SECRET-5678\"\ntimeout = \"2s\"\n")
	_, out, errOut := runCLI(t, "doctor", "--config", cfg)
	if all := out + errOut; strings.Contains(all, "PASS-1234") || strings.Contains(all, "SECRET-5678") || !strings.Contains(all, "api_key=xxxxx") {
		t.Errorf("doctor output shows a secret (or not the masked URL):\n%s", all)
	}
}

// Batch lines that go-sdk cannot take ([], [1], [{"foo":1}]) are answered
// with JSON-RPC errors over stdio, and the session goes on.
func TestStdioBatchLinesAnswered(t *testing.T) {
	// 2025-03-26 has batches: each is answered element by element; from
	// 2025-06-18 on there are none: a batch line is refused whole. Either
	// way the session goes on.
	cases := map[string][]struct{ line, want string }{
		"2025-03-26": {
			{`[]`, `"code":-32600`},
			{`[1]`, `[{"error":{"code":-32600`},
			{`[{"foo":1}]`, `[{"error":{"code":-32600`},
			{`[{"jsonrpc":"2.0","id":7,"method":"ping"},{"foo":1}]`, `"id":7`},
		},
		"2025-11-25": {
			{`[]`, `"code":-32600`},
			{`[1]`, `batching is not supported in protocol 2025-06-18 and later`},
			{`[{"jsonrpc":"2.0","id":7,"method":"ping"}]`, `batching is not supported`},
		},
	}
	for version, batches := range cases {
		t.Run(version, func(t *testing.T) { stdioBatchLines(t, version, batches) })
	}
}

func stdioBatchLines(t *testing.T, version string, batches []struct{ line, want string }) {
	cfg, _ := writeConfig(t, "")
	cmd := exec.Command(binary(t), "serve", "--config", cfg, "--log-level", "error")
	in, _ := cmd.StdinPipe()
	outPipe, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { in.Close(); _ = cmd.Wait() })
	lines := bufio.NewScanner(outPipe)
	lines.Buffer(make([]byte, 1<<20), 1<<20)
	next := func() string {
		t.Helper()
		got := make(chan string, 1)
		go func() {
			for lines.Scan() {
				if !strings.Contains(lines.Text(), `"method"`) { // not a notification or request of the server's
					got <- lines.Text()
					return
				}
			}
			got <- "EOF: " + fmt.Sprint(lines.Err())
		}()
		select {
		case s := <-got:
			return s
		case <-time.After(20 * time.Second):
			t.Fatal("no answer")
			return ""
		}
	}
	fmt.Fprintln(in, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"`+version+`","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	if got := next(); !strings.Contains(got, `"id":1`) || !strings.Contains(got, "protocolVersion") {
		t.Fatalf("initialize: %s", got)
	}
	fmt.Fprintln(in, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	for _, tc := range batches {
		fmt.Fprintln(in, tc.line)
		if got := next(); !strings.Contains(got, tc.want) {
			t.Errorf("%s: answered %s, want %s", tc.line, got, tc.want)
		}
	}
	fmt.Fprintln(in, `{"jsonrpc":"2.0","id":9,"method":"ping"}`)
	if got := next(); !strings.Contains(got, `"id":9`) || !strings.Contains(got, `"result"`) {
		t.Fatalf("after the batches, ping: %s", got)
	}
}

// Legacy SSE: a session belongs to the owner who opened it. Bob, with his
// own token and alice's session id, gets 404 (as for a session that never
// existed) and writes nothing into her session; alice's POST is taken.
func TestSSESessionBoundToOwner(t *testing.T) {
	cfg, _, tok := tenancyConfig(t, "", "alice", "bob")
	base := startHTTP(t, "sse", cfg)
	req, _ := http.NewRequest("GET", base+"/sse", nil)
	req.Header.Set("Authorization", "Bearer "+tok["alice"])
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	endpoint := ""
	for sc.Scan() {
		if e, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			endpoint = e
			break
		}
	}
	if !strings.Contains(endpoint, "sessionid=") {
		t.Fatalf("no endpoint event (%q)", endpoint)
	}
	post := func(owner string) int {
		body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
		r, _ := http.NewRequest("POST", base+endpoint, strings.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Authorization", "Bearer "+tok[owner])
		resp, err := http.DefaultClient.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := post("bob"); code != http.StatusNotFound {
		t.Errorf("bob posting to alice's session: HTTP %d, want 404", code)
	}
	if code := post("alice"); code != http.StatusAccepted {
		t.Errorf("alice posting to her session: HTTP %d, want 202", code)
	}
}

// Sessions are bounded per owner: bob past his limit gets 429 naming it,
// while alice still connects.
func TestSessionFloodBoundedPerOwner(t *testing.T) {
	cfg, _, tok := tenancyConfig(t, "max_sessions_per_owner = 20\n", "alice", "bob")
	base := startHTTP(t, "http", cfg)
	initialize := func(owner string) int {
		body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
		r, _ := http.NewRequest("POST", base+"/mcp", strings.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Accept", "application/json, text/event-stream")
		r.Header.Set("Authorization", "Bearer "+tok[owner])
		resp, err := http.DefaultClient.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode == http.StatusTooManyRequests && !strings.Contains(string(b), "limit of 20 sessions") {
			t.Errorf("429 without the limit: %s", b)
		}
		return resp.StatusCode
	}
	for i := range 20 {
		if code := initialize("bob"); code != http.StatusOK {
			t.Fatalf("bob's session %d: HTTP %d", i, code)
		}
	}
	for range 50 {
		if code := initialize("bob"); code != http.StatusTooManyRequests {
			t.Fatalf("bob past his limit: HTTP %d, want 429", code)
		}
	}
	c := ownerClient(t, base, tok["alice"], nil)
	if _, err := c.ListTools(t.Context(), nil); err != nil {
		t.Fatal(err)
	}
}

// With bearer tokens /debug/* is not served, --debug-stats or not: its
// figures are every owner's at once.
func TestDebugStatsOffWithTokens(t *testing.T) {
	cfg, _, tok := tenancyConfig(t, "", "alice")
	base := startHTTP(t, "http", cfg, "--debug-stats")
	for _, path := range []string{"/debug/stats", "/debug/pprof/"} {
		r, _ := http.NewRequest("GET", base+path, nil)
		r.Header.Set("Authorization", "Bearer "+tok["alice"])
		resp, err := http.DefaultClient.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("%s with a token: HTTP %d, want 404", path, resp.StatusCode)
		}
	}
}

// Open connections are bounded ([http] max_connections): with every
// place held by a connection proven with a valid token, one over the
// bound is answered 503 and closed at once, holding no descriptor; once
// connections close, new ones are served again.
func TestConnectionsBounded(t *testing.T) {
	cfg, _, tokens := tenancyConfig(t, "max_connections = 20\n", "alice")
	addr, _ := serveInProcess(t, cfg)
	var held []net.Conn
	defer func() {
		for _, c := range held {
			c.Close()
		}
	}()
	for range 20 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, c)
		// A request with the token proves the connection, which stays
		// open (keep-alive).
		fmt.Fprintf(c, "POST /mcp HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 2\r\n\r\n{}", addr, tokens["alice"])
		_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatalf("a client's request: %v", err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	// The listener counts a connection once it accepted it.
	for i := range 5 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
		b, err := io.ReadAll(c)
		c.Close()
		if err != nil || !strings.HasPrefix(string(b), "HTTP/1.1 503") || !strings.Contains(string(b), "max_connections") {
			t.Fatalf("connection %d over the bound: %v %.120q", 21+i, err, b)
		}
	}
	for _, c := range held[:5] {
		c.Close()
	}
	held = held[5:]
	testwait.For(t, "a new client to be served once connections closed", func() bool {
		hc := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
		req, _ := http.NewRequest("POST", "http://"+addr+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
		req.Header.Set("Authorization", "Bearer "+tokens["alice"])
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := hc.Do(req)
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode != http.StatusServiceUnavailable
	})
}
