package upstream

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/scratchpad-mcp/scratchpad-mcp/config"
)

// envStdioServer makes the test binary a stdio MCP server (see
// stdioServer) instead of running tests.
const envStdioServer = "UPSTREAM_TEST_STDIO_SERVER"

// envPIDFile makes the stdio server write its process id there.
const envPIDFile = "UPSTREAM_TEST_PID_FILE"

// envProxy makes the test binary a proxy of one stdio upstream that runs
// until it is killed (see proxyUntilKilled).
const envProxy = "UPSTREAM_TEST_PROXY"

func TestMain(m *testing.M) {
	if os.Getenv(envStdioServer) != "" {
		if f := os.Getenv(envPIDFile); f != "" {
			_ = os.WriteFile(f+".tmp", []byte(fmt.Sprint(os.Getpid())), 0o644)
			_ = os.Rename(f+".tmp", f)
		}
		stdioServer()
		if os.Getenv(envPIDFile) != "" {
			// A server that does not take the end of stdin for the end:
			// only a signal stops it.
			time.Sleep(time.Hour)
		}
		os.Exit(0)
	}
	if os.Getenv(envProxy) != "" {
		proxyUntilKilled()
	}
	os.Exit(m.Run())
}

// proxyUntilKilled runs an Upstream of the stdio server (writing its pid
// to the file named by envPIDFile) and waits to be killed.
func proxyUntilKilled() {
	cfg := stdioConfig("child")
	cfg.Env[envPIDFile] = os.Getenv(envPIDFile)
	u := New(Options{Server: cfg, Logger: quietLogger()})
	u.Start(context.Background(), nil)
	select {}
}

