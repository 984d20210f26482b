package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/scratchpad-mcp/scratchpad-mcp/config"
	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testupstream"
	"github.com/scratchpad-mcp/scratchpad-mcp/wire"
)

// everythingServer is go-sdk v1.8.0's everything-server, built once.
func everythingServer(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds go-sdk's everything-server")
	}
	bin, err := testupstream.EverythingServer()
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// startEverythingHTTP runs the everything-server over streamable HTTP and
// returns its URL.
func startEverythingHTTP(t *testing.T, bin string, args ...string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	cmd := exec.Command(bin, append([]string{"-http", addr}, args...)...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	for start := time.Now(); ; time.Sleep(20 * time.Millisecond) {
		if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			c.Close()
			return "http://" + addr + "/mcp"
		}
		if time.Since(start) > 20*time.Second {
			t.Fatalf("everything-server -http %s did not listen", addr)
		}
	}
}

// TestEverythingServerModern: the real go-sdk v1.8.0 server, over stateless
// streamable HTTP and over stdio, is found modern by the probe,
// lists, answers a simple call, checks our Mcp-Param-Region header, refuses
// a call whose caller lacks a capability with -32021 (and serves it when
// the caller has it), and answers input_required as an *InputRequired.
func TestEverythingServerModern(t *testing.T) {
	bin := everythingServer(t)
	for _, tc := range []struct {
		name string
		cfg  func() config.Server
	}{
		{"http stateless", func() config.Server {
			return config.Server{Transport: config.TransportHTTPStreamable, URL: startEverythingHTTP(t, bin)}
		}},
		{"stdio", func() config.Server {
			return config.Server{Transport: config.TransportStdio, Cmd: []string{bin}}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.cfg()
			cfg.Name, cfg.Protocol, cfg.Timeout = "everything", config.ProtocolAuto, 20*time.Second
			relisted := make(chan struct{}, 16)
			u := New(Options{Server: cfg, Logger: quietLogger(), ClientName: "scratchpad-mcp", ClientVersion: "test",
				OnListChanged: func(*Upstream) { relisted <- struct{}{} }})
			u.Start(context.Background(), nil)
			t.Cleanup(u.Close)
			if st, err := awaitSettled(t, u); st != StateReady {
				t.Fatalf("state %s: %v", st, err)
			}
			if p := u.Protocol(); p.Version != wire.Revision20260728 || p.How != "server/discover" {
				t.Fatalf("protocol %s", p)
			}
			tools := map[string]bool{}
			for _, tool := range u.Tools() {
				tools[tool.Name] = true
			}
			for _, want := range []string{"test_simple_text", "test_x_mcp_header", "test_input_required_result_elicitation", "test_missing_capability"} {
				if !tools[want] {
					t.Errorf("tools/list lacks %s (%d tools)", want, len(tools))
				}
			}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			call := func(ctx context.Context, name string, args map[string]any) (json.RawMessage, error) {
				return u.Call(ctx, "tools/call", map[string]any{"name": name, "arguments": args})
			}
			res, err := call(ctx, "test_simple_text", map[string]any{})
			if err != nil {
				t.Fatalf("test_simple_text: %v", err)
			}
			if text, isErr := toolResultText(t, res); isErr || text == "" {
				t.Errorf("test_simple_text: %s", res)
			}
			// go-sdk checks Mcp-Param-Region against the argument: a
			// missing or wrong header would be -32020.
			if res, err := call(ctx, "test_x_mcp_header", map[string]any{"region": "eu-wést-1", "level": 3}); err != nil {
				t.Errorf("test_x_mcp_header: %v", err)
			} else if _, isErr := toolResultText(t, res); isErr {
				t.Errorf("test_x_mcp_header: %s", res)
			}
			_, err = call(ctx, "test_missing_capability", nil)
			if rerr, ok := errors.AsType[*RPCError](err); !ok || rerr.Code != wire.CodeMissingCapability {
				t.Errorf("test_missing_capability without sampling: %v, want -32021", err)
			}
			sampling := WithClient(ctx, ClientMeta{Caps: json.RawMessage(`{"sampling":{}}`)})
			if _, err := call(sampling, "test_missing_capability", nil); err != nil {
				t.Errorf("test_missing_capability with the caller's sampling: %v", err)
			}
			elicit := WithClient(ctx, ClientMeta{Caps: json.RawMessage(`{"elicitation":{"form":{}}}`)})
			_, err = call(elicit, "test_input_required_result_elicitation", nil)
			ir, ok := errors.AsType[*InputRequired](err)
			if !ok {
				t.Fatalf("test_input_required_result_elicitation: %v, want *InputRequired", err)
			}
			if req := string(ir.Requests["user_name"]); !strings.Contains(req, "elicitation/create") {
				t.Errorf("input requests %v", ir.Requests)
			}

			// subscriptions/listen: acknowledged, and a tool change the
			// server announces on it re-lists.
			waitFor(t, "the listen stream acknowledged", func() bool {
				u.mu.Lock()
				defer u.mu.Unlock()
				return u.listening&KindTools != 0
			})
			for len(relisted) > 0 {
				<-relisted
			}
			if _, err := call(ctx, "test_trigger_tool_change", nil); err != nil {
				t.Fatalf("test_trigger_tool_change: %v", err)
			}
			recv(t, relisted, "the re-listing after the server's tools/list_changed")
		})
	}
}

// TestEverythingServerStateful: go-sdk v1.8.0 over stateful streamable
// HTTP answers server/discover with the 2025 revisions only, so the probe
// says 2025 and the upstream is initialized and works as before.
func TestEverythingServerStateful(t *testing.T) {
	bin := everythingServer(t)
	cfg := config.Server{Name: "everything", Transport: config.TransportHTTPStreamable, URL: startEverythingHTTP(t, bin, "-stateless=false"),
		Protocol: config.ProtocolAuto, Timeout: 20 * time.Second}
	u := New(Options{Server: cfg, Logger: quietLogger()})
	u.Start(context.Background(), nil)
	t.Cleanup(u.Close)
	if st, err := awaitSettled(t, u); st != StateReady {
		t.Fatalf("state %s: %v", st, err)
	}
	if p := u.Protocol(); p.Version != "2025-11-25" || !strings.HasPrefix(p.How, "initialize; discover: supportedVersions [2025-11-25") {
		t.Errorf("protocol %s", p)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := u.Call(ctx, "tools/call", map[string]any{"name": "test_simple_text", "arguments": map[string]any{}})
	if err != nil {
		t.Fatalf("test_simple_text: %v", err)
	}
	if text, isErr := toolResultText(t, res); isErr || text == "" {
		t.Errorf("test_simple_text: %s", res)
	}
}
