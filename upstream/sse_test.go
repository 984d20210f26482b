package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/iotest"
	"time"
)

// sseServer is a legacy-SSE MCP server written for these tests: unlike
// mcp-go's SSE server, it sends requests to its client over the stream
// (sampling/createMessage while a tool runs) and takes the answers POSTed
// back. Every message goes out as indented JSON over several data lines,
// after a comment, so the client's parser meets both on a live stream.
type sseServer struct {
	ts      *httptest.Server
	closed  chan struct{} // the test is over: every handler returns
	hanging chan struct{} // the hang tool was called

	mu         sync.Mutex
	endpoint   string // endpoint event data; "" for /message?sessionId=<id>, "-" for no event
	postStatus int    // when set, every POST is answered with it and postBody
	postBody   string
	sess       *sseSession // the newest stream's
	sessions   map[string]*sseSession
	gets       []http.Header
	posts      []http.Header
}

// sseSession is one stream and what its client POSTed.
type sseSession struct {
	id       string
	out      chan []byte   // events to write, in order
	drop     chan struct{} // closed: the server ends the stream
	dropOnce sync.Once
	gone     chan struct{} // closed when the stream's handler returned
	closed   chan struct{} // the server's

	mu      sync.Mutex
	nextID  int
	waiting map[string]chan rpcMessage // requests sent to the client, by raw id
	got     []rpcMessage               // every message the client POSTed
}

func newSSEServer(t testing.TB) *sseServer {
	s := &sseServer{closed: make(chan struct{}), hanging: make(chan struct{}, 16), sessions: map[string]*sseSession{}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /sse", s.stream)
	mux.HandleFunc("POST /message", s.message)
	mux.HandleFunc("GET /json", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, "{}")
	})
	s.ts = httptest.NewServer(mux)
	t.Cleanup(func() {
		close(s.closed)
		s.ts.Close()
	})
	return s
}

func (s *sseServer) url() string { return s.ts.URL + "/sse" }

func (s *sseServer) set(f func(s *sseServer)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f(s)
}

func (s *sseServer) session() *sseSession {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sess
}

func (s *sseServer) stream(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.gets = append(s.gets, r.Header.Clone())
	sess := &sseSession{
		id: strconv.Itoa(len(s.sessions) + 1), out: make(chan []byte, 64), drop: make(chan struct{}),
		gone: make(chan struct{}), closed: s.closed, waiting: map[string]chan rpcMessage{},
	}
	s.sessions[sess.id] = sess
	s.sess = sess
	endpoint := s.endpoint
	s.mu.Unlock()
	defer close(sess.gone)
	if endpoint == "" {
		endpoint = "/message?sessionId=" + sess.id
	}
	w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	if endpoint != "-" {
		fmt.Fprintf(w, "event: endpoint\r\ndata: %s\r\n\r\n", endpoint)
	}
	fl := w.(http.Flusher)
	fl.Flush()
	for {
		select {
		case ev := <-sess.out:
			_, _ = w.Write(ev)
			fl.Flush()
		case <-sess.drop:
			return
		case <-r.Context().Done():
			return
		case <-s.closed:
			return
		}
	}
}

func (s *sseServer) message(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.posts = append(s.posts, r.Header.Clone())
	status, body := s.postStatus, s.postBody
	sess := s.sessions[r.URL.Query().Get("sessionId")]
	s.mu.Unlock()
	if status != 0 {
		http.Error(w, body, status)
		return
	}
	if sess == nil {
		http.Error(w, "unknown session", http.StatusNotFound)
		return
	}
	var m rpcMessage
	if b, err := io.ReadAll(r.Body); err != nil || json.Unmarshal(b, &m) != nil {
		http.Error(w, "bad JSON", http.StatusBadRequest)
		return
	}
	// Recorded before the POST is answered: once the client's send
	// returned, the message is here.
	sess.mu.Lock()
	sess.got = append(sess.got, m)
	var answer chan rpcMessage
	if m.Method == "" {
		answer = sess.waiting[string(m.ID)]
		delete(sess.waiting, string(m.ID))
	}
	sess.mu.Unlock()
	if answer != nil {
		answer <- m
	}
	w.WriteHeader(http.StatusAccepted)
	if m.Method != "" && len(m.ID) > 0 {
		go s.handle(sess, m)
	}
}

