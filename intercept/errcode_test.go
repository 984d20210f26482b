package intercept

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/scratchpad-mcp/scratchpad-mcp/config"
	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testupstream"
)

// wireError is what mcp-go's server writes for a handler that returned
// err: the JSON-RPC error response for request 7.
func wireError(t *testing.T, err error) string {
	t.Helper()
	b, merr := json.Marshal(mcp.NewJSONRPCError(mcp.NewRequestId(7), mcp.INTERNAL_ERROR, err.Error(), nil))
	if merr != nil {
		t.Fatal(merr)
	}
	return string(b)
}

func TestRestoreRewritesOnlyMarkedErrors(t *testing.T) {
	coded := forwardError(context.Background(), &RPCError{Code: -32099, Message: "rate limited <&>", Data: json.RawMessage(`{"retryAfter":3}`)})
	plain := forwardError(context.Background(), &RPCError{Code: -32000, Message: "no data"})
	marked, marked2 := wireError(t, coded), wireError(t, plain)
	want := `{"jsonrpc":"2.0","id":7,"error":{"code":-32099,"message":"rate limited \u003c\u0026\u003e","data":{"retryAfter":3}}}`
	want2 := `{"jsonrpc":"2.0","id":7,"error":{"code":-32000,"message":"no data"}}`
	forged := strings.Replace(marked, markerNonce, strings.Repeat("0", len(markerNonce)), 1)
	result := `{"jsonrpc":"2.0","id":8,"result":{"content":[]}}`
	for _, tc := range []struct{ name, in, want string }{
		{"stdio line", marked + "\n", want + "\n"},
		{"no data", marked2 + "\n", want2 + "\n"},
		{"JSON body", marked + "\n", want + "\n"},
		{"SSE event", "event: message\ndata: " + marked + "\n\n", "event: message\ndata: " + want + "\n\n"},
		{"SSE event, CRLF", "event: message\r\ndata:" + marked + "\r\n\r\n", "event: message\r\ndata:" + want + "\r\n\r\n"},
		{"no newline", marked, want},
		{"two in one write", marked + "\n" + result + "\n" + marked2 + "\n", want + "\n" + result + "\n" + want2 + "\n"},
		{"forged nonce", forged + "\n", forged + "\n"},
		{"unmarked", result + "\n", result + "\n"},
		{"marker in a result", `{"jsonrpc":"2.0","id":9,"result":{"text":"` + string(markerWire) + `1:e30\u001f"}}`, `{"jsonrpc":"2.0","id":9,"result":{"text":"` + string(markerWire) + `1:e30\u001f"}}`},
	} {
		var buf bytes.Buffer
		n, err := New(Options{}).Output(&buf).Write([]byte(tc.in))
		if err != nil || n != len(tc.in) {
			t.Errorf("%s: Write = %d, %v; want %d, nil", tc.name, n, err, len(tc.in))
		}
		if got := buf.String(); got != tc.want {
			t.Errorf("%s:\ngot  %q\nwant %q", tc.name, got, tc.want)
		}
	}
}

func TestRestoreKeepsIDsAndStringIDs(t *testing.T) {
	err := forwardError(context.Background(), &RPCError{Code: -32001, Message: "m"})
	b, _ := json.Marshal(mcp.NewJSONRPCError(mcp.NewRequestId("req-α"), mcp.INTERNAL_ERROR, err.Error(), nil))
	got := string(restore(b))
	if want := `{"jsonrpc":"2.0","id":"req-α","error":{"code":-32001,"message":"m"}}`; got != want {
		t.Errorf("got %s\nwant %s", got, want)
	}
}

// rawUpstream runs the hand-written upstream whose calls fail with
// [testupstream.RawErrors].
func rawUpstream(name string) config.Server {
	up := stdioUpstream(name, nil)
	up.Env = map[string]string{testupstream.EnvMode: testupstream.RawMode}
	return up
}

