package intercept

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// TestUpstreamCancellationReachesTheClient: an upstream asks the client
// for sampling mid-call, then cancels that request; the client, served
// over streamable HTTP or stdio, is sent notifications/cancelled with the
// id its request came with.
func TestUpstreamCancellationReachesTheClient(t *testing.T) {
	p := startProxy(t, rawUpstream("raw"))
	for _, front := range fronts {
		t.Run(front, func(t *testing.T) {
			tr := frontTransport(t, p, front)
			asked := make(chan mcp.RequestId, 1)
			cancelled := make(chan json.RawMessage, 1)
			tr.SetNotificationHandler(func(n mcp.JSONRPCNotification) {
				if n.Method == "notifications/cancelled" {
					b, _ := json.Marshal(n.Params.AdditionalFields["requestId"])
					cancelled <- b
				}
			})
			bi, ok := tr.(transport.BidirectionalInterface)
			if !ok {
				t.Fatalf("%T cannot serve requests", tr)
			}
			bi.SetRequestHandler(func(ctx context.Context, req transport.JSONRPCRequest) (*transport.JSONRPCResponse, error) {
				if req.Method == string(mcp.MethodSamplingCreateMessage) {
					asked <- req.ID
				}
				// A person who has not answered yet.
				select {
				case <-ctx.Done():
				case <-time.After(15 * time.Second):
				}
				return nil, errors.New("no answer")
			})
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if err := tr.Start(ctx); err != nil {
				t.Fatal(err)
			}
			defer tr.Close()
			rawInitialize(ctx, t, tr, map[string]any{"sampling": map[string]any{}})
			askDone := make(chan *transport.JSONRPCResponse, 1)
			go func() {
				resp, err := tr.SendRequest(ctx, transport.JSONRPCRequest{JSONRPC: "2.0", ID: mcp.NewRequestId(int64(2)), Method: "tools/call", Params: map[string]any{"name": "ask_then_cancel"}})
				if err != nil {
					t.Errorf("ask_then_cancel: %v", err)
				}
				askDone <- resp
			}()
			var id mcp.RequestId
			select {
			case id = <-asked:
			case <-ctx.Done():
				t.Fatal("the upstream's sampling request never reached the client")
			}
			// The proxy forwards this to the upstream, which then cancels
			// its request.
			if err := tr.SendNotification(ctx, mcp.JSONRPCNotification{JSONRPC: "2.0", Notification: mcp.Notification{Method: "notifications/roots/list_changed"}}); err != nil {
				t.Fatal(err)
			}
			select {
			case got := <-cancelled:
				want, _ := json.Marshal(id)
				if string(got) != string(want) {
					t.Errorf("notifications/cancelled for %s, the request was %s", got, want)
				}
			case <-ctx.Done():
				t.Fatal("the client was not told the request was cancelled")
			}
			if _, err := tr.SendRequest(ctx, transport.JSONRPCRequest{JSONRPC: "2.0", ID: mcp.NewRequestId(int64(3)), Method: "tools/call", Params: map[string]any{"name": "release"}}); err != nil {
				t.Fatal(err)
			}
			if resp := <-askDone; resp == nil || resp.Error != nil || !json.Valid(resp.Result) {
				t.Errorf("ask_then_cancel answer: %+v", resp)
			}
		})
	}
}

// TestRequestOutsideACallGoesToTheOnlyClient: an upstream asking for roots
// with no call in flight (as servers tracking roots do when they change)
// is answered by the only client; with two clients it is refused.
func TestRequestOutsideACallGoesToTheOnlyClient(t *testing.T) {
	p := startProxy(t, rawUpstream("raw"))
	f := &fakeClient{}
	c := connectFront(t, p, "http", f, f.options()...)
	if err := c.SetLevel(context.Background(), mcp.SetLevelRequest{Params: mcp.SetLevelParams{Level: mcp.LoggingLevelDebug}}); err != nil {
		t.Fatal(err)
	}
	// roots/list_changed reaches the upstream, which asks roots/list and
	// logs the answer. (Polling a tool instead would put a call in flight,
	// which the request would be taken for.)
	answered := func(n int) string {
		t.Helper()
		if err := c.RootListChanges(context.Background()); err != nil {
			t.Fatal(err)
		}
		notes := f.waitNotes(t, "notifications/message", n)
		return fmt.Sprint(notes[n-1].Params.AdditionalFields["data"])
	}
	if got := answered(1); !strings.Contains(got, `"roots"`) {
		t.Fatalf("one client: %s", got)
	}
	connectFront(t, p, "http", &fakeClient{}, f.options()...)
	if got := answered(2); !strings.Contains(got, "2 clients are connected") {
		t.Errorf("two clients: %s", got)
	}
}