// handle answers one request from the client over the stream.
func (s *sseServer) handle(sess *sseSession, m rpcMessage) {
	reply := rpcMessage{JSONRPC: "2.0", ID: m.ID}
	switch m.Method {
	case "initialize":
		var p struct {
			ProtocolVersion string `json:"protocolVersion"`
		}
		_ = json.Unmarshal(m.Params, &p)
		reply.Result = mustRaw(map[string]any{
			"protocolVersion": p.ProtocolVersion,
			"capabilities":    map[string]any{"tools": map[string]any{}},
			"serverInfo":      map[string]any{"name": "hand-sse", "version": "1"},
		})
	case "ping":
		reply.Result = json.RawMessage(`{}`)
	case "tools/list":
		reply.Result = json.RawMessage(`{"tools":[{"name":"echo","inputSchema":{"type":"object"}},{"name":"ask_sampling","inputSchema":{"type":"object"}},{"name":"hang","inputSchema":{"type":"object"}}]}`)
	case "tools/call":
		var p struct {
			Name      string         `json:"name"`
			Arguments map[string]any `json:"arguments"`
		}
		_ = json.Unmarshal(m.Params, &p)
		switch p.Name {
		case "echo":
			reply.Result = toolText(fmt.Sprint(p.Arguments["text"]), false)
		case "ask_sampling":
			ans, err := sess.request("sampling/createMessage", json.RawMessage(`{"messages":[{"role":"user","content":{"type":"text","text":"2+2?"}}],"maxTokens":10}`))
			switch {
			case err != nil:
				reply.Result = toolText(err.Error(), true)
			case ans.Error != nil:
				reply.Result = toolText(fmt.Sprintf("sampling failed: %d %s", ans.Error.Code, ans.Error.Message), true)
			default:
				reply.Result = toolText("sampled: "+string(ans.Result), false)
			}
		case "hang":
			s.hanging <- struct{}{}
			select {
			case <-sess.gone:
			case <-sess.closed:
			}
			return
		default:
			reply.Error = &RPCError{Code: -32602, Message: "unknown tool " + p.Name}
		}
	default:
		reply.Error = &RPCError{Code: -32601, Message: "Method not found: " + m.Method}
	}
	sess.send(reply)
}

// send writes one message to the stream.
func (sess *sseSession) send(v any) {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		panic(err)
	}
	var ev bytes.Buffer
	ev.WriteString(": keep-alive\n")
	ev.WriteString("event: message\n")
	for _, line := range bytes.Split(b, []byte("\n")) {
		ev.WriteString("data: ")
		ev.Write(line)
		ev.WriteString("\n")
	}
	ev.WriteString("\n")
	select {
	case sess.out <- ev.Bytes():
	case <-sess.gone:
	case <-sess.closed:
	}
}

// request sends a request to the client and waits for its answer.
func (sess *sseSession) request(method string, params json.RawMessage) (rpcMessage, error) {
	sess.mu.Lock()
	sess.nextID++
	id := json.RawMessage(fmt.Sprintf(`"srv-%d"`, sess.nextID))
	ch := make(chan rpcMessage, 1)
	sess.waiting[string(id)] = ch
	sess.mu.Unlock()
	sess.send(rpcMessage{JSONRPC: "2.0", ID: id, Method: method, Params: params})
	select {
	case m := <-ch:
		return m, nil
	case <-sess.gone:
		return rpcMessage{}, errors.New("stream gone")
	case <-sess.closed:
		return rpcMessage{}, errors.New("server closed")
	}
}

