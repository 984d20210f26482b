package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/scratchpad-mcp/scratchpad-mcp/config"
	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testwait"
)

// mcpServer is a streamable HTTP MCP server written for these tests with
// net/http alone, so that what the client must cope with can be staged:
// answers as JSON or as event streams with ids, progress, streams that
// break before their answer (and are resumed with Last-Event-ID), requests
// to the client on the listening stream, sessions that a restart forgets.
//
// Tools: echo (JSON answer), progress (count progress notifications and
// the result on an event stream), break (two progress, then the
// connection is cut; the rest is replayed to a GET with Last-Event-ID),
// ask (sampling/createMessage to the client on the listening stream; the
// answer is the tool's text).
type mcpServer struct {
	t       testing.TB
	addr    string
	noGet   bool          // answer GET with 405
	retryMS int           // sent as retry: on every stream
	started chan struct{} // ask_then_cancel: the client's handler runs

	mu       sync.Mutex
	srv      *http.Server
	gen      int // incremented by every (re)start: sessions of older ones are unknown
	sessions map[string]*mcpSession
	log      []seen // every request, in order
	nextID   int
}

// seen is one request the server received.
type seen struct {
	method  string // HTTP method
	rpc     string // JSON-RPC method of a POST; "" for a response
	status  int
	headers http.Header
}

type mcpSession struct {
	id     string
	listen chan []byte // events for the listening stream
	// streams keeps every event of every stream, by stream id, for
	// Last-Event-ID replay.
	streams map[string][][]byte
	pending map[string]chan json.RawMessage // requests sent to the client
}

func newMCPServer(t testing.TB) *mcpServer {
	s := &mcpServer{t: t, sessions: map[string]*mcpSession{}, retryMS: 20, started: make(chan struct{}, 1)}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s.addr = ln.Addr().String()
	s.serve(ln)
	t.Cleanup(s.stop)
	return s
}

func (s *mcpServer) url() string { return "http://" + s.addr + "/mcp" }

func (s *mcpServer) serve(ln net.Listener) {
	srv := &http.Server{Handler: http.HandlerFunc(s.handle)}
	s.mu.Lock()
	s.srv = srv
	s.gen++
	s.sessions = map[string]*mcpSession{}
	s.mu.Unlock()
	go func() { _ = srv.Serve(ln) }()
}

// stop kills the server: every connection is cut, sessions are lost.
func (s *mcpServer) stop() {
	s.mu.Lock()
	srv := s.srv
	s.srv = nil
	s.mu.Unlock()
	if srv != nil {
		_ = srv.Close()
	}
}

// restart starts a new server on the same address, knowing no session.
func (s *mcpServer) restart() {
	var ln net.Listener
	var err error
	for range 100 {
		if ln, err = net.Listen("tcp", s.addr); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		s.t.Fatal(err)
	}
	s.serve(ln)
}

func (s *mcpServer) record(r *http.Request, rpc string, status int) {
	s.mu.Lock()
	s.log = append(s.log, seen{r.Method, rpc, status, r.Header.Clone()})
	s.mu.Unlock()
}

func (s *mcpServer) requests() []seen {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]seen(nil), s.log...)
}

// sawGET reports whether a GET (a listening stream) matching match was
// received.
func (s *mcpServer) sawGET(match func(seen) bool) bool {
	for _, r := range s.requests() {
		if r.method == http.MethodGet && match(r) {
			return true
		}
	}
	return false
}

func anyRequest(seen) bool { return true }

func (s *mcpServer) session(r *http.Request) *mcpSession {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sessions[r.Header.Get(headerSession)]
}

func (s *mcpServer) handle(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodPost:
		s.post(w, r)
	case http.MethodGet:
		s.get(w, r)
	case http.MethodDelete:
		s.mu.Lock()
		delete(s.sessions, r.Header.Get(headerSession))
		s.mu.Unlock()
		s.record(r, "", http.StatusNoContent)
		w.WriteHeader(http.StatusNoContent)
	default:
		w.WriteHeader(http.StatusMethodNotAllowed)
	}
}

