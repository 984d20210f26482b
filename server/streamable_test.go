package server

import (
	"bufio"
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

	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testwait"
	"github.com/scratchpad-mcp/scratchpad-mcp/proxy"
	"github.com/scratchpad-mcp/scratchpad-mcp/tool"
)

// streamableEnv serves a server with no upstreams and two own tools,
// "wait", which answers once release is closed, and "big", which answers
// 4 KiB of text, over the streamable HTTP transport.
type streamableEnv struct {
	url     string
	srv     *Server
	h       *httpHandler
	release chan struct{}
}

func startStreamable(t *testing.T, opts StreamableHTTPOptions) *streamableEnv {
	t.Helper()
	e := &streamableEnv{release: make(chan struct{})}
	px := proxy.New(proxy.Options{Logger: quietLog()})
	wait := tool.Def{Name: "wait", InputSchema: json.RawMessage(`{"type":"object"}`),
		Handler: func(ctx context.Context, _ json.RawMessage) tool.Result {
			select {
			case <-e.release:
				return tool.Text("released")
			case <-ctx.Done():
				return tool.Error("cancelled")
			}
		}}
	big := tool.Def{Name: "big", InputSchema: json.RawMessage(`{"type":"object"}`),
		Handler: func(context.Context, json.RawMessage) tool.Result { return tool.Text(strings.Repeat("b", 4096)) }}
	e.srv = New(Options{Proxy: px, Logger: quietLog(),
		Session: func(SessionInfo) (*Own, error) { return &Own{Tools: []tool.Def{wait, big}}, nil }})
	ctx, cancel := context.WithCancel(context.Background())
	px.Start(ctx, nil)
	e.h = e.srv.StreamableHTTP(opts).(*httpHandler)
	ts := httptest.NewServer(e.h)
	e.url = ts.URL
	t.Cleanup(func() {
		ts.CloseClientConnections()
		ts.Close()
		cancel()
		px.Close()
	})
	return e
}

func quietLog() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// sse is one server-sent event as a client reads it (data lines joined
// with newlines, as the spec says).
type sse struct{ name, id, data, retry string }

// readSSE reads the events of r until it ends or until stop says so.
func readSSE(r io.Reader, stop func(sse) bool) ([]sse, error) {
	br := bufio.NewReaderSize(r, 1<<16)
	var out []sse
	var cur sse
	var data []string
	hasData := false
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			return out, err
		}
		line = strings.TrimRight(line, "\r\n")
		switch {
		case line == "":
			if hasData || cur.id != "" {
				cur.data = strings.Join(data, "\n")
				out = append(out, cur)
				if stop != nil && stop(cur) {
					return out, nil
				}
			}
			cur, data, hasData = sse{}, nil, false
		case strings.HasPrefix(line, ":"):
		default:
			field, value, _ := strings.Cut(line, ":")
			value = strings.TrimPrefix(value, " ")
			switch field {
			case "event":
				cur.name = value
			case "id":
				cur.id = value
			case "data":
				data = append(data, value)
				hasData = true
			case "retry":
				cur.retry = value
			}
		}
	}
}