// dropStream ends the stream from the server's side.
func (sess *sseSession) dropStream() { sess.dropOnce.Do(func() { close(sess.drop) }) }

// received returns what the client POSTed with id.
func (sess *sseSession) received(id string) []rpcMessage {
	sess.mu.Lock()
	defer sess.mu.Unlock()
	var out []rpcMessage
	for _, m := range sess.got {
		if string(m.ID) == id {
			out = append(out, m)
		}
	}
	return out
}

func mustRaw(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

func toolText(text string, isError bool) json.RawMessage {
	return mustRaw(map[string]any{"content": []any{map[string]any{"type": "text", "text": text}}, "isError": isError})
}

// recv waits for a value; the timeout is a safety net, not a measure.
func recv[T any](t testing.TB, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(20 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
		panic("unreachable")
	}
}

func dialTestSSE(t testing.TB, url string, h handlers, headers map[string]string) *sseConn {
	t.Helper()
	c, err := dialSSE(context.Background(), 10*time.Second, "hand", url, headers, nil, h, quietLogger())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func callSSE(t testing.TB, c conn, method string, params any) (json.RawMessage, error) {
	t.Helper()
	// A safety net, not a measure: a 4 MB echo under -race on a loaded
	// machine has taken over 20 s.
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	return c.Call(ctx, method, params)
}

// toolResultText is the text of a tools/call result and its isError.
func toolResultText(t testing.TB, res json.RawMessage) (string, bool) {
	t.Helper()
	var r struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
		IsError bool `json:"isError"`
	}
	if err := json.Unmarshal(res, &r); err != nil || len(r.Content) != 1 {
		t.Fatalf("not a one-text tool result: %s", truncate(string(res), 300))
	}
	return r.Content[0].Text, r.IsError
}

func TestSSEReaderParsesEvents(t *testing.T) {
	type ev struct{ name, data string }
	big := strings.Repeat("x", 50<<20)
	for _, tc := range []struct {
		name    string
		in      string
		want    []ev
		oneShot bool // too large to feed a byte at a time
	}{
		{name: "one event", in: "data: a\n\n", want: []ev{{"message", "a"}}},
		{name: "multi-line data", in: "data: {\ndata:   \"a\": 1\ndata: }\n\n", want: []ev{{"message", "{\n  \"a\": 1\n}"}}},
		{name: "CRLF", in: "event: endpoint\r\ndata: /m?s=1\r\n\r\ndata: x\r\ndata: y\r\n\r\n", want: []ev{{"endpoint", "/m?s=1"}, {"message", "x\ny"}}},
		{name: "CR", in: "data: x\rdata: y\r\rdata: z\r\r", want: []ev{{"message", "x\ny"}, {"message", "z"}}},
		{name: "mixed endings", in: "event: endpoint\ndata: /m\r\n\r\ndata: a\r\r\ndata: b\n\n", want: []ev{{"endpoint", "/m"}, {"message", "a"}, {"message", "b"}}},
		{name: "comments", in: ": hello\n\n:ping\ndata: x\n: between\ndata: y\n\n", want: []ev{{"message", "x\ny"}}},
		{name: "event names reset after each event", in: "event: endpoint\ndata: /m\n\nevent: message\ndata: 1\n\ndata: 2\n\nevent: ping\ndata: 3\n\n", want: []ev{{"endpoint", "/m"}, {"message", "1"}, {"message", "2"}, {"ping", "3"}}},
		{name: "one space after the colon is dropped", in: "data:a\n\ndata:  b\n\n", want: []ev{{"message", "a"}, {"message", " b"}}},
		{name: "field without colon", in: "data\n\n", want: []ev{{"message", ""}}},
		{name: "empty data lines", in: "data:\ndata:\n\n", want: []ev{{"message", "\n"}}},
		{name: "id, retry and unknown fields ignored", in: "id: 7\nretry: 100\nfoo: bar\ndata: x\n\n", want: []ev{{"message", "x"}}},
		{name: "event without data is not dispatched", in: "event: endpoint\n\ndata: x\n\n", want: []ev{{"message", "x"}}},
		{name: "byte order mark", in: "\uFEFFdata: x\n\n", want: []ev{{"message", "x"}}},
		{name: "unfinished event at the end", in: "data: x\n\ndata: y\n", want: []ev{{"message", "x"}}},
		{name: "unfinished line at the end", in: "data: x\n\ndata: y", want: []ev{{"message", "x"}}},
		{name: "blank lines only", in: "\n\n\r\n\r", want: nil},
		{name: "50 MB event", in: "event: message\r\ndata: " + big + "\r\n\r\ndata: after\r\n\r\n", want: []ev{{"message", big}, {"message", "after"}}, oneShot: true},
	} {
		readers := map[string]func(io.Reader) io.Reader{
			"whole": func(r io.Reader) io.Reader { return r },
			"bytes": iotest.OneByteReader,
			"half":  iotest.HalfReader,
		}
		for rname, wrap := range readers {
			if tc.oneShot && rname != "whole" {
				continue
			}
			t.Run(tc.name+"/"+rname, func(t *testing.T) {
				r := newSSEReader(wrap(strings.NewReader(tc.in)))
				var got []ev
				for {
					e, err := r.next()
					if err != nil {
						if err != io.EOF {
							t.Fatalf("error %v", err)
						}
						break
					}
					got = append(got, ev{e.name, string(e.data)})
				}
				if len(got) != len(tc.want) {
					t.Fatalf("got %d events, want %d", len(got), len(tc.want))
				}
				for i := range got {
					if got[i] != tc.want[i] {
						t.Errorf("event %d: got %q %q, want %q %q", i, got[i].name, truncate(got[i].data, 80), tc.want[i].name, truncate(tc.want[i].data, 80))
					}
				}
			})
		}
	}
}

func TestResolveEndpoint(t *testing.T) {
	for _, tc := range []struct {
		stream, data, want string
		foreign            bool // refused as another origin
	}{
		{stream: "http://127.0.0.1:8080/mcp/sse?k=1", data: "/message?sessionId=1", want: "http://127.0.0.1:8080/message?sessionId=1"},
		{stream: "http://127.0.0.1:8080/mcp/sse", data: "message?sessionId=1", want: "http://127.0.0.1:8080/mcp/message?sessionId=1"},
		{stream: "http://127.0.0.1:8080/mcp/sse", data: " http://127.0.0.1:8080/m?s=2 \n", want: "http://127.0.0.1:8080/m?s=2"},
		{stream: "http://localhost:8080/sse", data: "HTTP://LOCALHOST:8080/m#frag", want: "http://LOCALHOST:8080/m"},
		{stream: "https://api.example.com/sse", data: "https://api.example.com:443/messages", want: "https://api.example.com:443/messages"},
		{stream: "http://[::1]:9000/sse", data: "/m", want: "http://[::1]:9000/m"},
		{stream: "http://127.0.0.1:8080/sse", data: "http://127.0.0.1:80/m", foreign: true},
		{stream: "http://127.0.0.1:8080/sse", data: "https://127.0.0.1:8080/m", foreign: true},
		{stream: "http://127.0.0.1:8080/sse", data: "//evil.example/m", foreign: true},
		{stream: "http://127.0.0.1:8080/sse", data: "http://evil.example:8080/m", foreign: true},
		{stream: "https://api.example.com/sse", data: "https://api.example.com.evil.example/m", foreign: true},
		{stream: "http://127.0.0.1:8080/sse", data: "javascript:alert(1)", foreign: true},
		{stream: "http://127.0.0.1:8080/sse", data: ""},
		{stream: "http://127.0.0.1:8080/sse", data: "http://[::1/m"},
	} {
		t.Run(tc.data, func(t *testing.T) {
			stream, err := url.Parse(tc.stream)
			if err != nil {
				t.Fatal(err)
			}
			got, err := resolveEndpoint(stream, tc.data)
			switch {
			case tc.want != "":
				if err != nil || got.String() != tc.want {
					t.Errorf("got %v %v, want %s", got, err, tc.want)
				}
			case tc.foreign:
				if !errors.Is(err, errForeignEndpoint) || !strings.Contains(err.Error(), "another origin") {
					t.Errorf("got %v %v, want a refusal", got, err)
				}
			default:
				if err == nil || errors.Is(err, errForeignEndpoint) {
					t.Errorf("got %v %v, want an invalid endpoint error", got, err)
				}
			}
		})
	}
}

func TestSSEDialFailures(t *testing.T) {
	for _, tc := range []struct {
		name     string
		endpoint string
		path     string
		want     string
		is       error
	}{
		{name: "no endpoint event", endpoint: "-", path: "/sse", want: "no endpoint event within 300ms"},
		{name: "endpoint on another origin", endpoint: "http://evil.invalid/message", path: "/sse", want: "evil.invalid:80", is: errForeignEndpoint},
		{name: "not found", path: "/nope", want: "404 Not Found"},
		{name: "not an event stream", path: "/json", want: "not an SSE stream"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSSEServer(t)
			s.set(func(s *sseServer) { s.endpoint = tc.endpoint })
			c, err := dialSSE(context.Background(), 300*time.Millisecond, "hand", s.ts.URL+tc.path, nil, nil, handlers{}, quietLogger())
			if err == nil {
				c.Close()
				t.Fatal("connected")
			}
			if !strings.Contains(err.Error(), tc.want) || (tc.is != nil && !errors.Is(err, tc.is)) {
				t.Errorf("got %v, want %q", err, tc.want)
			}
			if sess := s.session(); sess != nil {
				recv(t, sess.gone, "the refused stream to be closed")
			}
		})
	}
}

