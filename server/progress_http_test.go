package server

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scratchpad-mcp/scratchpad-mcp/config"
	"github.com/scratchpad-mcp/scratchpad-mcp/proxy"
)

// floodUpstream is a streamable-HTTP MCP server (go-sdk) whose tool
// "flood" sends n progress notifications on the call's stream, then
// answers.
func floodUpstream(t *testing.T) string {
	t.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "flood", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "flood", InputSchema: json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}}}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var args struct{ N int }
			_ = json.Unmarshal(req.Params.Arguments, &args)
			tok := req.Params.GetProgressToken()
			for i := 1; i <= args.N; i++ {
				if err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: float64(i), Total: float64(args.N)}); err != nil {
					return nil, err
				}
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("sent %d", args.N)}}}, nil
		})
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	t.Cleanup(srv.Close)
	return srv.URL
}

// startProxyHTTP serves a proxy of servers over streamable HTTP and
// returns its URL.
func startProxyHTTP(t *testing.T, servers ...config.Server) string {
	t.Helper()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	px := proxy.New(proxy.Options{Servers: servers, Logger: log})
	srv := New(Options{Proxy: px, Logger: log, Session: func(SessionInfo) (*Own, error) { return &Own{}, nil }})
	ctx, cancel := context.WithCancel(context.Background())
	px.Start(ctx, nil)
	h := httptest.NewServer(srv.StreamableHTTP(StreamableHTTPOptions{}))
	t.Cleanup(func() {
		h.Close()
		cancel()
		px.Close()
	})
	px.AwaitStarted(ctx, 10*time.Second)
	return h.URL
}

// postRequest is a streamable-HTTP POST of one JSON-RPC message, in
// session when it is not "".
func postRequest(url, session, msg string) *http.Request {
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(msg))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
		req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	}
	return req
}

// rawPost POSTs one JSON-RPC message to a streamable HTTP endpoint and
// returns every JSON-RPC message of the answer in wire order (a JSON
// body or the data of each SSE event).
func rawPost(t *testing.T, url, session string, msg string) (msgs []json.RawMessage, sessionID string) {
	t.Helper()
	resp, err := http.DefaultClient.Do(postRequest(url, session, msg))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("POST %s: %s: %s", msg, resp.Status, b)
	}
	sessionID = resp.Header.Get("Mcp-Session-Id")
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		b, _ := io.ReadAll(resp.Body)
		if len(bytes.TrimSpace(b)) > 0 {
			msgs = append(msgs, b)
		}
		return msgs, sessionID
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		if data, ok := strings.CutPrefix(sc.Text(), "data:"); ok {
			data = strings.TrimSpace(data)
			if data != "" {
				msgs = append(msgs, json.RawMessage(data))
			}
		}
	}
	return msgs, sessionID
}

// TestThousandProgressFromHTTPUpstreamInOrder: every progress
// notification a streamable-HTTP upstream sends during one call reaches
// the client through the proxy, in order, before the result. The client
// here reads the wire itself: go-sdk's client hands notifications to
// handlers on goroutines of their own, which would blur the order.
func TestThousandProgressFromHTTPUpstreamInOrder(t *testing.T) {
	const n = 1000
	up := floodUpstream(t)
	url := startProxyHTTP(t, config.Server{Name: "up", Transport: config.TransportHTTPStreamable, URL: up + "/", Timeout: 30 * time.Second})

	_, sid := rawPost(t, url, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	if sid == "" {
		t.Fatal("no Mcp-Session-Id")
	}
	rawPost(t, url, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	msgs, _ := rawPost(t, url, sid, fmt.Sprintf(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"flood","arguments":{"n":%d},"_meta":{"progressToken":"p-1"}}}`, n))
	var progress []float64
	answered := -1
	for i, m := range msgs {
		var w struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				ProgressToken any     `json:"progressToken"`
				Progress      float64 `json:"progress"`
			} `json:"params"`
			Result struct {
				Content []struct{ Text string } `json:"content"`
			} `json:"result"`
		}
		if err := json.Unmarshal(m, &w); err != nil {
			t.Fatalf("message %d: %v: %s", i, err, m)
		}
		switch {
		case w.Method == "notifications/progress":
			if answered >= 0 {
				t.Fatalf("progress %v after the result", w.Params.Progress)
			}
			if w.Params.ProgressToken != "p-1" {
				t.Fatalf("progress under token %v, want the caller's p-1", w.Params.ProgressToken)
			}
			progress = append(progress, w.Params.Progress)
		case string(w.ID) == "2":
			answered = i
			if len(w.Result.Content) != 1 || w.Result.Content[0].Text != fmt.Sprintf("sent %d", n) {
				t.Fatalf("result %s", m)
			}
		}
	}
	if answered < 0 {
		t.Fatal("no result")
	}
	if len(progress) != n {
		t.Fatalf("%d of %d progress notifications arrived before the result", len(progress), n)
	}
	for i, v := range progress {
		if v != float64(i+1) {
			t.Fatalf("notification %d has progress %v: out of order", i, v)
		}
	}
}