// answers stops reading at the answer to id.
func answers(id int) func(sse) bool {
	return func(e sse) bool {
		var m struct {
			ID     *int            `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		return json.Unmarshal([]byte(e.data), &m) == nil && m.ID != nil && *m.ID == id && (m.Result != nil || m.Error != nil)
	}
}

func (e *streamableEnv) do(t *testing.T, method, session, version, body string, header ...string) *http.Response {
	t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, e.url, r)
	if err != nil {
		t.Fatal(err)
	}
	if method == http.MethodPost {
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
	} else {
		req.Header.Set("Accept", "text/event-stream")
	}
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
	}
	if version != "" {
		req.Header.Set("Mcp-Protocol-Version", version)
	}
	for i := 0; i+1 < len(header); i += 2 {
		if header[i+1] == "" {
			req.Header.Del(header[i])
		} else {
			req.Header.Set(header[i], header[i+1])
		}
	}
	// A bounded client: a stream that never says what a test waits for
	// fails the test instead of hanging it.
	resp, err := (&http.Client{Timeout: 20 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// initialize opens a session of protocol version and returns its id and
// the events of the initialize answer.
func (e *streamableEnv) initialize(t *testing.T, version string) (string, []sse) {
	t.Helper()
	resp := e.do(t, http.MethodPost, "", "", fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":%q,"capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`, version))
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("initialize: %s %s", resp.Status, b)
	}
	sid := resp.Header.Get("Mcp-Session-Id")
	if sid == "" {
		t.Fatal("initialize answered without Mcp-Session-Id")
	}
	events, err := readSSE(resp.Body, answers(1))
	if err != nil {
		t.Fatalf("initialize events: %v (%v)", err, events)
	}
	if r := e.do(t, http.MethodPost, sid, version, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); r.StatusCode != http.StatusAccepted {
		t.Fatalf("initialized: %s, want 202", r.Status)
	}
	return sid, events
}

// TestStreamableRefuses: what is not a streamable HTTP request gets a
// status that says why, and the session it names (if any) goes on.
func TestStreamableRefuses(t *testing.T) {
	e := startStreamable(t, StreamableHTTPOptions{MaxRequestBytes: 4096})
	sid, _ := e.initialize(t, "2025-11-25")
	ping := `{"jsonrpc":"2.0","id":7,"method":"ping"}`
	for _, c := range []struct {
		name, method, session, version, body string
		header                               []string
		status                               int
		says                                 string
	}{
		{name: "PUT", method: http.MethodPut, session: sid, status: http.StatusMethodNotAllowed, says: "Method Not Allowed"},
		{name: "not JSON", method: http.MethodPost, session: sid, body: ping, header: []string{"Content-Type", "text/plain"}, status: http.StatusUnsupportedMediaType},
		{name: "accepts JSON only", method: http.MethodPost, session: sid, body: ping, header: []string{"Accept", "application/json"}, status: http.StatusBadRequest, says: "Accept"},
		{name: "GET without event streams", method: http.MethodGet, session: sid, header: []string{"Accept", "application/json"}, status: http.StatusBadRequest, says: "Accept"},
		{name: "unknown session", method: http.MethodPost, session: "nope", body: ping, status: http.StatusNotFound},
		{name: "GET without session", method: http.MethodGet, status: http.StatusBadRequest, says: "Mcp-Session-Id"},
		{name: "DELETE without session", method: http.MethodDelete, status: http.StatusBadRequest, says: "Mcp-Session-Id"},
		{name: "unknown version", method: http.MethodPost, session: sid, version: "1999-01-01", body: ping, status: http.StatusBadRequest, says: "unsupported protocol version"},
		{name: "malformed", method: http.MethodPost, session: sid, body: `{"jsonrpc":"2.0","id":`, status: http.StatusBadRequest, says: "malformed"},
		{name: "empty", method: http.MethodPost, session: sid, body: " ", status: http.StatusBadRequest, says: "malformed"},
		{name: "batch in 2025-06-18", method: http.MethodPost, session: sid, version: "2025-06-18", body: "[" + ping + "]", status: http.StatusBadRequest, says: "batching"},
		{name: "too big", method: http.MethodPost, session: sid, body: `{"jsonrpc":"2.0","id":8,"method":"ping","params":{"_meta":{"x":"` + strings.Repeat("a", 5000) + `"}}}`, status: http.StatusRequestEntityTooLarge, says: "4096"},
		{name: "POST resuming", method: http.MethodPost, session: sid, body: ping, header: []string{"Last-Event-ID", "x_1"}, status: http.StatusBadRequest},
		{name: "malformed Last-Event-ID", method: http.MethodGet, session: sid, header: []string{"Last-Event-ID", "no-index"}, status: http.StatusBadRequest, says: "Last-Event-ID"},
		{name: "resuming a stream never given", method: http.MethodGet, session: sid, header: []string{"Last-Event-ID", "nosuchstream_0"}, status: http.StatusBadRequest, says: "replay"},
		{name: "2026-07-28 call on the session", method: http.MethodPost, session: sid, version: "2026-07-28", body: `{"jsonrpc":"2.0","id":9,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`, status: http.StatusBadRequest, says: "takes no Mcp-Session-Id"},
		{name: "2026-07-28 header without envelope", method: http.MethodPost, session: sid, version: "2026-07-28", body: `{"jsonrpc":"2.0","id":9,"method":"tools/list"}`, status: http.StatusBadRequest, says: "takes no Mcp-Session-Id"},
	} {
		t.Run(c.name, func(t *testing.T) {
			resp := e.do(t, c.method, c.session, c.version, c.body, c.header...)
			b, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != c.status || !strings.Contains(string(b), c.says) {
				t.Errorf("%s %s, want %d saying %q", resp.Status, b, c.status, c.says)
			}
			if c.status == http.StatusMethodNotAllowed && resp.Header.Get("Allow") == "" {
				t.Error("405 without Allow")
			}
		})
	}
	// The session is unharmed.
	resp := e.do(t, http.MethodPost, sid, "2025-11-25", ping)
	if events, err := readSSE(resp.Body, answers(7)); err != nil {
		t.Errorf("ping after the refusals: %v %v", err, events)
	}
}

