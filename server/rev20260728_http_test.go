package server_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/scratchpad-mcp/scratchpad-mcp/proxy"
	"github.com/scratchpad-mcp/scratchpad-mcp/server"
	"github.com/scratchpad-mcp/scratchpad-mcp/tool"
	"github.com/scratchpad-mcp/scratchpad-mcp/wire"
)

// envelope is a 2026-07-28 request's _meta.
func envelope(extra string) string {
	m := `"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}`
	if extra != "" {
		m += "," + extra
	}
	return `"_meta":{` + m + `}`
}

// modernBody is a 2026-07-28 request with params (without braces) and
// the envelope.
func modernBody(id int, method, params string) string {
	p := envelope("")
	if params != "" {
		p = params + "," + p
	}
	b, _ := json.Marshal(id)
	return `{"jsonrpc":"2.0","id":` + string(b) + `,"method":"` + method + `","params":{` + p + `}}`
}

// modernHeaders are the headers a 2026-07-28 client sends for method
// (and name, for the methods that name something).
func modernHeaders(method, name string) []string {
	h := []string{"Mcp-Protocol-Version", wire.Revision20260728, "Mcp-Method", method}
	if name != "" {
		h = append(h, "Mcp-Name", name)
	}
	return h
}

type modernResp struct {
	status int
	ctype  string
	body   []byte
	msgs   []json.RawMessage // the messages: the JSON body, or each event's data
}

// post sends one raw POST to url with headers as name, value pairs.
func post(t testing.TB, ctx context.Context, url, body string, headers ...string) modernResp {
	t.Helper()
	req, err := newPost(ctx, url, body, headers...)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	return readModernResp(resp)
}

// newPost is a client's POST of body with headers as name, value pairs.
func newPost(ctx context.Context, url, body string, headers ...string) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	return req, nil
}

// readModernResp reads a response's messages.
func readModernResp(resp *http.Response) modernResp {
	b, _ := io.ReadAll(resp.Body)
	r := modernResp{status: resp.StatusCode, ctype: resp.Header.Get("Content-Type"), body: b}
	if strings.HasPrefix(r.ctype, "text/event-stream") {
		for _, line := range bytes.Split(b, []byte("\n")) {
			if d, ok := bytes.CutPrefix(line, []byte("data: ")); ok && len(d) > 0 {
				r.msgs = append(r.msgs, json.RawMessage(d))
			}
		}
	} else if len(b) > 0 {
		r.msgs = []json.RawMessage{b}
	}
	return r
}

