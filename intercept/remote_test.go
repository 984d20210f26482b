package intercept

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// fakeTransport stands for mcp-go's streamable HTTP client transport: the
// test plays the upstream by calling the handlers it was given.
type fakeTransport struct {
	notify  func(mcp.JSONRPCNotification)
	request transport.RequestHandler
}

func (f *fakeTransport) Start(context.Context) error { return nil }
func (f *fakeTransport) SendRequest(context.Context, transport.JSONRPCRequest) (*transport.JSONRPCResponse, error) {
	return nil, errors.New("not used")
}
func (f *fakeTransport) SendNotification(context.Context, mcp.JSONRPCNotification) error { return nil }
func (f *fakeTransport) SetNotificationHandler(h func(mcp.JSONRPCNotification))          { f.notify = h }
func (f *fakeTransport) SetRequestHandler(h transport.RequestHandler)                    { f.request = h }
func (f *fakeTransport) Close() error                                                    { return nil }
func (f *fakeTransport) GetSessionId() string                                            { return "" }

func cancelledNote(id any) mcp.JSONRPCNotification {
	n := mcp.JSONRPCNotification{JSONRPC: "2.0", Notification: mcp.Notification{Method: "notifications/cancelled"}}
	n.Params.AdditionalFields = map[string]any{"requestId": id, "reason": "changed my mind"}
	return n
}

// TestRemoteUpstreamCancelsItsRequest: over streamable HTTP, an upstream's
// notifications/cancelled ends the context its request is served with
// (mcp-go's transport would not), and only that request's.
func TestRemoteUpstreamCancelsItsRequest(t *testing.T) {
	started := make(chan string, 2)
	ended := make(chan string, 2)
	notes := make(chan string, 4)
	f := &fakeTransport{}
	c := newRemoteConn("remote", f, handlers{
		request: func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
			started <- string(params)
			<-ctx.Done()
			ended <- string(params)
			return nil, ctx.Err()
		},
		notify: func(method string, params json.RawMessage) { notes <- method },
	})
	defer c.Close()
	answers := make(chan *transport.JSONRPCResponse, 2)
	for _, id := range []mcp.RequestId{mcp.NewRequestId("s-1"), mcp.NewRequestId(int64(1))} {
		go func() {
			resp, _ := f.request(context.Background(), transport.JSONRPCRequest{JSONRPC: "2.0", ID: id, Method: "sampling/createMessage", Params: map[string]any{"id": id}})
			answers <- resp
		}()
		<-started
	}
	// A cancel for an id that is not being served, then for the string id
	// "1" (not the number 1), pass on as notifications.
	f.notify(cancelledNote("nope"))
	f.notify(cancelledNote("1"))
	f.notify(cancelledNote("s-1"))
	select {
	case got := <-ended:
		if got != `{"id":"s-1"}` {
			t.Errorf("cancelled %s, want s-1", got)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the upstream's cancel did not end its request")
	}
	<-answers
	for range 2 {
		if m := <-notes; m != "notifications/cancelled" {
			t.Errorf("note %s", m)
		}
	}
	select {
	case got := <-ended:
		t.Errorf("%s ended too", got)
	default:
	}
	// The connection ending ends the rest.
	c.Close()
	select {
	case got := <-ended:
		if got != `{"id":1}` {
			t.Errorf("ended %s", got)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("closing did not end the request in flight")
	}
}