// sameJSON reports whether a and b are the same JSON value.
func sameJSON(t *testing.T, a, b []byte) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Fatalf("%s: %v", a, err)
	}
	if err := json.Unmarshal(b, &y); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	return reflect.DeepEqual(x, y)
}

// TestUpstreamErrorCodesReachTheClient drives the proxy, served over
// streamable HTTP and stdio, with a raw JSON-RPC client and compares each
// error with the one the upstream sent.
func TestUpstreamErrorCodesReachTheClient(t *testing.T) {
	p := startProxy(t, rawUpstream("raw"))
	waitTool(t, connect(t, p.url), "coded_error")
	requests := []struct{ method, params string }{
		{"tools/call", `{"name":"coded_error","arguments":{}}`},
		{"resources/read", `{"uri":"raw://gone"}`},
		{"prompts/get", `{"name":"strict","arguments":{"colour":"red"}}`},
	}
	for _, front := range fronts {
		t.Run(front, func(t *testing.T) {
			tr := frontTransport(t, p, front)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			if err := tr.Start(ctx); err != nil {
				t.Fatal(err)
			}
			defer tr.Close()
			rawInitialize(ctx, t, tr, map[string]any{})
			for i, rq := range requests {
				resp, err := tr.SendRequest(ctx, transport.JSONRPCRequest{JSONRPC: "2.0", ID: mcp.NewRequestId(int64(10 + i)), Method: rq.method, Params: json.RawMessage(rq.params)})
				if err != nil {
					t.Fatalf("%s: %v", rq.method, err)
				}
				if resp.Error == nil {
					t.Fatalf("%s: want an error, got %s", rq.method, resp.Result)
				}
				got, _ := json.Marshal(resp.Error)
				if want := testupstream.RawErrors[rq.method]; !sameJSON(t, got, []byte(want)) {
					t.Errorf("%s:\nproxy:    %s\nupstream: %s", rq.method, got, want)
				}
			}
		})
	}
}

// rawInitialize does the MCP handshake on a raw transport, declaring caps.
func rawInitialize(ctx context.Context, t *testing.T, tr transport.Interface, caps map[string]any) {
	t.Helper()
	if _, err := tr.SendRequest(ctx, transport.JSONRPCRequest{JSONRPC: "2.0", ID: mcp.NewRequestId(int64(1)), Method: "initialize",
		Params: map[string]any{"protocolVersion": mcp.LATEST_LEGACY_PROTOCOL_VERSION, "capabilities": caps, "clientInfo": map[string]any{"name": "raw", "version": "1"}}}); err != nil {
		t.Fatal(err)
	}
	if err := tr.SendNotification(ctx, mcp.JSONRPCNotification{JSONRPC: "2.0", Notification: mcp.Notification{Method: "notifications/initialized"}}); err != nil {
		t.Fatal(err)
	}
}

// frontTransport is a raw client transport to the proxy over front.
func frontTransport(t *testing.T, p *proxy, front string) transport.Interface {
	t.Helper()
	if front == "http" {
		tr, err := transport.NewStreamableHTTP(p.url, transport.WithContinuousListening(), transport.WithHTTPLogger(quietLogger()))
		if err != nil {
			t.Fatal(err)
		}
		return tr
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		s := server.NewStdioServer(p.srv)
		s.SetErrorLogger(log.New(io.Discard, "", 0))
		_ = s.Listen(ctx, inR, p.router.Output(outW))
	}()
	t.Cleanup(func() { cancel(); inW.Close(); outW.Close(); <-done })
	return transport.NewIO(outR, inW, nil)
}

func TestRawErrorsAreNotInternal(t *testing.T) {
	// Guards the test above: the raw upstream's codes must be ones mcp-go
	// itself would turn into -32603, or the test would prove nothing.
	for m, e := range testupstream.RawErrors {
		var d struct{ Code int }
		_ = json.Unmarshal([]byte(e), &d)
		if d.Code == mcp.INTERNAL_ERROR {
			t.Errorf("%s: code %d cannot tell a restored error from mcp-go's", m, d.Code)
		}
	}
}