// last is the response's last message decoded.
func (r modernResp) last(t testing.TB) map[string]json.RawMessage {
	t.Helper()
	if len(r.msgs) == 0 {
		t.Fatalf("no message in HTTP %d %s", r.status, r.body)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(r.msgs[len(r.msgs)-1], &m); err != nil {
		t.Fatalf("%v: %s", err, r.msgs[len(r.msgs)-1])
	}
	return m
}

// TestModernRefusals: every malformed envelope, header mismatch and
// version case go-sdk's stateless server refuses is refused with its code
// and HTTP status, the request's id echoed, before anything runs.
func TestModernRefusals(t *testing.T) {
	var ran atomic.Int32
	own := &server.Own{Tools: []tool.Def{{Name: "mark", InputSchema: json.RawMessage(`{"type":"object"}`),
		Handler: func(context.Context, json.RawMessage) tool.Result { ran.Add(1); return tool.Text("ran") }}}}
	e := startEnvWith(t, envOptions{own: own})
	call := func(extraMeta string) string {
		return `{"jsonrpc":"2.0","id":"r1","method":"tools/call","params":{"name":"mark",` + envelope(extraMeta) + `}}`
	}
	for _, c := range []struct {
		name    string
		body    string
		headers []string
		status  int
		code    int
	}{
		{"no _meta", `{"jsonrpc":"2.0","id":"r1","method":"tools/list","params":{}}`, modernHeaders("tools/list", ""), 400, wire.CodeInvalidParams},
		{"no capabilities", `{"jsonrpc":"2.0","id":"r1","method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`, modernHeaders("tools/list", ""), 400, wire.CodeInvalidParams},
		{"capabilities not an object", `{"jsonrpc":"2.0","id":"r1","method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":[]}}}`, modernHeaders("tools/list", ""), 400, wire.CodeInvalidParams},
		{"clientInfo malformed", modernBody(1, "tools/list", `"_x":1`)[:0] + `{"jsonrpc":"2.0","id":"r1","method":"tools/list","params":{` + envelope(`"io.modelcontextprotocol/clientInfo":{"name":3}`) + `}}`, modernHeaders("tools/list", ""), 400, wire.CodeInvalidParams},
		{"version header missing", modernBody(1, "tools/list", ""), []string{"Mcp-Method", "tools/list"}, 400, wire.CodeHeaderMismatch},
		{"version header differs", modernBody(1, "tools/list", ""), []string{"Mcp-Protocol-Version", "2025-11-25", "Mcp-Method", "tools/list"}, 400, wire.CodeHeaderMismatch},
		{"version not served", strings.ReplaceAll(modernBody(1, "tools/list", ""), wire.Revision20260728, "2099-01-01"), []string{"Mcp-Protocol-Version", "2099-01-01", "Mcp-Method", "tools/list"}, 400, wire.CodeUnsupportedVersion},
		{"Mcp-Method missing", modernBody(1, "tools/list", ""), []string{"Mcp-Protocol-Version", wire.Revision20260728}, 400, wire.CodeHeaderMismatch},
		{"Mcp-Method in capitals", modernBody(1, "tools/list", ""), modernHeaders("TOOLS/LIST", ""), 400, wire.CodeHeaderMismatch},
		{"Mcp-Name missing", call(""), modernHeaders("tools/call", ""), 400, wire.CodeHeaderMismatch},
		{"Mcp-Name differs", call(""), modernHeaders("tools/call", "other"), 400, wire.CodeHeaderMismatch},
		{"initialize", modernBody(1, "initialize", ""), modernHeaders("initialize", ""), 404, wire.CodeMethodNotFound},
		{"ping", modernBody(1, "ping", ""), modernHeaders("ping", ""), 404, wire.CodeMethodNotFound},
		{"logging/setLevel", modernBody(1, "logging/setLevel", `"level":"info"`), modernHeaders("logging/setLevel", ""), 404, wire.CodeMethodNotFound},
		{"resources/subscribe", modernBody(1, "resources/subscribe", `"uri":"x://y"`), modernHeaders("resources/subscribe", ""), 404, wire.CodeMethodNotFound},
		{"unknown method", modernBody(1, "unknown/method", ""), modernHeaders("unknown/method", ""), 404, wire.CodeMethodNotFound},
		{"on a session", call(""), append(modernHeaders("tools/call", "mark"), "Mcp-Session-Id", "abc"), 400, wire.CodeInvalidRequest},
		{"inputResponses null", `{"jsonrpc":"2.0","id":"r1","method":"tools/call","params":{"name":"mark","inputResponses":null,` + envelope("") + `}}`, modernHeaders("tools/call", "mark"), 400, wire.CodeInvalidParams},
		{"inputResponses not objects", `{"jsonrpc":"2.0","id":"r1","method":"tools/call","params":{"name":"mark","inputResponses":{"a":1},` + envelope("") + `}}`, modernHeaders("tools/call", "mark"), 400, wire.CodeInvalidParams},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := post(t, context.Background(), e.url, c.body, c.headers...)
			m := r.last(t)
			var werr wire.Error
			_ = json.Unmarshal(m["error"], &werr)
			if r.status != c.status || werr.Code != c.code {
				t.Fatalf("HTTP %d %s, want %d with code %d", r.status, r.body, c.status, c.code)
			}
			if want := `"r1"`; !strings.Contains(c.body, want) {
				if string(m["id"]) != "1" {
					t.Errorf("id %s, want 1", m["id"])
				}
			} else if string(m["id"]) != want {
				t.Errorf("id %s, want %s", m["id"], want)
			}
			if c.code == wire.CodeUnsupportedVersion {
				var d struct{ Supported []string }
				_ = json.Unmarshal(werr.Data, &d)
				if len(d.Supported) == 0 || d.Supported[0] != wire.Revision20260728 {
					t.Errorf("supported %v", d.Supported)
				}
			}
		})
	}
	// A batch holding a 2026-07-28 request: the revision has none.
	batch := "[" + call("") + "," + modernBody(2, "tools/list", "") + "]"
	if r := post(t, context.Background(), e.url, batch, modernHeaders("tools/call", "mark")...); r.status != 400 || !strings.Contains(string(r.body), "batches are not part of MCP 2026-07-28") {
		t.Errorf("batch with header: HTTP %d %s", r.status, r.body)
	}
	if r := post(t, context.Background(), e.url, batch); r.status != 400 || !strings.Contains(string(r.body), "-32600") {
		t.Errorf("batch without header: HTTP %d %s", r.status, r.body)
	}
	if n := ran.Load(); n != 0 {
		t.Errorf("the tool ran %d times on refused requests", n)
	}
	// Whitespace around a header value is not a mismatch.
	r := post(t, context.Background(), e.url, call(""), "Mcp-Protocol-Version", wire.Revision20260728, "Mcp-Method", "tools/call", "Mcp-Name", " mark ")
	if r.status != 200 || ran.Load() != 1 {
		t.Errorf("with spaces around Mcp-Name: HTTP %d %s", r.status, r.body)
	}
}

