package main

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testredis"
	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testwait"
)

// startHAProxy runs a real haproxy (Debian package, installed by
// scripts/deps.sh) balancing round-robin, with no stickiness, over
// backends, checking each one's /readyz; it returns the front's URL.
func startHAProxy(t *testing.T, backends []string) string {
	t.Helper()
	bin, err := exec.LookPath("haproxy")
	if err != nil {
		t.Fatal("haproxy not found: run scripts/deps.sh")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	front := l.Addr().String()
	l.Close()
	var servers strings.Builder
	for i, b := range backends {
		fmt.Fprintf(&servers, "  server r%d %s check inter 300ms fall 1 rise 1\n", i, strings.TrimPrefix(b, "http://"))
	}
	cfg := fmt.Sprintf(`global
  maxconn 256
defaults
  mode http
  timeout connect 2s
  timeout client 60s
  timeout server 60s
  retries 3
  option redispatch 1
  # each request balanced on its own, as a cloud balancer does
  option http-server-close
frontend fe
  bind %s
  default_backend be
backend be
  balance roundrobin
  option httpchk GET /readyz
  # which replica answered, for tests to see the requests spread
  http-response set-header X-Served-By %%s
%s`, front, servers.String())
	path := filepath.Join(t.TempDir(), "haproxy.cfg")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-db", "-f", path)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if !testing.Verbose() {
		cmd.Stdout, cmd.Stderr = nil, nil
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	testwait.For(t, "haproxy to listen", func() bool {
		c, err := net.Dial("tcp", front)
		if err == nil {
			c.Close()
		}
		return err == nil
	})
	return "http://" + front
}

// Three replicas (three memory_dirs, as on three hosts), one Redis, a
// real haproxy round-robin in front: a 2025 client's session, stored
// outputs and budget work whichever replica answers, and go on when one
// replica is SIGKILLed mid-run.
func TestReplicasBehindHAProxy(t *testing.T) {
	srv := testredis.Start(t)
	var backends []string
	var procs []*exec.Cmd
	logs := make([]*serverLog, 3)
	for i := range 3 {
		cfg, _ := writeConfig(t, clusterConfig(srv.URL()))
		logs[i] = &serverLog{}
		base, cmd := startHTTPProcess(t, "http", cfg, logs[i])
		backends = append(backends, base)
		procs = append(procs, cmd)
	}
	for _, b := range backends {
		testwait.For(t, b+" ready", func() bool {
			resp, err := http.Get(b + "/readyz")
			if err != nil {
				return false
			}
			resp.Body.Close()
			return resp.StatusCode == 200
		})
	}
	front := startHAProxy(t, backends)
	c := connect(t, &mcp.StreamableClientTransport{Endpoint: front + "/mcp", DisableStandaloneSSE: true})
	t.Cleanup(func() { c.Close() })
	waitForTool(t, c, "listing")
	var files []string
	prev := -1
	step := func(i int) {
		t.Helper()
		pointer := callTool(t, c, "listing", map[string]any{"n": 200 + i})
		f := storedName.FindStringSubmatch(pointer)
		if f == nil {
			t.Fatalf("call %d not diverted: %s", i, short(pointer))
		}
		files = append(files, f[1])
		for _, file := range files {
			out := callTool(t, c, "head", map[string]any{"file": file, "lines": 2})
			if !strings.Contains(out, "--- head: ") {
				t.Fatalf("call %d: head %s through haproxy:\n%s", i, file, short(out))
			}
			_, left := footerFigures(t, out)
			if prev >= 0 && left >= prev {
				t.Errorf("call %d: budget left %d, was %d", i, left, prev)
			}
			prev = left
		}
	}
	for i := range 4 {
		step(i)
	}
	// Every replica answered: the one that made the session, and the two
	// that took it up.
	took := 0
	for _, l := range logs {
		if strings.Contains(l.String(), "session taken up from the shared store") {
			took++
		}
	}
	if took != 2 {
		t.Fatalf("%d replicas took the session up, want 2: haproxy did not spread the requests", took)
	}
	// A replica dies as a crash would: haproxy retries a refused
	// connection on another replica (redispatch) until its check takes
	// the dead one out, and the session, the outputs and the budget go
	// on through the others.
	_ = procs[0].Process.Kill()
	for i := 4; i < 8; i++ {
		step(i)
	}
}
