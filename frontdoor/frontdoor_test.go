package frontdoor_test

import (
	"bufio"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/scratchpad-mcp/scratchpad-mcp/config"
	"github.com/scratchpad-mcp/scratchpad-mcp/frontdoor"
	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testwait"
	"github.com/scratchpad-mcp/scratchpad-mcp/oauth"
)

// testTokens are alice's and bob's bearer tokens, as config keeps them.
var testTokens = []config.Token{
	{Owner: "alice", SHA256: sha256.Sum256([]byte("alice-token"))},
	{Owner: "bob", SHA256: sha256.Sum256([]byte("bob-token"))},
}

type agentKey struct{}

// identifyAgent stands for agents' parsing: X-Test-Agent names the
// agent, "bad!" is refused.
func identifyAgent(r *http.Request, owner string) (context.Context, error) {
	a := r.Header.Get("X-Test-Agent")
	if a == "bad!" {
		return nil, errors.New(`X-Test-Agent "bad!": not a name`)
	}
	return context.WithValue(r.Context(), agentKey{}, owner+"/"+a), nil
}

// echoCaller answers what the request's context holds.
var echoCaller = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	agent, _ := r.Context().Value(agentKey{}).(string)
	fmt.Fprintf(w, "owner=%q agent=%q", frontdoor.CallerOf(r.Context()).Owner, agent)
})

// The front door alone, over a real HTTP server on a loopback address:
// what it refuses (and how), and what it puts in the context of what it
// lets through.
func TestFrontDoor(t *testing.T) {
	logins := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "login page") })
	withTokens := frontdoor.FrontDoorOptions{Tokens: testTokens, AllowedOrigins: []string{"https://app.example"}, Identify: identifyAgent, WebLogins: logins, Log: quietLogger()}
	cases := []struct {
		name       string
		opts       frontdoor.FrontDoorOptions
		method     string
		path       string
		header     map[string]string
		host       string
		wantStatus int
		wantBody   string
		wantHeader map[string]string
	}{
		{name: "no token", opts: withTokens, wantStatus: 401, wantBody: "missing or invalid bearer token",
			wantHeader: map[string]string{"WWW-Authenticate": `Bearer realm="scratchpad-mcp"`, "Connection": "close"}},
		{name: "wrong token", opts: withTokens, header: map[string]string{"Authorization": "Bearer carol-token"}, wantStatus: 401,
			wantHeader: map[string]string{"WWW-Authenticate": `Bearer realm="scratchpad-mcp"`}},
		{name: "not a bearer", opts: withTokens, header: map[string]string{"Authorization": "Basic alice-token"}, wantStatus: 401},
		{name: "alice", opts: withTokens, header: map[string]string{"Authorization": "Bearer alice-token", "X-Test-Agent": "a1"},
			wantStatus: 200, wantBody: `owner="alice" agent="alice/a1"`},
		{name: "bob", opts: withTokens, header: map[string]string{"Authorization": "Bearer bob-token"},
			wantStatus: 200, wantBody: `owner="bob" agent="bob/"`},
		{name: "no tokens configured", opts: frontdoor.FrontDoorOptions{Identify: identifyAgent}, header: map[string]string{"X-Test-Agent": "a2"},
			wantStatus: 200, wantBody: `owner="" agent="/a2"`},
		{name: "zero options", wantStatus: 200, wantBody: `owner="" agent=""`},
		{name: "foreign origin", opts: withTokens, header: map[string]string{"Authorization": "Bearer alice-token", "Origin": "https://evil.example"},
			wantStatus: 403, wantBody: `Origin "https://evil.example" is not allowed`, wantHeader: map[string]string{"Connection": "close"}},
		{name: "foreign origin, no tokens", header: map[string]string{"Origin": "https://evil.example"}, wantStatus: 403},
		{name: "allowed origin", opts: withTokens, header: map[string]string{"Authorization": "Bearer alice-token", "Origin": "HTTPS://APP.example"}, wantStatus: 200},
		{name: "loopback origin", header: map[string]string{"Origin": "http://localhost:3000"}, wantStatus: 200},
		{name: "loopback IPv6 origin", header: map[string]string{"Origin": "http://[::1]:3000"}, wantStatus: 200},
		{name: "any origin", opts: frontdoor.FrontDoorOptions{AllowedOrigins: []string{"*"}}, header: map[string]string{"Origin": "https://evil.example"}, wantStatus: 200},
		{name: "rebound host", opts: withTokens, host: "evil.example", header: map[string]string{"Authorization": "Bearer alice-token"},
			wantStatus: 403, wantBody: `invalid Host header "evil.example"`, wantHeader: map[string]string{"Connection": "close"}},
		{name: "rebound host, no tokens", host: "evil.example:80", wantStatus: 403},
		{name: "rebound host on the login page", opts: withTokens, path: oauth.BeginPath, host: "evil.example", wantStatus: 403},
		{name: "localhost host", host: "localhost:1", wantStatus: 200},
		{name: "bad identity header", opts: withTokens, header: map[string]string{"Authorization": "Bearer alice-token", "X-Test-Agent": "bad!"},
			wantStatus: 400, wantBody: `X-Test-Agent "bad!": not a name`, wantHeader: map[string]string{"Connection": "close"}},
		{name: "login page without a token", opts: withTokens, path: oauth.BeginPath, wantStatus: 200, wantBody: "login page"},
		{name: "login callback without a token", opts: withTokens, path: oauth.CallbackPath, wantStatus: 200, wantBody: "login page"},
		{name: "login path without web logins", opts: frontdoor.FrontDoorOptions{Tokens: testTokens}, path: oauth.BeginPath, wantStatus: 401},
		{name: "POST with a body", opts: withTokens, method: "POST", header: map[string]string{"Authorization": "Bearer alice-token"}, wantStatus: 200},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ts := httptest.NewServer(frontdoor.FrontDoor(c.opts, echoCaller))
			defer ts.Close()
			method, path := c.method, c.path
			if method == "" {
				method = "GET"
			}
			if path == "" {
				path = "/mcp"
			}
			req, err := http.NewRequest(method, ts.URL+path, strings.NewReader("{}"))
			if err != nil {
				t.Fatal(err)
			}
			for k, v := range c.header {
				req.Header.Set(k, v)
			}
			if c.host != "" {
				req.Host = c.host
			}
			resp, err := ts.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != c.wantStatus || !strings.Contains(string(body), c.wantBody) {
				t.Errorf("%d %q; want %d containing %q", resp.StatusCode, body, c.wantStatus, c.wantBody)
			}
			for k, v := range c.wantHeader {
				if got := resp.Header.Get(k); got != v && !(k == "Connection" && resp.Close) {
					t.Errorf("%s: %q, want %q", k, got, v)
				}
			}
		})
	}
}