func initSSE(t testing.TB, c conn) json.RawMessage {
	t.Helper()
	res, err := callSSE(t, c, "initialize", map[string]any{"protocolVersion": "2024-11-05", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "t", "version": "1"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Notify(context.Background(), "notifications/initialized", nil); err != nil {
		t.Fatal(err)
	}
	return res
}

func TestSSERoundTrip(t *testing.T) {
	s := newSSEServer(t)
	c := dialTestSSE(t, s.url(), handlers{}, nil)
	var init struct {
		ProtocolVersion string          `json:"protocolVersion"`
		Capabilities    json.RawMessage `json:"capabilities"`
	}
	if err := json.Unmarshal(initSSE(t, c), &init); err != nil || init.ProtocolVersion != "2024-11-05" {
		t.Fatalf("initialize: %+v %v", init, err)
	}
	tools, _, err := listAll(context.Background(), c, "tools/list", "tools", "name")
	if err != nil || len(tools) != 3 || tools[0].Name != "echo" {
		t.Fatalf("tools/list: %v %v", tools, err)
	}
	for _, text := range []string{"héllo", strings.Repeat("big ", 1<<20)} {
		res, err := callSSE(t, c, "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"text": text}})
		if err != nil {
			t.Fatal(err)
		}
		if got, isErr := toolResultText(t, res); got != text || isErr {
			t.Errorf("echo: got %q (isError %v)", truncate(got, 50), isErr)
		}
	}
	_, err = callSSE(t, c, "tools/call", map[string]any{"name": "nope"})
	var rerr *RPCError
	if !errors.As(err, &rerr) || rerr.Code != -32602 || rerr.Message != "unknown tool nope" {
		t.Errorf("unknown tool: %v", err)
	}
}

func TestSSEServerRequestsReachTheHandler(t *testing.T) {
	for _, tc := range []struct {
		name     string
		res      json.RawMessage
		err      error
		want     string
		wantFail bool
	}{
		{name: "answer", res: json.RawMessage(`{"role":"assistant","content":{"type":"text","text":"4"},"model":"m1"}`), want: `"model":"m1"`},
		{name: "JSON-RPC error", err: &RPCError{Code: -32601, Message: "client cannot sample"}, want: "sampling failed: -32601 client cannot sample", wantFail: true},
		{name: "other error", err: errors.New("boom"), want: "sampling failed: -32603 boom", wantFail: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSSEServer(t)
			type asked struct {
				method string
				params json.RawMessage
			}
			got := make(chan asked, 1)
			c := dialTestSSE(t, s.url(), handlers{request: func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
				got <- asked{method, params}
				return tc.res, tc.err
			}}, nil)
			initSSE(t, c)
			res, err := callSSE(t, c, "tools/call", map[string]any{"name": "ask_sampling"})
			if err != nil {
				t.Fatal(err)
			}
			a := recv(t, got, "the request")
			var p struct {
				MaxTokens int `json:"maxTokens"`
			}
			if a.method != "sampling/createMessage" || json.Unmarshal(a.params, &p) != nil || p.MaxTokens != 10 {
				t.Errorf("handler got %s %s", a.method, a.params)
			}
			if text, isErr := toolResultText(t, res); isErr != tc.wantFail || !strings.Contains(text, tc.want) {
				t.Errorf("tool result %q (isError %v), want %q", text, isErr, tc.want)
			}
		})
	}
}

func TestSSEServerCancelsItsRequest(t *testing.T) {
	s := newSSEServer(t)
	started := make(chan struct{})
	stopped := make(chan error, 1)
	c := dialTestSSE(t, s.url(), handlers{request: func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
		close(started)
		<-ctx.Done()
		stopped <- ctx.Err()
		return json.RawMessage(`{}`), nil
	}}, nil)
	initSSE(t, c)
	sess := s.session()
	sess.send(rpcMessage{JSONRPC: "2.0", ID: json.RawMessage(`"srv-c"`), Method: "sampling/createMessage", Params: json.RawMessage(`{}`)})
	recv(t, started, "the request to reach the handler")
	sess.send(rpcMessage{JSONRPC: "2.0", Method: "notifications/cancelled", Params: json.RawMessage(`{"requestId":"srv-c","reason":"user gave up"}`)})
	if err := recv(t, stopped, "the handler's context to end"); !errors.Is(err, context.Canceled) {
		t.Errorf("handler context ended with %v", err)
	}
	c.serving.Wait() // any answer would have been POSTed by now
	if got := sess.received(`"srv-c"`); len(got) != 0 {
		t.Errorf("a cancelled request was answered: %+v", got)
	}
	if _, err := callSSE(t, c, "ping", nil); err != nil {
		t.Errorf("connection after the cancel: %v", err)
	}
}

