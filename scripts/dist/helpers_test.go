package main

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"testing"
	"time"
)

// needs skips t when cmd is not on PATH, or fails it under CI=true
// (scripts/deps.sh installs what the packaging tests need).
func needs(t *testing.T, cmd string) {
	t.Helper()
	if _, err := exec.LookPath(cmd); err != nil {
		if ci, _ := strconv.ParseBool(os.Getenv("CI")); ci {
			t.Fatalf("%s is not installed (scripts/deps.sh needs Node.js >= 20 and npm)", cmd)
		}
		t.Skipf("%s is not installed", cmd)
	}
}

var (
	hostOnce sync.Once
	hostOpts options
	hostErr  error
)

// hostOptions are [options] for this machine's target only, the binary
// stamped with testVersion; the module's root found once.
func hostOptions(t *testing.T) options {
	t.Helper()
	hostOnce.Do(func() {
		root, err := moduleRoot()
		hostOpts, hostErr = options{root: root, version: testVersion, commit: "abc1234", targets: []target{hostTarget()}}, err
	})
	if hostErr != nil {
		t.Fatal(hostErr)
	}
	o := hostOpts
	o.out = t.TempDir()
	return o
}

// testVersion is the tag the tests build: its npm version is 1.2.3-test.4.
const testVersion = "v1.2.3-test.4"

// mcpSession is a stdio MCP server under test, spoken to in raw
// JSON-RPC lines.
type mcpSession struct {
	cmd   *exec.Cmd
	in    io.WriteCloser
	lines chan []byte
	next  int
}

// startMCP starts cmd and sends initialize; it fails t unless the answer
// comes, from scratchpad-mcp, within a minute. The process ends with t.
func startMCP(t *testing.T, cmd *exec.Cmd) *mcpSession {
	t.Helper()
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if testing.Verbose() {
		cmd.Stderr = os.Stderr
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &mcpSession{cmd: cmd, in: in, lines: make(chan []byte, 16)}
	t.Cleanup(func() {
		in.Close() // end of input: the server stops
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			s.lines <- append([]byte(nil), sc.Bytes()...)
		}
		close(s.lines)
	}()
	var res struct {
		ServerInfo struct{ Name string } `json:"serverInfo"`
	}
	s.call(t, "initialize", map[string]any{
		"protocolVersion": "2025-06-18", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "dist-test", "version": "1"},
	}, &res)
	if res.ServerInfo.Name != "scratchpad-mcp" {
		t.Fatalf("initialize answered by %q, want scratchpad-mcp", res.ServerInfo.Name)
	}
	s.send(t, map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"})
	return s
}

func (s *mcpSession) send(t *testing.T, msg any) {
	t.Helper()
	b, _ := json.Marshal(msg)
	if _, err := s.in.Write(append(b, '\n')); err != nil {
		t.Fatal(err)
	}
}

// call sends a request and decodes its result into res, skipping what
// the server sends meanwhile (notifications).
func (s *mcpSession) call(t *testing.T, method string, params, res any) {
	t.Helper()
	s.next++
	id := s.next
	s.send(t, map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	timeout := time.After(time.Minute)
	for {
		select {
		case line, ok := <-s.lines:
			if !ok {
				t.Fatalf("%s: the server closed its output", method)
			}
			var msg struct {
				ID     *int            `json:"id"`
				Result json.RawMessage `json:"result"`
				Error  json.RawMessage `json:"error"`
			}
			if json.Unmarshal(line, &msg) != nil || msg.ID == nil || *msg.ID != id {
				continue
			}
			if msg.Error != nil {
				t.Fatalf("%s: %s", method, msg.Error)
			}
			if err := json.Unmarshal(msg.Result, res); err != nil {
				t.Fatalf("%s: %v: %s", method, err, msg.Result)
			}
			return
		case <-timeout:
			t.Fatalf("%s: no answer in a minute", method)
		}
	}
}

// toolText calls tool and returns its result's text.
func (s *mcpSession) toolText(t *testing.T, tool string, args map[string]any) string {
	t.Helper()
	var res struct {
		Content []struct{ Text string } `json:"content"`
		IsError bool                    `json:"isError"`
	}
	s.call(t, "tools/call", map[string]any{"name": tool, "arguments": args}, &res)
	text := ""
	for _, c := range res.Content {
		text += c.Text
	}
	if res.IsError {
		t.Fatalf("%s: %s", tool, text)
	}
	return text
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