// stdioServer is a line-delimited JSON-RPC MCP server on stdin/stdout:
// initialize, tools/list, and tools/call of progress (count progress
// notifications, then the result, written in one go) and crash (exits
// without answering).
func stdioServer() {
	in := bufio.NewReader(os.Stdin)
	out := bufio.NewWriter(os.Stdout)
	for {
		line, err := in.ReadBytes('\n')
		if err != nil {
			return
		}
		var m rpcMessage
		if json.Unmarshal(line, &m) != nil || len(m.ID) == 0 {
			continue
		}
		reply := rpcMessage{JSONRPC: "2.0", ID: m.ID}
		switch m.Method {
		case "initialize":
			reply.Result = json.RawMessage(`{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"stdio","version":"1"}}`)
		case "tools/list":
			reply.Result = json.RawMessage(`{"tools":[{"name":"progress","inputSchema":{"type":"object"}}]}`)
		case "tools/call":
			var p struct {
				Name      string `json:"name"`
				Arguments struct {
					Count int `json:"count"`
				} `json:"arguments"`
			}
			_ = json.Unmarshal(m.Params, &p)
			switch p.Name {
			case "crash":
				os.Exit(3)
			case "crash_mid_answer":
				// Killed while writing a big answer: half a line, then gone.
				fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"%s`, m.ID, strings.Repeat("x", 100000))
				out.Flush()
				os.Exit(3)
			}
			for i := 1; i <= p.Arguments.Count; i++ {
				fmt.Fprintf(out, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":%d}}`+"\n", i)
			}
			reply.Result = toolText(fmt.Sprintf("sent %d", p.Arguments.Count), false)
		default:
			reply.Error = &RPCError{Code: -32601, Message: "Method not found"}
		}
		b, _ := json.Marshal(reply)
		out.Write(append(b, '\n'))
		out.Flush()
	}
}

func stdioConfig(name string) config.Server {
	return config.Server{Name: name, Transport: config.TransportStdio, Cmd: []string{os.Args[0]},
		Env: map[string]string{envStdioServer: "1"}, Timeout: 10 * time.Second,
		RestartMaxAttempts: 100, RestartBackoffMax: 100 * time.Millisecond}
}

// TestStdioProgressBeforeTheResult: the ordering guarantee over stdio,
// through the public API: every notification sent before the response
// has reached OnNotify, in order, when Call returns.
func TestStdioProgressBeforeTheResult(t *testing.T) {
	const n = 1000
	var mu sync.Mutex
	var got []int
	u := New(Options{Server: stdioConfig("stdio"), Logger: quietLogger(), OnNotify: func(_ *Upstream, method string, params json.RawMessage) {
		var p struct {
			Progress int `json:"progress"`
		}
		if method == "notifications/progress" && json.Unmarshal(params, &p) == nil {
			time.Sleep(time.Microsecond) // a handler that takes time changes nothing
			mu.Lock()
			got = append(got, p.Progress)
			mu.Unlock()
		}
	}})
	u.Start(context.Background(), nil)
	defer u.Close()
	for round := range 3 {
		mu.Lock()
		got = nil
		mu.Unlock()
		text, err := callTool(t, u, "progress", map[string]any{"count": n}, nil)
		mu.Lock()
		seen := append([]int(nil), got...)
		mu.Unlock()
		if err != nil || text != fmt.Sprintf("sent %d", n) {
			t.Fatalf("round %d: %q %v", round, text, err)
		}
		if len(seen) != n {
			t.Fatalf("round %d: %d notifications before the result, want %d", round, len(seen), n)
		}
		for i, p := range seen {
			if p != i+1 {
				t.Fatalf("round %d: notification %d is %d", round, i, p)
			}
		}
	}
}

// TestStdioCrashAndRestart: a call in flight when the process dies fails
// with ErrUpstreamExited and the exit status; the next call succeeds on
// the restarted process.
func TestStdioCrashAndRestart(t *testing.T) {
	u := New(Options{Server: stdioConfig("crashy"), Logger: quietLogger()})
	u.Start(context.Background(), nil)
	defer u.Close()
	_, err := callTool(t, u, "crash", nil, nil)
	if !errors.Is(err, ErrUpstreamExited) || !strings.Contains(err.Error(), `upstream "crashy" exited during the call`) || !strings.Contains(err.Error(), "exit status 3") {
		t.Fatalf("call in flight: %v", err)
	}
	if text, err := callTool(t, u, "progress", map[string]any{"count": 1}, nil); err != nil || text != "sent 1" {
		t.Fatalf("after the restart: %q %v", text, err)
	}
}

// A process that dies in the middle of writing an answer (the soak's
// SIGKILL) fails its call with how it exited, not "invalid response":
// the unfinished line is no answer.
func TestStdioCrashMidAnswer(t *testing.T) {
	u := New(Options{Server: stdioConfig("crashy"), Logger: quietLogger()})
	u.Start(context.Background(), nil)
	defer u.Close()
	_, err := callTool(t, u, "crash_mid_answer", nil, nil)
	if !errors.Is(err, ErrUpstreamExited) || !strings.Contains(err.Error(), "exit status 3") || errors.Is(err, ErrInvalidResponse) {
		t.Fatalf("call in flight: %v", err)
	}
}

// TestStdioUpstreamThatCannotStartFailsClearly: a call to an upstream
// whose process exits at once fails within the bound, naming it and why.
func TestStdioUpstreamThatCannotStartFailsClearly(t *testing.T) {
	cfg := config.Server{Name: "broken", Transport: config.TransportStdio, Cmd: []string{"sh", "-c", "echo 'no config found' >&2; exit 2"},
		Timeout: time.Second, RestartMaxAttempts: 100, RestartBackoffMax: 100 * time.Millisecond}
	u := New(Options{Server: cfg, Logger: quietLogger()})
	u.Start(context.Background(), nil)
	defer u.Close()
	start := time.Now()
	_, err := u.Call(context.Background(), "tools/call", map[string]any{"name": "x"})
	if !errors.Is(err, ErrUpstreamUnavailable) || !strings.Contains(err.Error(), `upstream "broken" is unavailable: restarting after: `) || !strings.Contains(err.Error(), "no config found") {
		t.Fatalf("got %v", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("took %s, want about the 1 s timeout", d)
	}
	if st, err := u.State(); st != StateRestarting || err == nil {
		t.Errorf("state %s %v", st, err)
	}
}

// TestNeverStartedOrClosedFailsAtOnce: Close of an upstream never
// started does nothing; calls after Close fail at once.
func TestNeverStartedOrClosedFailsAtOnce(t *testing.T) {
	New(Options{Server: config.Server{Name: "idle"}}).Close()
	u := New(Options{Server: stdioConfig("closed"), Logger: quietLogger()})
	u.Start(context.Background(), nil)
	if _, err := callTool(t, u, "progress", nil, nil); err != nil {
		t.Fatal(err)
	}
	u.Close()
	_, err := u.Call(context.Background(), "ping", nil)
	if !errors.Is(err, ErrUpstreamUnavailable) || !strings.Contains(err.Error(), "stopped") {
		t.Errorf("call after Close: %v", err)
	}
}