func TestSSENotificationsReachTheHandler(t *testing.T) {
	s := newSSEServer(t)
	type note struct {
		method string
		params string
	}
	got := make(chan note, 10)
	c := dialTestSSE(t, s.url(), handlers{notify: func(method string, params json.RawMessage) {
		var b bytes.Buffer
		if len(params) > 0 {
			_ = json.Compact(&b, params)
		}
		got <- note{method, b.String()}
	}}, nil)
	initSSE(t, c)
	want := []note{
		{"notifications/message", `{"data":"hello","level":"info"}`},
		{"notifications/tools/list_changed", ""},
		{"notifications/progress", `{"progress":1,"progressToken":"p"}`},
	}
	for _, n := range want {
		m := rpcMessage{JSONRPC: "2.0", Method: n.method}
		if n.params != "" {
			m.Params = json.RawMessage(n.params)
		}
		s.session().send(m)
	}
	for i, w := range want {
		if n := recv(t, got, "a notification"); n != w {
			t.Errorf("notification %d: got %+v, want %+v", i, n, w)
		}
	}
}

func TestSSEStreamDroppedFailsTheConnection(t *testing.T) {
	s := newSSEServer(t)
	c := dialTestSSE(t, s.url(), handlers{}, nil)
	initSSE(t, c)
	inFlight := make(chan error, 1)
	go func() {
		_, err := callSSE(t, c, "tools/call", map[string]any{"name": "hang"})
		inFlight <- err
	}()
	recv(t, s.hanging, "the call to reach the server")
	s.session().dropStream()
	recv(t, c.Done(), "the connection to end")
	if err := c.Err(); !errors.Is(err, ErrUpstreamExited) || !errors.Is(err, errStreamEnded) {
		t.Errorf("Err() = %v, want ErrUpstreamExited: the SSE stream ended", err)
	}
	if err := recv(t, inFlight, "the call in flight to fail"); !errors.Is(err, ErrUpstreamExited) {
		t.Errorf("call in flight: %v", err)
	}
	if _, err := callSSE(t, c, "ping", nil); !errors.Is(err, ErrUpstreamExited) {
		t.Errorf("call after the end: %v", err)
	}
}