// TestModernServes: discover, lists with cache hints, calls of own and
// upstream tools, a big result diverted, as one JSON answer each; no
// session is made.
func TestModernServes(t *testing.T) {
	own := &server.Own{Tools: []tool.Def{{Name: "mark", InputSchema: json.RawMessage(`{"type":"object"}`),
		Handler: func(context.Context, json.RawMessage) tool.Result { return tool.Text("marked") }}}}
	e := startEnvWith(t, envOptions{own: own}, stdioUpstream("up", thresholds(t, "words", 100)))
	ctx := context.Background()

	d := post(t, ctx, e.url, modernBody(1, "server/discover", ""), modernHeaders("server/discover", "")...)
	m := d.last(t)
	var res struct {
		ResultType        string
		SupportedVersions []string
		Capabilities      map[string]json.RawMessage
		TTLMs             *int64 `json:"ttlMs"`
		CacheScope        string
		Meta              map[string]json.RawMessage `json:"_meta"`
	}
	if err := json.Unmarshal(m["result"], &res); err != nil || d.status != 200 || !strings.HasPrefix(d.ctype, "application/json") {
		t.Fatalf("discover: HTTP %d %s %s", d.status, d.ctype, d.body)
	}
	if res.ResultType != "complete" || len(res.SupportedVersions) < 2 || res.SupportedVersions[0] != wire.Revision20260728 ||
		res.Capabilities["tools"] == nil || res.TTLMs == nil || res.CacheScope == "" || res.Meta[wire.MetaServerInfo] == nil {
		t.Errorf("discover result %s", m["result"])
	}

	l := post(t, ctx, e.url, modernBody(2, "tools/list", ""), modernHeaders("tools/list", "")...)
	var list struct {
		Tools      []struct{ Name string }
		TTLMs      *int64 `json:"ttlMs"`
		CacheScope string
	}
	_ = json.Unmarshal(l.last(t)["result"], &list)
	names := map[string]bool{}
	for _, tl := range list.Tools {
		names[tl.Name] = true
	}
	if !names["mark"] || !names["echo"] || list.TTLMs == nil || list.CacheScope != wire.ScopePrivate {
		t.Errorf("tools/list: %s", l.body)
	}

	c := post(t, ctx, e.url, modernBody(3, "tools/call", `"name":"echo","arguments":{"text":"hi"}`), modernHeaders("tools/call", "echo")...)
	if c.status != 200 || !strings.Contains(string(c.body), `"resultType":"complete"`) || !strings.Contains(string(c.body), "hi") {
		t.Errorf("echo: HTTP %d %s", c.status, c.body)
	}
	o := post(t, ctx, e.url, modernBody(4, "tools/call", `"name":"mark"`), modernHeaders("tools/call", "mark")...)
	if !strings.Contains(string(o.body), "marked") {
		t.Errorf("own tool: %s", o.body)
	}
	b := post(t, ctx, e.url, modernBody(5, "tools/call", `"name":"words","arguments":{"n":5000}`), modernHeaders("tools/call", "words")...)
	if b.status != 200 || len(e.intercepted()) != 1 || len(b.body) > 20000 {
		t.Errorf("words: HTTP %d, intercepted %v, %d bytes", b.status, e.intercepted(), len(b.body))
	}
	if n := e.srv.Sessions(); n != 0 {
		t.Errorf("%d sessions, want none", n)
	}
	if n := e.srv.Agents(); n != 1 {
		t.Errorf("%d agents, want 1", n)
	}
}

