package intercept

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/mark3labs/mcp-go/mcp"
)

// mcp-go's legacy SSE server cannot send a request to its client: its
// sessions have no sampling, elicitation or roots, and the client's
// answers, POSTed like any message, are dropped. [Router.OutputHTTP] sees
// both sides of such a session (the event stream it writes, and the
// POSTs), so the proxy sends those requests itself: sseFront writes them
// to the stream as message events and takes the answers out of the POSTs
// before mcp-go does. It also remembers the client's declared
// capabilities, which mcp-go's SSE sessions do not keep.

// sseFront is the proxy's direct line to clients served over legacy SSE.
type sseFront struct {
	next atomic.Int64

	mu      sync.Mutex
	streams map[string]*outputResponse // session id → its event stream
	pending map[string]chan rpcMessage // our request id → where its answer goes
	caps    map[string]mcp.ClientCapabilities
}

var errNoStream = errors.New("the client's event stream is closed")

func (f *sseFront) attach(session string, w *outputResponse) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.streams == nil {
		f.streams = map[string]*outputResponse{}
	}
	f.streams[session] = w
}

func (f *sseFront) detach(session string, w *outputResponse) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.streams[session] == w {
		delete(f.streams, session)
		delete(f.caps, session)
	}
}

// stream returns the event stream of session, nil when it is not a
// legacy SSE session.
func (f *sseFront) stream(session string) *outputResponse {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.streams[session]
}

func (f *sseFront) setCaps(session string, c mcp.ClientCapabilities) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.caps == nil {
		f.caps = map[string]mcp.ClientCapabilities{}
	}
	f.caps[session] = c
}

func (f *sseFront) capsOf(session string) (mcp.ClientCapabilities, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c, ok := f.caps[session]
	return c, ok
}

// request sends method to the client on st and waits for its answer or
// ctx. A cancelled request is cancelled at the client too.
func (f *sseFront) request(ctx context.Context, st *outputResponse, method string, params json.RawMessage) (json.RawMessage, error) {
	id := json.RawMessage(strconv.Quote("scratchpad-" + strconv.FormatInt(f.next.Add(1), 10)))
	ch := make(chan rpcMessage, 1)
	f.mu.Lock()
	if f.pending == nil {
		f.pending = map[string]chan rpcMessage{}
	}
	f.pending[string(id)] = ch
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		delete(f.pending, string(id))
		f.mu.Unlock()
	}()
	msg, err := json.Marshal(rpcMessage{JSONRPC: "2.0", ID: id, Method: method, Params: params})
	if err != nil {
		return nil, err
	}
	if err := st.event(msg); err != nil {
		return nil, err
	}
	select {
	case m := <-ch:
		return m.outcome(method)
	case <-ctx.Done():
		note, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": "notifications/cancelled",
			"params": map[string]any{"requestId": id, "reason": context.Cause(ctx).Error()}})
		_ = st.event(note)
		return nil, ctx.Err()
	}
}

// answer takes a POSTed message that answers one of our requests; it
// reports whether it did.
func (f *sseFront) answer(body []byte) bool {
	var m rpcMessage
	if json.Unmarshal(body, &m) != nil || m.Method != "" || len(m.ID) == 0 || (m.Result == nil && m.Error == nil) {
		return false
	}
	f.mu.Lock()
	ch := f.pending[string(m.ID)]
	delete(f.pending, string(m.ID))
	f.mu.Unlock()
	if ch == nil {
		return false
	}
	ch <- m
	return true
}

// sessionOfEndpoint reads the session id out of mcp-go's endpoint event
// ("event: endpoint\ndata: /message?sessionId=…").
func sessionOfEndpoint(p []byte) (string, bool) {
	rest, ok := bytes.CutPrefix(p, []byte("event: endpoint\ndata: "))
	if !ok {
		return "", false
	}
	line, _, _ := bytes.Cut(rest, []byte("\n"))
	u, err := url.Parse(string(bytes.TrimSpace(line)))
	if err != nil {
		return "", false
	}
	id := u.Query().Get("sessionId")
	return id, id != ""
}

// interceptAnswer serves a POST that answers one of our requests (202,
// as mcp-go answers a message), and otherwise puts the body back for the
// handler. The body is read whole; mcp-go does the same.
func (f *sseFront) interceptAnswer(w http.ResponseWriter, req *http.Request) bool {
	if req.Method != http.MethodPost || req.URL.Query().Get("sessionId") == "" || req.Body == nil {
		return false
	}
	body, err := io.ReadAll(req.Body)
	req.Body.Close()
	req.Body = io.NopCloser(bytes.NewReader(body))
	if err != nil || !f.answer(body) {
		return false
	}
	w.WriteHeader(http.StatusAccepted)
	return true
}