func (s *mcpServer) post(w http.ResponseWriter, r *http.Request) {
	var m rpcMessage
	if b, err := io.ReadAll(r.Body); err != nil || json.Unmarshal(b, &m) != nil {
		s.record(r, "?", http.StatusBadRequest)
		http.Error(w, "bad JSON", http.StatusBadRequest)
		return
	}
	if m.Method == "initialize" {
		s.mu.Lock()
		s.nextID++
		sess := &mcpSession{id: fmt.Sprintf("g%d-s%d", s.gen, s.nextID), listen: make(chan []byte, 64),
			streams: map[string][][]byte{}, pending: map[string]chan json.RawMessage{}}
		s.sessions[sess.id] = sess
		s.mu.Unlock()
		s.record(r, m.Method, http.StatusOK)
		w.Header().Set(headerSession, sess.id)
		writeJSON(w, rpcMessage{JSONRPC: "2.0", ID: m.ID, Result: mustRaw(map[string]any{
			"protocolVersion": "2025-06-18",
			"capabilities":    map[string]any{"tools": map[string]any{}},
			"serverInfo":      map[string]any{"name": "hand-http", "version": "1"},
		})})
		return
	}
	sess := s.session(r)
	if sess == nil {
		s.record(r, m.Method, http.StatusNotFound)
		http.Error(w, "session not found", http.StatusNotFound)
		return
	}
	s.record(r, m.Method, http.StatusOK)
	if len(m.ID) == 0 || m.Method == "" {
		if m.Method == "" { // a response to one of our requests
			s.mu.Lock()
			ch := sess.pending[string(m.ID)]
			s.mu.Unlock()
			if ch != nil {
				ch <- m.Result
			}
		}
		w.WriteHeader(http.StatusAccepted)
		return
	}
	switch m.Method {
	case "ping":
		writeJSON(w, rpcMessage{JSONRPC: "2.0", ID: m.ID, Result: json.RawMessage(`{}`)})
	case "tools/list":
		writeJSON(w, rpcMessage{JSONRPC: "2.0", ID: m.ID, Result: json.RawMessage(`{"tools":[{"name":"echo","inputSchema":{"type":"object"}},{"name":"progress","inputSchema":{"type":"object"}}]}`)})
	case "tools/call":
		s.call(w, r, sess, m)
	default:
		writeJSON(w, rpcMessage{JSONRPC: "2.0", ID: m.ID, Error: &RPCError{Code: -32601, Message: "Method not found: " + m.Method}})
	}
}