// TestModernProgressStreams: a call whose upstream reports progress is
// answered with an event stream: the progress under the client's token,
// then the result.
func TestModernProgressStreams(t *testing.T) {
	e := startEnv(t, stdioUpstream("up", nil))
	body := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"slow","arguments":{"steps":3,"ms":10},` + envelope(`"progressToken":"tok"`) + `}}`
	r := post(t, context.Background(), e.url, body, modernHeaders("tools/call", "slow")...)
	if !strings.HasPrefix(r.ctype, "text/event-stream") || len(r.msgs) < 2 {
		t.Fatalf("HTTP %d %s: %s", r.status, r.ctype, r.body)
	}
	for _, msg := range r.msgs[:len(r.msgs)-1] {
		if !bytes.Contains(msg, []byte(`"notifications/progress"`)) || !bytes.Contains(msg, []byte(`"tok"`)) {
			t.Errorf("before the result: %s", msg)
		}
	}
	if m := r.last(t); string(m["id"]) != "7" || m["result"] == nil {
		t.Errorf("last: %s", r.msgs[len(r.msgs)-1])
	}
}

// TestModernClosedStreamCancels: a client that closes its request's
// response cancels the call.
func TestModernClosedStreamCancels(t *testing.T) {
	own, started, cancelled := blockingTool()
	e := startEnvWith(t, envOptions{own: own})
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-started
		cancel()
	}()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, e.url, strings.NewReader(modernBody(1, "tools/call", `"name":"block"`)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for h := modernHeaders("tools/call", "block"); len(h) > 1; h = h[2:] {
		req.Header.Set(h[0], h[1])
	}
	if resp, err := http.DefaultClient.Do(req); err == nil {
		resp.Body.Close()
		t.Fatalf("answered %s, want the call cancelled", resp.Status)
	}
	select {
	case <-cancelled:
	case <-time.After(10 * time.Second):
		t.Fatal("the call was not cancelled when its client closed the request")
	}
}

// TestModernListen: subscriptions/listen acknowledges first with what it
// honours, then tags each list change with the listen's id.
func TestModernListen(t *testing.T) {
	e := startEnv(t, stdioUpstream("up", nil))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	body := modernBody(42, "subscriptions/listen", `"notifications":{"toolsListChanged":true,"promptsListChanged":true}`)
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, e.url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for h := modernHeaders("subscriptions/listen", ""); len(h) > 1; h = h[2:] {
		req.Header.Set(h[0], h[1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	events := make(chan string, 16)
	go func() {
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				events <- d
			}
		}
		close(events)
	}()
	next := func() string {
		select {
		case ev := <-events:
			return ev
		case <-time.After(10 * time.Second):
			t.Fatal("no event")
		}
		return ""
	}
	ack := next()
	if !strings.Contains(ack, "notifications/subscriptions/acknowledged") || !strings.Contains(ack, `"io.modelcontextprotocol/subscriptionId":42`) || !strings.Contains(ack, `"toolsListChanged":true`) {
		t.Fatalf("first event %s", ack)
	}
	// The acknowledgement is sent once the listen is registered.
	e.srv.Changed(e.px, proxy.KindTools)
	if ev := next(); !strings.Contains(ev, "notifications/tools/list_changed") || !strings.Contains(ev, `"io.modelcontextprotocol/subscriptionId":42`) {
		t.Fatalf("change event %s", ev)
	}
	// A kind it did not ask for is not sent: the next event is the tools
	// change after it.
	e.srv.Changed(e.px, proxy.KindResources)
	e.srv.Changed(e.px, proxy.KindTools)
	if ev := next(); !strings.Contains(ev, "notifications/tools/list_changed") {
		t.Fatalf("after a resources change: %s", ev)
	}
}

// TestModernAgentEndsIdle: a 2026-07-28 caller's agent is one across its
// requests and ends (its usage record) once idle, without a session.
func TestModernAgentEndsIdle(t *testing.T) {
	var made atomic.Int32
	ended := make(chan string, 4)
	px := proxy.New(proxy.Options{Logger: quietLogger()})
	t.Cleanup(px.Close)
	srv := server.New(server.Options{Proxy: px, Logger: quietLogger(),
		Session: func(info server.SessionInfo) (*server.Own, error) {
			made.Add(1)
			return &server.Own{Tools: []tool.Def{{Name: "mark", InputSchema: json.RawMessage(`{"type":"object"}`),
				Handler: func(context.Context, json.RawMessage) tool.Result { return tool.Text("ok") }}}}, nil
		},
		SessionEnded: func(id string) { ended <- id }})
	px.Start(context.Background(), nil)
	ts := httptestServer(t, srv.StreamableHTTP(server.StreamableHTTPOptions{AgentIdle: 200 * time.Millisecond}))
	for i := range 3 {
		post(t, context.Background(), ts, modernBody(i, "tools/call", `"name":"mark"`), modernHeaders("tools/call", "mark")...)
	}
	if n := made.Load(); n != 1 {
		t.Errorf("own made %d times for one caller, want once", n)
	}
	select {
	case id := <-ended:
		if !strings.HasPrefix(id, "m/") {
			t.Errorf("ended %q", id)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the idle agent never ended")
	}
	if n := srv.Agents(); n != 0 {
		t.Errorf("%d agents left", n)
	}
}

// httptestServer serves h for the test; it returns its URL.
func httptestServer(t testing.TB, h http.Handler) string {
	ts := httptest.NewServer(h)
	t.Cleanup(func() {
		ts.CloseClientConnections()
		ts.Close()
	})
	return ts.URL
}

// blockingTool is an own tool "block" that runs until its call is
// cancelled: started is closed when it runs, cancelled when its context
// ended.
func blockingTool() (own *server.Own, started, cancelled chan struct{}) {
	started, cancelled = make(chan struct{}), make(chan struct{})
	own = &server.Own{Tools: []tool.Def{{Name: "block", InputSchema: json.RawMessage(`{"type":"object"}`),
		Handler: func(ctx context.Context, _ json.RawMessage) tool.Result {
			close(started)
			<-ctx.Done()
			close(cancelled)
			return tool.Error("cancelled")
		}}}}
	return own, started, cancelled
}