// initSession is a client session that finishes initializing on demand.
type initSession struct {
	id   string
	done atomic.Bool
}

func (s *initSession) Initialize()                                         {}
func (s *initSession) Initialized() bool                                   { return s.done.Load() }
func (s *initSession) NotificationChannel() chan<- mcp.JSONRPCNotification { return nil }
func (s *initSession) SessionID() string                                   { return s.id }

// TestOnlyWaitsForTheSessionToInitialize: a request outside any call made
// while the only client is still initializing waits for it.
func TestOnlyWaitsForTheSessionToInitialize(t *testing.T) {
	ss := newSessions()
	if cs, n := ss.onlyWait(context.Background(), time.Second); cs != nil || n != 0 {
		t.Fatalf("no session: %v %d", cs, n)
	}
	s := &initSession{id: "a"}
	ss.add(s)
	if cs, n := ss.onlyWait(context.Background(), 0); cs != nil || n != 1 {
		t.Errorf("initializing, no wait: %v %d", cs, n)
	}
	go func() {
		time.Sleep(50 * time.Millisecond)
		s.done.Store(true)
	}()
	if cs, _ := ss.onlyWait(context.Background(), 20*time.Second); cs != s {
		t.Errorf("after initializing: %v", cs)
	}
	ss.add(&initSession{id: "b"})
	if cs, n := ss.onlyWait(context.Background(), 20*time.Second); cs != nil || n != 2 {
		t.Errorf("two sessions: %v %d", cs, n)
	}
}

// TestProgressArrivesBeforeTheResult: an upstream that sends progress and
// at once its result (in that order) is seen in that order by the client
// over stdio and legacy SSE: clients drop progress for a request they have
// the answer to, and mcp-go alone may write the answer first or drop the
// progress. Over streamable HTTP none may be lost; mcp-go may put them on
// the client's listening stream, which the client reads apart from the
// call's, so they must arrive, not necessarily first.
func TestProgressArrivesBeforeTheResult(t *testing.T) {
	p := startProxy(t, rawUpstream("raw"))
	for _, front := range []string{"stdio", "http", "sse"} {
		t.Run(front, func(t *testing.T) {
			var mu sync.Mutex
			count := map[string]int{} // progress notifications by token
			onProgress := func(params map[string]any) {
				mu.Lock()
				count[fmt.Sprint(params["progressToken"])]++
				mu.Unlock()
			}
			var callProgress func(tok string) error
			if front == "sse" {
				c := sseFrontClient(t, p, `{}`, frontHandlers{notify: func(method string, params json.RawMessage) {
					var pm map[string]any
					if method == "notifications/progress" && json.Unmarshal(params, &pm) == nil {
						onProgress(pm)
					}
				}})
				callProgress = func(tok string) error {
					ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
					defer cancel()
					_, err := c.Call(ctx, "tools/call", map[string]any{"name": "progress", "arguments": map[string]any{}, "_meta": map[string]any{"progressToken": tok}})
					return err
				}
			} else {
				c := connectFront(t, p, front, nil)
				c.OnNotification(func(n mcp.JSONRPCNotification) {
					if n.Method == "notifications/progress" {
						onProgress(n.Params.AdditionalFields)
					}
				})
				callProgress = func(tok string) error {
					req := mcp.CallToolRequest{}
					req.Params.Name = "progress"
					req.Params.Meta = &mcp.Meta{ProgressToken: tok}
					_, err := c.CallTool(context.Background(), req)
					return err
				}
			}
			for i := range 20 {
				tok := fmt.Sprintf("%s-%d", front, i)
				if err := callProgress(tok); err != nil {
					t.Fatal(err)
				}
				n := func() int {
					mu.Lock()
					defer mu.Unlock()
					return count[tok]
				}
				if front == "http" {
					for deadline := time.Now().Add(10 * time.Second); n() < 3 && time.Now().Before(deadline); {
						time.Sleep(time.Millisecond)
					}
				}
				if got := n(); got != 3 {
					t.Fatalf("call %d: %d progress notifications, want 3", i, got)
				}
			}
		})
	}
}