// A body that dribbles in past the body timeout is cut: the handler's
// read fails and the connection is closed. A whole body lifts the
// deadline, so the request it opens lives on past it (a stream).
func TestFrontDoorBodyDeadline(t *testing.T) {
	const timeout = 100 * time.Millisecond
	readErr := make(chan error, 1)
	alive := make(chan bool, 1)
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, err := io.ReadAll(r.Body)
		if err != nil {
			readErr <- err
			return
		}
		// A stream: it outlives the body's deadline many times over.
		select {
		case <-r.Context().Done():
			alive <- false
		case <-time.After(10 * timeout):
			alive <- true
		}
		io.WriteString(w, "streamed")
	})
	ts := httptest.NewServer(frontdoor.FrontDoor(frontdoor.FrontDoorOptions{Tokens: testTokens, BodyTimeout: timeout}, next))
	defer ts.Close()
	addr := strings.TrimPrefix(ts.URL, "http://")

	t.Run("slow body", func(t *testing.T) {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		fmt.Fprintf(c, "POST /mcp HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer alice-token\r\nContent-Length: 4000\r\n\r\n{\"jsonrpc\":", addr)
		select {
		case err := <-readErr:
			if !errors.Is(err, context.DeadlineExceeded) && !isTimeout(err) {
				t.Errorf("the handler's read failed with %v, want a timeout", err)
			}
		case <-time.After(testwait.Timeout):
			t.Fatal("the stalled body was held past the test's bound")
		}
		_ = c.SetReadDeadline(time.Now().Add(testwait.Timeout))
		if _, err := io.ReadAll(c); err != nil {
			t.Errorf("the stalled body's connection was held: %v", err)
		}
	})
	// A stream outlives the body's deadline. Since Go 1.26 net/http
	// clears the read deadline itself once a body is read to its end, so
	// this guards the behaviour; it cannot catch the front door failing
	// to lift its deadline.
	t.Run("whole body, then a stream", func(t *testing.T) {
		req, _ := http.NewRequest("POST", ts.URL+"/mcp", strings.NewReader(`{"jsonrpc":"2.0"}`))
		req.Header.Set("Authorization", "Bearer alice-token")
		resp, err := ts.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if !<-alive || string(b) != "streamed" {
			t.Errorf("the request ended at the body's deadline (answer %q)", b)
		}
	})
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// A request with a valid token proves its connection ([frontdoor.ProveConnection]):
// it keeps its place when the unproven share is full and a newcomer comes.
func TestFrontDoorProvesConnection(t *testing.T) {
	const max = 4 // an unproven share of 1
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	limited := frontdoor.LimitConnections(ln, frontdoor.ConnLimit{Max: max, Proving: true}, quietLogger())
	srv := &http.Server{Handler: frontdoor.FrontDoor(frontdoor.FrontDoorOptions{Tokens: testTokens}, echoCaller), ReadHeaderTimeout: 10 * time.Second, ConnContext: limited.ConnContext}
	go func() { _ = srv.Serve(limited) }()
	defer srv.Close()
	addr := ln.Addr().String()
	request := func(c net.Conn, br *bufio.Reader) (int, error) {
		return rawGet(c, br, "/mcp", addr, "alice-token", testwait.Timeout)
	}
	dial := func() net.Conn {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	a := dial()
	abr := bufio.NewReader(a)
	if code, err := request(a, abr); err != nil || code != 200 {
		t.Fatalf("alice's first request: %d %v", code, err)
	}
	// A silent socket takes the unproven share; were alice's connection
	// unproven, it would have been given up for it.
	dial()
	// A newcomer is admitted after the silent socket (accepts are in
	// order), taking its place.
	d := dial()
	if code, err := request(d, bufio.NewReader(d)); err != nil || code != 200 {
		t.Fatalf("a newcomer: %d %v", code, err)
	}
	if code, err := request(a, abr); err != nil || code != 200 {
		t.Errorf("alice's proven connection after the newcomers: %d %v (it was given up)", code, err)
	}
}

func quietLogger() *slog.Logger {
	if testing.Verbose() {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}