func (s *mcpServer) call(w http.ResponseWriter, r *http.Request, sess *mcpSession, m rpcMessage) {
	var p struct {
		Name      string         `json:"name"`
		Arguments map[string]any `json:"arguments"`
		Meta      struct {
			ProgressToken any `json:"progressToken"`
		} `json:"_meta"`
	}
	_ = json.Unmarshal(m.Params, &p)
	progress := func(i int) []byte {
		return mustRaw(rpcMessage{JSONRPC: "2.0", Method: "notifications/progress",
			Params: mustRaw(map[string]any{"progressToken": p.Meta.ProgressToken, "progress": i})})
	}
	result := func(text string) []byte {
		return mustRaw(rpcMessage{JSONRPC: "2.0", ID: m.ID, Result: toolText(text, false)})
	}
	switch p.Name {
	case "echo":
		writeJSON(w, rpcMessage{JSONRPC: "2.0", ID: m.ID, Result: toolText(fmt.Sprint(p.Arguments["text"]), false)})
	case "reset":
		panic(http.ErrAbortHandler) // the connection is cut before any answer
	case "ask_then_cancel":
		// A request to the client on the listening stream, cancelled
		// as soon as the client shows it is working on it (a progress
		// notification is not needed: the handler signals the test).
		sess.listen <- sseData("", mustRaw(rpcMessage{JSONRPC: "2.0", ID: json.RawMessage(`"c-1"`), Method: "elicitation/create", Params: json.RawMessage(`{}`)}))
		<-s.started
		sess.listen <- sseData("", mustRaw(rpcMessage{JSONRPC: "2.0", Method: "notifications/cancelled", Params: json.RawMessage(`{"requestId":"c-1","reason":"changed my mind"}`)}))
		writeJSON(w, rpcMessage{JSONRPC: "2.0", ID: m.ID, Result: toolText("ok", false)})
	case "note_and_drop":
		// A notification with an id on the listening stream, then the
		// stream ends (nil).
		sess.listen <- sseData("L-7", mustRaw(rpcMessage{JSONRPC: "2.0", Method: "notifications/message", Params: json.RawMessage(`{"level":"info","data":"hi"}`)}))
		sess.listen <- nil
		writeJSON(w, rpcMessage{JSONRPC: "2.0", ID: m.ID, Result: toolText("ok", false)})
	case "progress":
		n, _ := strconv.Atoi(fmt.Sprint(p.Arguments["count"]))
		var evs [][]byte
		for i := 1; i <= n; i++ {
			evs = append(evs, progress(i))
		}
		s.stream(w, sess, append(evs, result(fmt.Sprintf("sent %d", n))), -1)
	case "break":
		s.stream(w, sess, [][]byte{progress(1), progress(2), progress(3), progress(4), result("resumed")}, 2)
	case "ask":
		id := fmt.Sprintf(`"ask-%d"`, time.Now().UnixNano())
		ch := make(chan json.RawMessage, 1)
		s.mu.Lock()
		sess.pending[id] = ch
		s.mu.Unlock()
		sess.listen <- sseData("", mustRaw(rpcMessage{JSONRPC: "2.0", ID: json.RawMessage(id), Method: "sampling/createMessage", Params: json.RawMessage(`{"messages":[],"maxTokens":1}`)}))
		select {
		case ans := <-ch:
			writeJSON(w, rpcMessage{JSONRPC: "2.0", ID: m.ID, Result: toolText("client said "+string(ans), false)})
		case <-r.Context().Done():
		case <-time.After(20 * time.Second):
			http.Error(w, "no answer", http.StatusGatewayTimeout)
		}
	default:
		writeJSON(w, rpcMessage{JSONRPC: "2.0", ID: m.ID, Error: &RPCError{Code: -32602, Message: "unknown tool " + p.Name}})
	}
}

// stream answers with an event stream of msgs, each with an id of the
// form <stream>-<n>, after a priming event. With cut >= 0 the connection
// is cut after msgs[cut-1] was sent; the rest is kept for replay.
func (s *mcpServer) stream(w http.ResponseWriter, sess *mcpSession, msgs [][]byte, cut int) {
	s.mu.Lock()
	s.nextID++
	sid := "st" + strconv.Itoa(s.nextID)
	var evs [][]byte
	for i, m := range msgs {
		evs = append(evs, sseData(fmt.Sprintf("%s-%d", sid, i+1), m))
	}
	sess.streams[sid] = evs
	s.mu.Unlock()
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	fmt.Fprintf(w, "id: %s-0\nretry: %d\ndata:\n\n", sid, s.retryMS)
	for i, ev := range evs {
		if i == cut {
			w.(http.Flusher).Flush()
			panic(http.ErrAbortHandler) // the connection is cut, no clean end
		}
		_, _ = w.Write(ev)
	}
}