// TestStreamableRefusesReboundHost: a request reaching a loopback
// address under a name that is not loopback (DNS rebinding) is refused.
func TestStreamableRefusesReboundHost(t *testing.T) {
	e := startStreamable(t, StreamableHTTPOptions{})
	for host, want := range map[string]int{"evil.example": http.StatusForbidden, "localhost": http.StatusOK, "127.0.0.1:1": http.StatusOK} {
		req, _ := http.NewRequest(http.MethodPost, e.url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`))
		req.Host = host
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("Host %s: %s, want %d", host, resp.Status, want)
		}
	}
}

// TestStreamableSession: a session's life over raw HTTP. The initialize
// answer names the session and starts with a prime event; notifications
// are accepted with 202; an older client's batch is answered in full; an
// id still in flight cannot be reused; DELETE ends the session.
func TestStreamableSession(t *testing.T) {
	e := startStreamable(t, StreamableHTTPOptions{})
	sid, events := e.initialize(t, "2025-11-25")
	if len(events) < 2 || events[0].name != "prime" || events[0].data != "" || !strings.HasSuffix(events[0].id, "_0") {
		t.Errorf("initialize events %v: want a prime event (id, no data) first", events)
	}
	if last := events[len(events)-1]; last.name != "message" || !strings.HasSuffix(last.id, "_1") {
		t.Errorf("initialize answer %v: want a message event with the next id", last)
	}

	resp := e.do(t, http.MethodPost, sid, "2025-03-26", `[{"jsonrpc":"2.0","id":2,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/roots/list_changed"},{"jsonrpc":"2.0","id":3,"method":"tools/list"}]`)
	got, _ := readSSE(resp.Body, nil) // the stream ends once both are answered
	seen := map[int]bool{}
	for _, ev := range got {
		for _, id := range []int{2, 3} {
			if answers(id)(ev) {
				seen[id] = true
			}
		}
	}
	if !seen[2] || !seen[3] {
		t.Errorf("batch answered with %v", got)
	}

	// A call in flight keeps its id.
	call := e.do(t, http.MethodPost, sid, "2025-11-25", `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"wait","arguments":{}}}`)
	dup := e.do(t, http.MethodPost, sid, "2025-11-25", `{"jsonrpc":"2.0","id":4,"method":"ping"}`)
	b, _ := io.ReadAll(dup.Body)
	if dup.StatusCode != http.StatusBadRequest || !strings.Contains(string(b), "duplicate") {
		t.Errorf("id in flight reused: %s %s", dup.Status, b)
	}
	close(e.release)
	if got, err := readSSE(call.Body, answers(4)); err != nil || !strings.Contains(got[len(got)-1].data, "released") {
		t.Errorf("wait: %v %v", err, got)
	}

	if r := e.do(t, http.MethodDelete, sid, "2025-11-25", ""); r.StatusCode != http.StatusNoContent {
		t.Errorf("DELETE: %s", r.Status)
	}
	if r := e.do(t, http.MethodPost, sid, "2025-11-25", `{"jsonrpc":"2.0","id":5,"method":"ping"}`); r.StatusCode != http.StatusNotFound {
		t.Errorf("POST after DELETE: %s, want 404", r.Status)
	}
	testwait.For(t, "the server to forget the session", func() bool { return e.srv.Sessions() == 0 })
}

// TestStreamableStandaloneStream: what the server says outside any
// request (progress sent with a context of no request) waits in the store until the client opens its
// GET stream, and only one GET carries that stream at a time.
// Every POST stream of a 2025-11-25 session starts with a prime event
// carrying an id and a retry delay (SEP-1699), even when the request's
// header names an older version (the conformance client sends 2025-03-26
// on every request after initialize): the session negotiated resumable
// streams.
func TestStreamablePrimeEvents(t *testing.T) {
	e := startStreamable(t, StreamableHTTPOptions{})
	sid, events := e.initialize(t, "2025-11-25")
	if len(events) == 0 || events[0].name != "prime" || events[0].retry != "1000" {
		t.Fatalf("initialize stream %v: want a prime event with retry first", events)
	}
	for _, header := range []string{"2025-11-25", "2025-03-26"} {
		resp := e.do(t, http.MethodPost, sid, header, `{"jsonrpc":"2.0","id":7,"method":"ping"}`)
		got, _ := readSSE(resp.Body, answers(7))
		resp.Body.Close()
		if len(got) < 2 || got[0].name != "prime" || got[0].id == "" || got[0].data != "" || got[0].retry != "1000" {
			t.Errorf("header %s: events %+v: want a prime event (id, retry, no data) first", header, got)
		}
	}
	// A session of an older version gets none.
	sid, events = e.initialize(t, "2025-06-18")
	if len(events) == 0 || events[0].name == "prime" {
		t.Fatalf("2025-06-18 initialize: %v", events)
	}
	resp := e.do(t, http.MethodPost, sid, "2025-06-18", `{"jsonrpc":"2.0","id":8,"method":"ping"}`)
	got, _ := readSSE(resp.Body, answers(8))
	resp.Body.Close()
	if len(got) == 0 || got[0].name == "prime" {
		t.Errorf("2025-06-18 session: %v", got)
	}
}

func TestStreamableStandaloneStream(t *testing.T) {
	e := startStreamable(t, StreamableHTTPOptions{})
	sid, _ := e.initialize(t, "2025-11-25")
	testwait.For(t, "the session to be live", func() bool { return e.srv.Sessions() == 1 })
	notify := func(token string) {
		if err := e.srv.live()[0].ss.NotifyProgress(context.Background(), &mcp.ProgressNotificationParams{ProgressToken: token, Progress: 1}); err != nil {
			t.Fatalf("notify %s: %v", token, err)
		}
	}
	notify("before any GET")

	get := e.do(t, http.MethodGet, sid, "2025-11-25", "")
	if get.StatusCode != http.StatusOK {
		t.Fatalf("GET: %s", get.Status)
	}
	got, err := readSSE(get.Body, func(ev sse) bool { return strings.Contains(ev.data, "before any GET") })
	if err != nil {
		t.Fatalf("GET stream: %v %v", err, got)
	}
	if second := e.do(t, http.MethodGet, sid, "2025-11-25", ""); second.StatusCode != http.StatusConflict {
		t.Errorf("second GET: %s, want 409", second.Status)
	}
	notify("while the GET is open")
	if got, err := readSSE(get.Body, func(ev sse) bool { return strings.Contains(ev.data, "while the GET is open") }); err != nil {
		t.Fatalf("GET stream: %v %v", err, got)
	}
}

// TestStreamableSessionTimeout: an idle session ends; one busy with a
// call does not.
func TestStreamableSessionTimeout(t *testing.T) {
	e := startStreamable(t, StreamableHTTPOptions{SessionTimeout: 300 * time.Millisecond})
	sid, _ := e.initialize(t, "2025-11-25")
	call := e.do(t, http.MethodPost, sid, "2025-11-25", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"wait","arguments":{}}}`)
	time.Sleep(time.Second) // three timeouts while the call runs
	close(e.release)
	if got, err := readSSE(call.Body, answers(2)); err != nil {
		t.Fatalf("a busy session ended: %v %v", err, got)
	}
	// Each POST restarts the idle time: ask after more than a timeout.
	for i := 0; ; i++ {
		time.Sleep(time.Second)
		r := e.do(t, http.MethodPost, sid, "2025-11-25", `{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}`)
		if r.StatusCode == http.StatusNotFound {
			break
		}
		if i == 10 {
			t.Fatalf("idle for a second (timeout 300 ms), still %s", r.Status)
		}
	}
}

// TestStreamableNewProtocolClient: go-sdk's client asks for 2026-07-28
// first (server/discover), is served it, and calls without a session:
// none is made, its caller's agent lives on between requests.
func TestStreamableNewProtocolClient(t *testing.T) {
	e := startStreamable(t, StreamableHTTPOptions{})
	c := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: e.url}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if v := cs.InitializeResult().ProtocolVersion; v != "2026-07-28" {
		t.Errorf("negotiated %q", v)
	}
	close(e.release)
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "wait"})
	if err != nil || res.IsError {
		t.Fatalf("call: %v %v", err, res)
	}
	e.h.mu.Lock()
	n := len(e.h.sessions)
	e.h.mu.Unlock()
	if n != 0 {
		t.Errorf("%d sessions held, want none", n)
	}
	if a := e.srv.Agents(); a != 1 {
		t.Errorf("%d agents, want the caller's one", a)
	}
}

// TestWriteEventLines: an event's data with line breaks (raw bytes of an
// upstream that pretty-prints) is read back by a client as the same
// text, line breaks as newlines.
func TestWriteEventLines(t *testing.T) {
	for _, data := range []string{
		`{"a":1}`,
		"{\n  \"a\": 1\n}",
		"{\r\n\"a\":\r\n1}\r\n",
		"{\r\"a\":1\r}",
		"\n\n",
		"",
	} {
		want := strings.NewReplacer("\r\n", "\n", "\r", "\n").Replace(data)
		// Whole, and in the pieces of a forwarded result: a head, the
		// upstream's bytes and a tail.
		for _, parts := range [][][]byte{
			{[]byte(data)},
			{[]byte(`{"id":1,"result":`), []byte(data), []byte("}")},
		} {
			w := httptest.NewRecorder()
			if err := writeEvent(w, "message", "s_1", parts...); err != nil {
				t.Fatal(err)
			}
			got, err := readSSE(w.Body, nil)
			if err != io.EOF || len(got) != 1 {
				t.Fatalf("%q: read %v, %v", data, got, err)
			}
			wantData := want
			if len(parts) > 1 {
				wantData = `{"id":1,"result":` + want + "}"
			}
			if got[0].data != wantData || got[0].id != "s_1" || got[0].name != "message" {
				t.Errorf("%q in %d pieces: read %+v, want data %q", data, len(parts), got[0], wantData)
			}
		}
	}
}

// TestStreamableStandaloneStreamAfterPurge: when the store dropped what
// was sent before the GET, the GET still opens the stream and gets what
// follows.
func TestStreamableStandaloneStreamAfterPurge(t *testing.T) {
	e := startStreamable(t, StreamableHTTPOptions{StoreBytes: 512})
	sid, _ := e.initialize(t, "2025-11-25")
	testwait.For(t, "the session to be live", func() bool { return e.srv.Sessions() == 1 })
	ss := e.srv.live()[0].ss
	for i := range 20 {
		_ = ss.NotifyProgress(context.Background(), &mcp.ProgressNotificationParams{ProgressToken: fmt.Sprint("early ", i), Progress: 1})
	}
	get := e.do(t, http.MethodGet, sid, "2025-11-25", "")
	if get.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(get.Body)
		t.Fatalf("GET after the store dropped events: %s %s", get.Status, b)
	}
	if err := ss.NotifyProgress(context.Background(), &mcp.ProgressNotificationParams{ProgressToken: "late", Progress: 1}); err != nil {
		t.Fatal(err)
	}
	if got, err := readSSE(get.Body, func(ev sse) bool { return strings.Contains(ev.data, `"late"`) }); err != nil {
		t.Fatalf("GET stream: %v %v", err, got)
	}
}

// failingStore is a memory store whose appends fail.
type failingStore struct{ *mcp.MemoryEventStore }

func (failingStore) Append(context.Context, string, string, []byte) error {
	return fmt.Errorf("disk full")
}

// TestStreamableStoreFailureLosesNothing: when the event store cannot
// keep events, the client still gets every answer.
func TestStreamableStoreFailureLosesNothing(t *testing.T) {
	e := startStreamable(t, StreamableHTTPOptions{EventStore: failingStore{mcp.NewMemoryEventStore(nil)}})
	sid, events := e.initialize(t, "2025-11-25")
	if events[0].name == "prime" {
		t.Errorf("a prime event the store did not keep: %v", events)
	}
	close(e.release)
	for id := 2; id < 5; id++ {
		resp := e.do(t, http.MethodPost, sid, "2025-11-25", fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"wait","arguments":{}}}`, id))
		if got, err := readSSE(resp.Body, answers(id)); err != nil {
			t.Fatalf("call %d: %v %v", id, err, got)
		}
	}
}

// TestStreamableBigEventNotKept: an answer larger than the whole event
// store reaches the client but is not kept; resuming from before it
// fails with a clear error instead of skipping it.
func TestStreamableBigEventNotKept(t *testing.T) {
	e := startStreamable(t, StreamableHTTPOptions{StoreBytes: 2048})
	sid, _ := e.initialize(t, "2025-11-25")
	resp := e.do(t, http.MethodPost, sid, "2025-11-25", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"big","arguments":{}}}`)
	got, err := readSSE(resp.Body, answers(2))
	if err != nil || len(got) != 2 || got[0].name != "prime" || !strings.Contains(got[1].data, strings.Repeat("b", 4096)) {
		t.Fatalf("big: %v %v", err, got)
	}
	// The stream is over once its response ends.
	_, _ = io.Copy(io.Discard, resp.Body)
	r := e.do(t, http.MethodGet, sid, "2025-11-25", "", "Last-Event-ID", got[0].id)
	b, _ := io.ReadAll(r.Body)
	if r.StatusCode != http.StatusBadRequest || !strings.Contains(string(b), "purged") {
		t.Errorf("resuming before the big answer: %s %s, want 400 saying purged", r.Status, b)
	}
	if r := e.do(t, http.MethodGet, sid, "2025-11-25", "", "Last-Event-ID", got[1].id); r.StatusCode != http.StatusOK {
		t.Errorf("resuming after it: %s", r.Status)
	}
}

// TestStreamableSessionBound: past MaxSessions an initialize is answered
// 429 naming the limit; a session that ends frees its place.
func TestStreamableSessionBound(t *testing.T) {
	e := startStreamable(t, StreamableHTTPOptions{MaxSessions: 2})
	a, _ := e.initialize(t, "2025-11-25")
	e.initialize(t, "2025-11-25")
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	resp := e.do(t, http.MethodPost, "", "", init)
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusTooManyRequests || !strings.Contains(string(b), "limit of 2 sessions") {
		t.Fatalf("a third session: %s %s", resp.Status, b)
	}
	if r := e.do(t, http.MethodDelete, a, "2025-11-25", ""); r.StatusCode/100 != 2 {
		t.Fatalf("DELETE: %s", r.Status)
	}
	e.initialize(t, "2025-11-25") // its place is free again
}
