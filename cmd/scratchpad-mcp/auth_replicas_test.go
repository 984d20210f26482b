package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testoauth"
	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testredis"
	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testwait"
	"github.com/scratchpad-mcp/scratchpad-mcp/oauth"
)

// TestAuthWebLoginAcrossReplicas (issue 34, replicas): two serve
// processes, one Redis, one public URL (a balancer without stickiness in
// front of both). Bob's call hands out a login URL; the browser's steps
// (the begin page, the proof, the redirect back) go to one replica and
// the other in turn; the login completes, bob's calls on both replicas
// run as him, and the redirect back again is refused on either.
func TestAuthWebLoginAcrossReplicas(t *testing.T) {
	srv := testoauth.New(t, testoauth.Options{})
	rs := testredis.Start(t)
	t.Setenv("SCRATCHPAD_MCP_AUTH_DIR", filepath.Join(t.TempDir(), "auth")) // one host: one sealing key
	browserRR := &roundRobin{hits: make([]atomic.Int64, 2)}
	front := httptest.NewServer(&httputil.ReverseProxy{
		Rewrite:   func(pr *httputil.ProxyRequest) { pr.Out.URL.Scheme, pr.Out.URL.Host = "http", "replica" },
		Transport: browserRR,
	})
	t.Cleanup(front.Close)
	token := "bob-token-0123456789ab"
	mcpRR := &roundRobin{hits: make([]atomic.Int64, 2)}
	var logs []*serverLog
	for range 2 {
		cfgPath, _ := writeConfig(t, `
[mcp.servers.remote]
transport = "http_streamable"
url = "`+srv.MCPURL()+`"

[mcp.servers.remote.auth]
type = "oauth"

[http]
public_url = "`+front.URL+`"

[[http.tokens]]
owner = "bob"
token = "`+token+`"
`+clusterConfig(rs.URL()))
		log := &serverLog{}
		u, err := url.Parse(startHTTPLogged(t, "http", cfgPath, log))
		if err != nil {
			t.Fatal(err)
		}
		logs = append(logs, log)
		browserRR.targets = append(browserRR.targets, u)
		mcpRR.targets = append(mcpRR.targets, u)
	}
	bob := connect(t, &mcp.StreamableClientTransport{Endpoint: "http://balancer/mcp", DisableStandaloneSSE: true,
		HTTPClient: &http.Client{Transport: headerTransport{map[string]string{"Authorization": "Bearer " + token}, mcpRR}}})
	t.Cleanup(func() { bob.Close() })
	waitForTool(t, bob, "echo")
	var logins []string
	for range 2 { // one call on each replica
		res := callResult(t, bob, "whoami")
		m := regexp.MustCompile(`open (http\S+) in a browser`).FindStringSubmatch(text(res))
		if !res.IsError || m == nil {
			t.Fatalf("whoami before login: %q, want a tool error with a login URL", text(res))
		}
		logins = append(logins, m[1])
	}
	if logins[0] != logins[1] || !strings.HasPrefix(logins[0], front.URL+oauth.BeginPath) {
		t.Fatalf("the replicas handed out %q and %q: want one login, at the public URL", logins[0], logins[1])
	}

	// The browser's steps, each to the other replica: the begin page,
	// the proof, the redirect back (the authorization server in between
	// is not behind the balancer).
	browser := srv.Browser("bob-person")
	resp, err := browser.Get(logins[0])
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(page), "owner bob") {
		t.Fatalf("the begin page: HTTP %d %s", resp.StatusCode, page)
	}
	if code, body := proveLogin(t, browser, logins[0], token); code != http.StatusOK || !strings.Contains(body, "Logged in to remote") {
		t.Fatalf("bob's login through the balancer: HTTP %d %s", code, body)
	}
	if a, b := browserRR.hits[0].Load(), browserRR.hits[1].Load(); a != 2 || b != 1 {
		t.Errorf("the browser's steps per replica: %d, %d; want 2 and 1 (begin A, proof B, redirect back A)", a, b)
	}

	// Bob's calls, on either replica, run as him: the replica the
	// redirect reached wakes its upstream at once, and the other's when
	// the completion is relayed to it (else within its 2 s poll). Waited
	// for as four calls in a row (every replica twice) that run as bob.
	t0 := time.Now()
	var last string
	if !testwait.Until(testwait.Timeout, func() bool {
		for range 4 {
			res := callResult(t, bob, "whoami")
			if last = text(res); res.IsError || !strings.HasSuffix(last, " as bob-person") {
				return false
			}
		}
		return true
	}) {
		t.Fatalf("bob's whoami after his login, on every replica: %q", last)
	}
	t.Logf("bob's calls ran as him on both replicas %v after the login", time.Since(t0))
	if a, b := mcpRR.hits[0].Load(), mcpRR.hits[1].Load(); a == 0 || b == 0 {
		t.Errorf("MCP requests per replica %d, %d: both must have answered", a, b)
	}

	// The redirect back again, on either replica: refused.
	var callback string
	for _, v := range browser.Visited() {
		if strings.Contains(v, oauth.CallbackPath+"?") {
			callback = v
		}
	}
	for i := range 2 {
		resp, err := browser.Get(callback)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("the redirect back replayed (%d): HTTP %d, want 400", i, resp.StatusCode)
		}
	}
	for i, log := range logs {
		if s := log.first(func(l string) bool { return strings.Contains(l, token) }); s != "" {
			t.Errorf("replica %d logged bob's bearer token", i)
		}
	}
}