func TestSSECloseEndsEverything(t *testing.T) {
	s := newSSEServer(t)
	started := make(chan struct{})
	stopped := make(chan error, 1)
	c := dialTestSSE(t, s.url(), handlers{request: func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
		close(started)
		<-ctx.Done()
		stopped <- ctx.Err()
		return nil, ctx.Err()
	}}, nil)
	initSSE(t, c)
	sess := s.session()
	sess.send(rpcMessage{JSONRPC: "2.0", ID: json.RawMessage(`1`), Method: "roots/list"})
	recv(t, started, "the request to reach the handler")
	inFlight := make(chan error, 1)
	go func() {
		_, err := callSSE(t, c, "tools/call", map[string]any{"name": "hang"})
		inFlight <- err
	}()
	recv(t, s.hanging, "the call to reach the server")
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	// Close returned: the handler's context had ended.
	if err := <-stopped; !errors.Is(err, context.Canceled) {
		t.Errorf("handler context: %v", err)
	}
	if err := recv(t, inFlight, "the call in flight to fail"); !errors.Is(err, ErrUpstreamExited) {
		t.Errorf("call in flight: %v", err)
	}
	recv(t, sess.gone, "the server to see the stream closed")
	if err := c.Err(); !errors.Is(err, ErrUpstreamExited) {
		t.Errorf("Err() = %v", err)
	}
	if err := c.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