func (s *mcpServer) get(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	noGet := s.noGet
	s.mu.Unlock()
	if noGet {
		s.record(r, "", http.StatusMethodNotAllowed)
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	sess := s.session(r)
	if sess == nil {
		s.record(r, "", http.StatusNotFound)
		http.Error(w, "session not found", http.StatusNotFound)
		return
	}
	s.record(r, "", http.StatusOK)
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	fl := w.(http.Flusher)
	if last := r.Header.Get(headerLastEventID); last != "" {
		// Replay the rest of the stream last belongs to, then end.
		sid, n, _ := strings.Cut(last, "-")
		from, _ := strconv.Atoi(n)
		s.mu.Lock()
		evs := sess.streams[sid]
		s.mu.Unlock()
		if evs != nil {
			for _, ev := range evs[min(from, len(evs)):] {
				_, _ = w.Write(ev)
			}
			return
		}
	}
	fmt.Fprintf(w, "retry: %d\n\n", s.retryMS)
	fl.Flush()
	for {
		select {
		case ev := <-sess.listen:
			if ev == nil {
				return
			}
			_, _ = w.Write(ev)
			fl.Flush()
		case <-r.Context().Done():
			return
		}
	}
}

func sseData(id string, data []byte) []byte {
	var b strings.Builder
	if id != "" {
		b.WriteString("id: " + id + "\n")
	}
	b.WriteString("data: ")
	b.Write(data)
	b.WriteString("\n\n")
	return []byte(b.String())
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// httpUpstream is an Upstream of s, started, with o's handlers.
func httpUpstream(t testing.TB, url string, o Options) *Upstream {
	t.Helper()
	if o.Server.Name == "" {
		o.Server = config.Server{Name: "hand", Transport: config.TransportHTTPStreamable, URL: url,
			Timeout: 5 * time.Second, RestartMaxAttempts: 100, RestartBackoffMax: 100 * time.Millisecond}
	}
	o.Logger = quietLogger()
	if os.Getenv("UPSTREAM_TEST_LOG") != "" {
		o.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	u := New(o)
	u.Start(context.Background(), nil)
	t.Cleanup(u.Close)
	return u
}

func callTool(t testing.TB, u *Upstream, name string, args map[string]any, meta map[string]any) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	params := map[string]any{"name": name, "arguments": args}
	if meta != nil {
		params["_meta"] = meta
	}
	res, err := u.Call(ctx, "tools/call", params)
	if err != nil {
		return "", err
	}
	text, _ := toolResultText(t, res)
	return text, nil
}

func TestHTTPRoundTripAndHeaders(t *testing.T) {
	s := newMCPServer(t)
	u := httpUpstream(t, "", Options{Server: config.Server{Name: "hand", Transport: config.TransportHTTPStreamable, URL: s.url(),
		Headers: map[string]string{"Authorization": "Bearer s3cret"}, Timeout: 5 * time.Second}})
	if got, err := callTool(t, u, "echo", map[string]any{"text": "héllo"}, nil); err != nil || got != "héllo" {
		t.Fatalf("echo: %q %v", got, err)
	}
	if tools := u.Tools(); len(tools) != 2 || tools[0].Name != "echo" || string(tools[1].Raw) != `{"name":"progress","inputSchema":{"type":"object"}}` {
		t.Errorf("tools %+v", tools)
	}
	_, err := callTool(t, u, "nope", nil, nil)
	var rerr *RPCError
	if !errors.As(err, &rerr) || rerr.Code != -32602 {
		t.Errorf("unknown tool: %v", err)
	}
	u.Close()
	reqs := s.requests()
	if len(reqs) < 5 {
		t.Fatalf("%d requests", len(reqs))
	}
	for i, r := range reqs {
		if r.headers.Get("Authorization") != "Bearer s3cret" {
			t.Errorf("request %d (%s %s) without the configured header", i, r.method, r.rpc)
		}
		if i == 0 {
			if r.rpc != "initialize" || r.headers.Get(headerSession) != "" || r.headers.Get(headerProtocolVersion) != "" {
				t.Errorf("initialize: %+v", r)
			}
			if a := r.headers.Get("Accept"); !strings.Contains(a, "application/json") || !strings.Contains(a, "text/event-stream") {
				t.Errorf("initialize Accept %q", a)
			}
			continue
		}
		if r.headers.Get(headerSession) != "g1-s1" || r.headers.Get(headerProtocolVersion) != "2025-06-18" {
			t.Errorf("request %d (%s %s): session %q, version %q", i, r.method, r.rpc, r.headers.Get(headerSession), r.headers.Get(headerProtocolVersion))
		}
	}
	if last := reqs[len(reqs)-1]; last.method != http.MethodDelete {
		t.Errorf("Close did not DELETE the session: last request %s %s", last.method, last.rpc)
	}
}

// TestHTTPProgressBeforeTheResult: every progress notification the
// server sends on the call's event stream has reached OnNotify, in
// order, when Call returns.
func TestHTTPProgressBeforeTheResult(t *testing.T) {
	const n = 1000
	s := newMCPServer(t)
	var mu sync.Mutex
	var got []int
	u := httpUpstream(t, s.url(), Options{OnNotify: func(_ *Upstream, method string, params json.RawMessage) {
		var p struct {
			Progress int `json:"progress"`
		}
		if method == "notifications/progress" && json.Unmarshal(params, &p) == nil {
			mu.Lock()
			got = append(got, p.Progress)
			mu.Unlock()
		}
	}})
	text, err := callTool(t, u, "progress", map[string]any{"count": n}, map[string]any{"progressToken": "p"})
	mu.Lock()
	seen := append([]int(nil), got...)
	mu.Unlock()
	if err != nil || text != fmt.Sprintf("sent %d", n) {
		t.Fatalf("call: %q %v", text, err)
	}
	if len(seen) != n {
		t.Fatalf("%d progress notifications before the result, want %d", len(seen), n)
	}
	for i, p := range seen {
		if p != i+1 {
			t.Fatalf("notification %d has progress %d: out of order", i, p)
		}
	}
}

// TestHTTPResumesABrokenStream: a call's event stream cut before its
// answer is resumed with GET and Last-Event-ID; nothing is lost or
// repeated.
func TestHTTPResumesABrokenStream(t *testing.T) {
	s := newMCPServer(t)
	var mu sync.Mutex
	var got []int
	u := httpUpstream(t, s.url(), Options{OnNotify: func(_ *Upstream, method string, params json.RawMessage) {
		var p struct {
			Progress int `json:"progress"`
		}
		if json.Unmarshal(params, &p) == nil && method == "notifications/progress" {
			mu.Lock()
			got = append(got, p.Progress)
			mu.Unlock()
		}
	}})
	text, err := callTool(t, u, "break", nil, map[string]any{"progressToken": "b"})
	if err != nil || text != "resumed" {
		t.Fatalf("call: %q %v", text, err)
	}
	mu.Lock()
	if fmt.Sprint(got) != "[1 2 3 4]" {
		t.Errorf("progress %v, want [1 2 3 4]", got)
	}
	mu.Unlock()
	var resumed bool
	for _, r := range s.requests() {
		if r.method == http.MethodGet && r.headers.Get(headerLastEventID) != "" {
			resumed = true
			if id := r.headers.Get(headerLastEventID); !strings.HasSuffix(id, "-2") {
				t.Errorf("resumed after %q, want the second event", id)
			}
		}
	}
	if !resumed {
		t.Error("no GET with Last-Event-ID")
	}
	if st, err := u.State(); st != StateReady {
		t.Errorf("state after the resumed call: %s %v", st, err)
	}
}

// TestHTTPServerRequestOnTheListeningStream: a request the server sends
// on the GET stream reaches OnRequest, and its answer is POSTed back.
func TestHTTPServerRequestOnTheListeningStream(t *testing.T) {
	s := newMCPServer(t)
	asked := make(chan string, 1)
	u := httpUpstream(t, s.url(), Options{OnRequest: func(ctx context.Context, _ *Upstream, method string, params json.RawMessage) (json.RawMessage, error) {
		asked <- method
		return json.RawMessage(`{"model":"m1"}`), nil
	}})
	// The listening stream opens after the handshake; wait for it.
	testwait.For(t, "the listening stream", func() bool {
		for _, r := range s.requests() {
			if r.method == http.MethodGet && r.status == http.StatusOK {
				return true
			}
		}
		return false
	})
	text, err := callTool(t, u, "ask", nil, nil)
	if err != nil || text != `client said {"model":"m1"}` {
		t.Fatalf("call: %q %v", text, err)
	}
	if m := recv(t, asked, "the request"); m != "sampling/createMessage" {
		t.Errorf("asked %s", m)
	}
}

// TestHTTPServerRestartIsInvisible: the server is killed and a new one
// started on the same address, which knows no session. The next call
// succeeds without the caller doing anything: with a listening stream
// (the client notices the stream end and reconnects) and without one
// (the call's POST gets 404, the client re-initializes and re-sends it).
func TestHTTPServerRestartIsInvisible(t *testing.T) {
	for _, tc := range []struct {
		name  string
		noGet bool
		down  time.Duration
	}{
		// The listening stream ends; reopening it is refused while the
		// server is down: the connection is lost and restarted.
		{name: "down a while", down: 300 * time.Millisecond},
		// Reopening the listening stream meets the new server: 404.
		{name: "quick restart", down: 50 * time.Millisecond},
		// Nothing notices until the call's POST gets 404: it is re-sent.
		{name: "no listening stream", noGet: true, down: 50 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newMCPServer(t)
			s.mu.Lock()
			s.noGet = tc.noGet
			s.mu.Unlock()
			u := httpUpstream(t, s.url(), Options{})
			if got, err := callTool(t, u, "echo", map[string]any{"text": "before"}, nil); err != nil || got != "before" {
				t.Fatalf("before: %q %v", got, err)
			}
			testwait.For(t, "the listening stream to be asked for", func() bool { return s.sawGET(anyRequest) })
			time.Sleep(20 * time.Millisecond) // and its answer to be read
			s.stop()
			// A real restart takes longer than the client needs to see
			// its idle connections closed (a POST on one not yet seen
			// closed fails that call), hence at least 50 ms down.
			time.Sleep(tc.down)
			s.restart()
			if got, err := callTool(t, u, "echo", map[string]any{"text": "after"}, nil); err != nil || got != "after" {
				t.Fatalf("after the restart: %q %v", got, err)
			}
			inits := 0
			var statuses []int
			for _, r := range s.requests() {
				switch r.rpc {
				case "initialize":
					inits++
				case "tools/call":
					statuses = append(statuses, r.status)
				}
			}
			if inits != 2 {
				t.Errorf("%d initializes, want 2", inits)
			}
			// Before, then after: once, or first in the lost session (404)
			// and again in the new one. With a listening stream, which
			// one happens depends on whether the client noticed first.
			want := map[string]bool{"[200 200]": !tc.noGet, "[200 404 200]": true}
			if !want[fmt.Sprint(statuses)] {
				t.Errorf("tools/call statuses %v", statuses)
				for _, r := range s.requests() {
					t.Logf("%s %s %d %s", r.method, r.rpc, r.status, r.headers.Get(headerSession))
				}
			}
		})
	}
}

// TestHTTPUpstreamDownFailsClearly: a call to an upstream that cannot be
// reached fails within min(timeout, 10 s), naming the upstream and why.
func TestHTTPUpstreamDownFailsClearly(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	u := httpUpstream(t, "", Options{Server: config.Server{Name: "docs", Transport: config.TransportHTTPStreamable, URL: "http://" + addr + "/mcp",
		Timeout: 1500 * time.Millisecond, RestartMaxAttempts: 100, RestartBackoffMax: 200 * time.Millisecond}})
	start := time.Now()
	_, err = u.Call(context.Background(), "tools/call", map[string]any{"name": "echo"})
	took := time.Since(start)
	if !errors.Is(err, ErrUpstreamUnavailable) {
		t.Fatalf("got %v, want ErrUpstreamUnavailable", err)
	}
	for _, want := range []string{`upstream "docs" is unavailable: restarting after: `, "connection refused"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	if took > 3*time.Second {
		t.Errorf("took %s, want about the 1.5 s timeout", took)
	}
}

// TestHTTPUpstreamGoneMidSession: a server that goes away for good after
// the session started fails the next call at once with an error naming
// it, and later calls within the bound.
func TestHTTPUpstreamGoneMidSession(t *testing.T) {
	s := newMCPServer(t)
	s.mu.Lock()
	s.noGet = true // nothing notices the server leaving but the call
	s.mu.Unlock()
	u := httpUpstream(t, "", Options{Server: config.Server{Name: "hand", Transport: config.TransportHTTPStreamable, URL: s.url(),
		Timeout: time.Second, RestartMaxAttempts: 100, RestartBackoffMax: 100 * time.Millisecond}})
	if _, err := callTool(t, u, "echo", map[string]any{"text": "x"}, nil); err != nil {
		t.Fatal(err)
	}
	s.stop()
	time.Sleep(50 * time.Millisecond) // the client's idle connections are seen closed
	for i := range 2 {
		start := time.Now()
		_, err := callTool(t, u, "echo", map[string]any{"text": "x"}, nil)
		if err == nil || !strings.Contains(err.Error(), `upstream "hand"`) || !strings.Contains(err.Error(), "connection refused") {
			t.Errorf("call %d: %v", i, err)
		}
		if d := time.Since(start); d > 3*time.Second {
			t.Errorf("call %d took %s", i, d)
		}
	}
}

// TestHTTPOneBrokenRequestIsOneFailedCall: a POST whose connection is
// cut fails that call, naming the upstream; the session goes on.
func TestHTTPOneBrokenRequestIsOneFailedCall(t *testing.T) {
	s := newMCPServer(t)
	u := httpUpstream(t, s.url(), Options{})
	_, err := callTool(t, u, "reset", nil, nil)
	if err == nil || !strings.Contains(err.Error(), `upstream "hand": POST`) {
		t.Fatalf("got %v", err)
	}
	if st, err := u.State(); st != StateReady {
		t.Errorf("state %s %v", st, err)
	}
	if got, err := callTool(t, u, "echo", map[string]any{"text": "still"}, nil); err != nil || got != "still" {
		t.Fatalf("next call: %q %v", got, err)
	}
	inits := 0
	for _, r := range s.requests() {
		if r.rpc == "initialize" {
			inits++
		}
	}
	if inits != 1 {
		t.Errorf("%d initializes, want 1", inits)
	}
}

// TestHTTPListeningStreamIsReopened: a listening stream that ends is
// reopened with the last event id it carried, after the retry time.
func TestHTTPListeningStreamIsReopened(t *testing.T) {
	s := newMCPServer(t)
	notes := make(chan string, 4)
	u := httpUpstream(t, s.url(), Options{OnNotify: func(_ *Upstream, method string, params json.RawMessage) { notes <- method }})
	testwait.For(t, "the listening stream", func() bool { return s.sawGET(anyRequest) })
	if got, err := callTool(t, u, "note_and_drop", nil, nil); err != nil || got != "ok" {
		t.Fatalf("call: %q %v", got, err)
	}
	if m := recv(t, notes, "the notification"); m != "notifications/message" {
		t.Errorf("got %s", m)
	}
	testwait.For(t, "the stream reopened after L-7", func() bool {
		return s.sawGET(func(r seen) bool { return r.headers.Get(headerLastEventID) == "L-7" })
	})
}

// TestHTTPServerCancelsItsRequest: the server's notifications/cancelled
// ends the context its request is served with, and no answer is POSTed.
func TestHTTPServerCancelsItsRequest(t *testing.T) {
	s := newMCPServer(t)
	ended := make(chan error, 1)
	u := httpUpstream(t, s.url(), Options{OnRequest: func(ctx context.Context, _ *Upstream, method string, params json.RawMessage) (json.RawMessage, error) {
		s.started <- struct{}{}
		<-ctx.Done()
		ended <- ctx.Err()
		return json.RawMessage(`{"action":"accept"}`), nil
	}})
	testwait.For(t, "the listening stream", func() bool { return s.sawGET(anyRequest) })
	if got, err := callTool(t, u, "ask_then_cancel", nil, nil); err != nil || got != "ok" {
		t.Fatalf("call: %q %v", got, err)
	}
	if err := recv(t, ended, "the handler's context to end"); !errors.Is(err, context.Canceled) {
		t.Errorf("handler context: %v", err)
	}
	if _, err := callTool(t, u, "echo", map[string]any{"text": "x"}, nil); err != nil {
		t.Fatal(err) // the answer, had there been one, was POSTed before this
	}
	for _, r := range s.requests() {
		if r.method == http.MethodPost && r.rpc == "" {
			t.Errorf("a cancelled request was answered")
		}
	}
}

// TestHTTPBigJSONBody: a JSON answer (not SSE) of megabytes, validated as
// it is read, comes back whole.
func TestHTTPBigJSONBody(t *testing.T) {
	s := newMCPServer(t)
	u := httpUpstream(t, "", Options{Server: config.Server{Name: "hand", Transport: config.TransportHTTPStreamable, URL: s.url(), Timeout: 5 * time.Second}})
	big := strings.Repeat(`{"k":"v\"w"} `, 200_000) // 2.6 MB, an escape every few bytes
	if got, err := callTool(t, u, "echo", map[string]any{"text": big}, nil); err != nil || got != big {
		t.Fatalf("echo of %d bytes: %d bytes back, %v", len(big), len(got), err)
	}
}