// lastPost records the status and body of the last POST answered.
type lastPost struct {
	mu     sync.Mutex
	status int
	body   []byte
}

func (l *lastPost) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil || req.Method != http.MethodPost {
		return resp, err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	l.mu.Lock()
	l.status, l.body = resp.StatusCode, body
	l.mu.Unlock()
	resp.Body = io.NopCloser(bytes.NewReader(body))
	return resp, err
}

// TestModernProtocolStatusFollowsRestoredCode: protocol 2026-07-28 maps
// error codes onto HTTP statuses, so the status must be the restored
// code's, not -32603's.
func TestModernProtocolStatusFollowsRestoredCode(t *testing.T) {
	p := startProxy(t, rawUpstream("raw"))
	waitTool(t, connect(t, p.url), "coded_error")
	rec := &lastPost{}
	tr, err := transport.NewStreamableHTTP(p.url, transport.WithHTTPBasicClient(&http.Client{Transport: rec}))
	if err != nil {
		t.Fatal(err)
	}
	c := client.NewClient(tr, client.WithProtocolVersion(mcp.ProtocolVersion20260728))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.ProtocolVersion20260728
	if _, err := c.Initialize(ctx, init); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		method string
		do     func() error
		status int
	}{
		{"prompts/get", func() error {
			req := mcp.GetPromptRequest{}
			req.Params.Name, req.Params.Arguments = "strict", map[string]string{"colour": "red"}
			_, err := c.GetPrompt(ctx, req)
			return err
		}, http.StatusBadRequest},
		{"tools/call", func() error { _, err := callErr(c, "coded_error", nil); return err }, http.StatusOK},
	} {
		if err := tc.do(); err == nil {
			t.Fatalf("%s: want an error", tc.method)
		}
		rec.mu.Lock()
		status, body := rec.status, rec.body
		rec.mu.Unlock()
		var m struct{ Error json.RawMessage }
		_ = json.Unmarshal(body, &m)
		if status != tc.status || !sameJSON(t, m.Error, []byte(testupstream.RawErrors[tc.method])) {
			t.Errorf("%s: HTTP %d %s; want %d %s", tc.method, status, body, tc.status, testupstream.RawErrors[tc.method])
		}
	}
}

// FuzzRestore: whatever the server writes, restoring never panics, leaves
// output without a marker as it was, and keeps JSON valid.
func FuzzRestore(f *testing.F) {
	marked, _ := json.Marshal(mcp.NewJSONRPCError(mcp.NewRequestId(1), mcp.INTERNAL_ERROR,
		forwardError(context.Background(), &RPCError{Code: -32001, Message: "m", Data: json.RawMessage(`{"a":1}`)}).Error(), nil))
	f.Add(marked)
	f.Add([]byte("event: message\ndata: " + string(marked) + "\n\n"))
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"result":{}}` + "\n"))
	f.Add(append([]byte("data: "), markerWire...))
	f.Fuzz(func(t *testing.T, p []byte) {
		out := restore(p)
		if !bytes.Contains(p, markerWire) && !bytes.Equal(out, p) {
			t.Fatalf("unmarked output changed: %q → %q", p, out)
		}
		if json.Valid(p) && !bytes.ContainsAny(p, "\n") && !json.Valid(out) {
			t.Fatalf("valid JSON became invalid: %q → %q", p, out)
		}
	})
}

func BenchmarkOutputWrite(b *testing.B) {
	line := append(bytes.Repeat([]byte(`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"`), 1), bytes.Repeat([]byte("x"), 1<<20)...)
	line = append(line, []byte(`"}]}}`+"\n")...)
	o := New(Options{}).Output(io.Discard)
	b.SetBytes(int64(len(line)))
	b.Run("1MiB result, after a forwarded error", func(b *testing.B) {
		_ = forwardError(context.Background(), &RPCError{Code: 1, Message: "x"}) // markers issued: outputs are searched
		for b.Loop() {
			_, _ = o.Write(line)
		}
	})
}