func TestSSEPostRejected(t *testing.T) {
	s := newSSEServer(t)
	c := dialTestSSE(t, s.url(), handlers{}, nil)
	initSSE(t, c)
	s.set(func(s *sseServer) {
		s.postStatus, s.postBody = http.StatusInternalServerError, "database on fire "+strings.Repeat("x", 500)
	})
	_, err := callSSE(t, c, "ping", nil)
	if err == nil || !strings.Contains(err.Error(), "500 Internal Server Error: database on fire xxx") || strings.Contains(err.Error(), strings.Repeat("x", 200)) {
		t.Errorf("want the status and the start of the body, got %v", err)
	}
	if err := c.Notify(context.Background(), "notifications/message", nil); err == nil || !strings.Contains(err.Error(), "500") {
		t.Errorf("notify: %v", err)
	}
	s.set(func(s *sseServer) { s.postStatus = 0 })
	if _, err := callSSE(t, c, "ping", nil); err != nil {
		t.Errorf("after the server recovered: %v", err)
	}
}

func TestSSEHeadersOnEveryRequest(t *testing.T) {
	s := newSSEServer(t)
	headers := map[string]string{"Authorization": "Bearer s3cret", "X-Tenant": "t1"}
	c := dialTestSSE(t, s.url(), handlers{}, headers)
	initSSE(t, c)
	if _, err := callSSE(t, c, "ping", nil); err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.gets) != 1 || len(s.posts) != 3 {
		t.Fatalf("%d GETs, %d POSTs; want 1 and 3", len(s.gets), len(s.posts))
	}
	check := func(what string, h http.Header, want map[string]string) {
		for k, v := range want {
			if got := h.Get(k); got != v {
				t.Errorf("%s: %s = %q, want %q", what, k, got, v)
			}
		}
	}
	check("GET", s.gets[0], headers)
	check("GET", s.gets[0], map[string]string{"Accept": "text/event-stream"})
	for i, h := range s.posts {
		check(fmt.Sprintf("POST %d", i), h, headers)
		check(fmt.Sprintf("POST %d", i), h, map[string]string{"Content-Type": "application/json"})
	}
}

