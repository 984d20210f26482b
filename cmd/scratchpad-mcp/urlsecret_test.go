package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testupstream"
	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testwait"
)

// A secret in an upstream URL's path (issue 39, item 8) is never shown:
// not in the server's log when the upstream fails to start, not in the
// error a call returns once the upstream fails (whose error page quotes
// the path, as Express's "Cannot POST /…" does), not in doctor's
// report. The URL is shown with the segment masked: /mcp/xxxxx.
func TestUpstreamURLPathSecretMasked(t *testing.T) {
	const secret = "PATHSECRET123"
	var broken atomic.Bool
	broken.Store(true)
	up := testupstream.Handler()
	remote := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if broken.Load() {
			http.Error(w, "Cannot "+r.Method+" "+r.URL.Path, http.StatusInternalServerError)
			return
		}
		up.ServeHTTP(w, r)
	}))
	// Closed after the server (cleanups run last first): its streams
	// to the upstream are gone by then.
	t.Cleanup(func() { remote.CloseClientConnections(); remote.Close() })
	cfgPath, _ := writeConfig(t, `
[mcp.servers.remote]
transport = "http_streamable"
url = "`+remote.URL+`/mcp/`+secret+`"
prefix = "r"
timeout = "5s"
`)
	code, out := runBin(t, nil, "doctor", "--config", cfgPath)
	if strings.Contains(out, secret) || !strings.Contains(out, "/mcp/xxxxx") || !strings.Contains(out, "HTTP 500") {
		t.Errorf("doctor (%d) shows the secret, or not the URL and its failure:\n%s", code, out)
	}

	log := &serverLog{}
	base := startHTTPLogged(t, "http", cfgPath, log)
	testwait.For(t, "the failed start in the log", func() bool {
		return strings.Contains(log.String(), "upstream failed to start")
	})
	if l := log.String(); strings.Contains(l, secret) || !strings.Contains(l, "/mcp/xxxxx") {
		t.Errorf("the server's log shows the secret, or not the URL:\n%s", l)
	}

	broken.Store(false)
	c := httpClient(t, base+"/mcp", nil)
	waitForTool(t, c, "r__echo")
	if got := callTool(t, c, "r__echo", map[string]any{"text": "up"}); got != "up" {
		t.Fatalf("r__echo: %q", got)
	}
	broken.Store(true)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	res, err := c.CallTool(ctx, &mcp.CallToolParams{Name: "r__echo", Arguments: map[string]any{"text": "down"}})
	cancel()
	answer := ""
	if err != nil {
		answer = err.Error()
	} else {
		answer = text(res)
	}
	if !strings.Contains(answer, "HTTP 500") || strings.Contains(answer, secret) || !strings.Contains(answer, "/mcp/xxxxx") {
		t.Errorf("the call's error shows the secret, or not the failure: %s", answer)
	}
	if strings.Contains(log.String(), secret) {
		t.Errorf("the server's log shows the secret:\n%s", log.String())
	}
}
