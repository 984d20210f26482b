//go:build unix

package main

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"net/http"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testwait"
)

// lockedBuffer is a strings.Builder safe for a reader and a writer.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) WriteString(s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.b.WriteString(s)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// A port in use ends serve at once, saying so once, before any upstream
// or retention sweep starts.
func TestPortClashExitsFirst(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	cfg, _ := writeConfig(t, "\n[retention]\nmax_age = \"1d\"\n")
	var errOut bytes.Buffer
	cmd := exec.Command(binary(t), "serve", "--config", cfg, "--transport", "http", "--addr", ln.Addr().String())
	cmd.Stderr = &errOut
	err = cmd.Run()
	out := errOut.String()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Fatalf("serve on a port in use: %v\n%s", err, out)
	}
	if strings.Count(out, "listen tcp") != 1 || !strings.Contains(out, "address already in use") || strings.Contains(out, "listen "+ln.Addr().String()+":") {
		t.Errorf("the clash is not said once and plainly:\n%s", out)
	}
	if strings.Contains(out, "retention sweep") || strings.Contains(out, "upstream") {
		t.Errorf("something started before the port was taken:\n%s", out)
	}
}

// SIGTERM is said in the log, and so are refused tokens (a line for a
// burst, with its count).
func TestLogsSayShutdownAndRefusals(t *testing.T) {
	cfg, _, _ := tenancyConfig(t, "", "alice")
	base, mu, cmd := serveLogged(t, cfg)
	for range 5 {
		resp, err := http.Post(base+"/mcp", "application/json", strings.NewReader(`{}`))
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	testwait.For(t, "a log line for the refused token", func() bool { return strings.Contains(mu.String(), "refused: missing or invalid bearer token") })
	if n := strings.Count(mu.String(), "refused: missing or invalid bearer token"); n != 1 {
		t.Errorf("%d lines for a burst of 5 refusals, want 1:\n%s", n, mu.String())
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	testwait.For(t, "the shutdown to be logged", func() bool {
		return strings.Contains(mu.String(), "shutting down") && strings.Contains(mu.String(), "signal=terminated")
	})
}

// An upstream that hangs at start does not hold up the others: the first
// tools/list comes with the healthy server's tools long before the start
// wait (15 s) is over, and the log names the stuck one.
func TestHungUpstreamDoesNotHoldOthers(t *testing.T) {
	cfg, _ := writeConfig(t, "\n[mcp.servers.stuck]\ncmd = [\"sleep\", \"1000\"]\n")
	base, logs, _ := serveLogged(t, cfg)
	start := time.Now()
	c := httpClient(t, base+"/mcp", nil)
	res, err := c.ListTools(t.Context(), nil)
	took := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	names := []string{}
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	if !slices.Contains(names, "listing") {
		t.Errorf("the first tools/list lacks the healthy server's tools: %v", names)
	}
	if took > 10*time.Second {
		t.Errorf("initialize and the first tools/list took %s: held for the hung upstream", took)
	}
	testwait.For(t, "a log line naming the stuck upstream", func() bool {
		return strings.Contains(logs.String(), "upstream still starting") && strings.Contains(logs.String(), "server=stuck")
	})
}

// serveLogged starts serve over HTTP on a free port with cfg and returns
// its base URL, its log (stderr) as it comes, and the process (killed at
// the test's end).
func serveLogged(t *testing.T, cfg string) (string, *lockedBuffer, *exec.Cmd) {
	t.Helper()
	cmd := exec.Command(binary(t), "serve", "--config", cfg, "--transport", "http", "--addr", "127.0.0.1:0")
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	logs := &lockedBuffer{}
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			logs.WriteString(sc.Text() + "\n")
			if i := strings.Index(sc.Text(), "addr="); i >= 0 && strings.Contains(sc.Text(), "serving") {
				addr <- strings.Fields(sc.Text()[i+5:])[0]
			}
		}
	}()
	select {
	case a := <-addr:
		return "http://" + a, logs, cmd
	case <-time.After(30 * time.Second):
		t.Fatal("not serving")
		return "", nil, nil
	}
}