// FuzzSSEReader: any bytes read without panic, and events written with any
// line ending and split data lines read back as written.
func FuzzSSEReader(f *testing.F) {
	f.Add([]byte("event: endpoint\ndata: /m?s=1\n\n"), "message", "{\"a\":1}\n{\"b\":2}", uint8(0))
	f.Add([]byte(": comment\r\ndata:x\r\r\n"), "e", "", uint8(1))
	f.Add([]byte("\xef\xbb\xbfdata\n\n"), "", "line", uint8(2))
	f.Fuzz(func(t *testing.T, raw []byte, name, data string, ending uint8) {
		r := newSSEReader(bytes.NewReader(raw))
		for i := 0; i < len(raw)+1; i++ {
			if _, err := r.next(); err != nil {
				break
			}
		}
		if strings.ContainsAny(name, "\r\n") || strings.ContainsRune(data, '\r') || strings.HasPrefix(name, " ") {
			return
		}
		eol := []string{"\n", "\r\n", "\r"}[int(ending)%3]
		var b strings.Builder
		if name != "" {
			b.WriteString("event: " + name + eol)
		}
		for _, l := range strings.Split(data, "\n") {
			b.WriteString("data: " + l + eol)
		}
		b.WriteString(eol)
		ev, err := newSSEReader(strings.NewReader(b.String())).next()
		if err != nil {
			t.Fatalf("%q: %v", b.String(), err)
		}
		want := name
		if want == "" {
			want = "message"
		}
		if ev.name != want || string(ev.data) != data {
			t.Fatalf("%q read as %q %q", b.String(), ev.name, ev.data)
		}
	})
}

// TestSSEReaderKeepsWhatResumingNeeds: the last event id carries over
// events without one, is set by an event with an id and no data (MCP's
// priming event), is not set by an event the stream ends in; retry takes
// digits only.
func TestSSEReaderKeepsWhatResumingNeeds(t *testing.T) {
	r := newSSEReader(strings.NewReader("id: p-0\nretry: 250\ndata:\n\n" +
		"id: 1\ndata: a\n\n" +
		"data: b\n\n" +
		"id: 2\nretry: 1x\n\n" +
		"id: \x00bad\ndata: c\n\n" +
		"id: 3\ndata: unfinished\n"))
	var got []string
	for {
		ev, err := r.next()
		if err != nil {
			break
		}
		got = append(got, string(ev.data)+"@"+r.lastID)
	}
	if want := "[@p-0 a@1 b@1 c@2]"; fmt.Sprint(got) != want {
		t.Errorf("events %v, want %s", got, want)
	}
	if r.lastID != "2" || r.retry != 250*time.Millisecond {
		t.Errorf("last id %q, retry %s; want 2 and 250ms", r.lastID, r.retry)
	}
	next := r.resume(strings.NewReader("data: d\n\n"))
	if ev, err := next.next(); err != nil || string(ev.data) != "d" || next.lastID != "2" || next.retryOr(time.Second) != 250*time.Millisecond {
		t.Errorf("resumed reader: %q %v %q", ev.data, err, next.lastID)
	}
}
