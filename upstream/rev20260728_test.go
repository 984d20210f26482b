package upstream

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/scratchpad-mcp/scratchpad-mcp/config"
	"github.com/scratchpad-mcp/scratchpad-mcp/wire"
)

// A hand-written 2026-07-28 server on net/http: it checks every request the
// way a modern server must (wire.Classify, wire.CheckHeaders with the
// tools' x-mcp-header bindings, wire.ParseEnvelope) and refuses a bad one
// with the JSON-RPC error and status go-sdk v1.8.0 would, so a test passing
// here means the upstream sent what a real modern server accepts.

// modernReq is one request as the server received it.
type modernReq struct {
	httpMethod string
	method     string
	header     http.Header
	params     json.RawMessage
	env        wire.Envelope
}

type modernServer struct {
	t  testing.TB
	ts *httptest.Server

	mu   sync.Mutex
	reqs []modernReq
	// discover answers server/discover; nil is the modern answer.
	discover func(w http.ResponseWriter, id json.RawMessage, n int) bool
	// legacy serves a 2025 request (initialize...) when set; else -32601.
	legacy   func(w http.ResponseWriter, m rpcMessage) bool
	ttlMs    int
	static   bool // no listChanged declared: the ttl is all there is
	tools    string
	lists    int // tools/list served
	slowGone chan struct{}
	// push sends a notification on the open listen streams; endListen
	// ends one; listening counts the open ones.
	push      chan string
	endListen chan struct{}
	listening int
}

const modernTools = `[{"name":"echo","inputSchema":{"type":"object","properties":{"text":{"type":"string"}}}},` +
	`{"name":"region","inputSchema":{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"},"n":{"type":"integer","x-mcp-header":"N"}}}},` +
	`{"name":"badheader","inputSchema":{"type":"object","properties":{"o":{"type":"object","x-mcp-header":"Obj"}}}},` +
	`{"name":"ask","inputSchema":{"type":"object"}},{"name":"slow","inputSchema":{"type":"object"}},` +
	`{"name":"refuse","inputSchema":{"type":"object"}}]`

func newModernServer(t testing.TB) *modernServer {
	s := &modernServer{t: t, tools: modernTools, slowGone: make(chan struct{}, 1), push: make(chan string), endListen: make(chan struct{})}
	s.ts = httptest.NewServer(http.HandlerFunc(s.handle))
	t.Cleanup(s.ts.Close)
	return s
}

func (s *modernServer) url() string { return s.ts.URL + "/mcp" }

func (s *modernServer) seen() []modernReq {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]modernReq(nil), s.reqs...)
}

func (s *modernServer) count(method string) int {
	n := 0
	for _, r := range s.seen() {
		if r.method == method {
			n++
		}
	}
	return n
}

func writeRPCError(w http.ResponseWriter, id json.RawMessage, e *wire.Error) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(e.Status)
	_ = json.NewEncoder(w).Encode(rpcError{JSONRPC: "2.0", ID: id, Error: &RPCError{Code: e.Code, Message: e.Message, Data: e.Data}})
}

func writeResult(w http.ResponseWriter, id json.RawMessage, result string) {
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":%s}`, id, result)
}

// bindings are the server's own view of a tool's x-mcp-header bindings.
func (s *modernServer) bindings(tool string) []wire.Binding {
	var tools []struct {
		Name        string          `json:"name"`
		InputSchema json.RawMessage `json:"inputSchema"`
	}
	_ = json.Unmarshal([]byte(s.tools), &tools)
	for _, t := range tools {
		if t.Name == tool {
			b, _ := wire.ParamBindings(t.InputSchema)
			return b
		}
	}
	return nil
}

func (s *modernServer) handle(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.reqs = append(s.reqs, modernReq{httpMethod: r.Method, header: r.Header.Clone()})
	idx := len(s.reqs) - 1
	s.mu.Unlock()
	if r.Method != http.MethodPost {
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	var m rpcMessage
	if err := json.NewDecoder(r.Body).Decode(&m); err != nil {
		http.Error(w, "bad json", http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	s.reqs[idx].method, s.reqs[idx].params = m.Method, m.Params
	discover, legacy := s.discover, s.legacy
	s.mu.Unlock()
	if len(m.ID) == 0 {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	if era, _ := wire.Classify(r.Header, m.Params); era == wire.Era2025 {
		if legacy != nil && legacy(w, m) {
			return
		}
		writeRPCError(w, m.ID, wire.MethodNotFound(m.Method))
		return
	}
	if m.Method == "server/discover" && discover != nil && discover(w, m.ID, s.count("server/discover")) {
		return
	}
	if _, ok := wire.Method(m.Method); !ok {
		writeRPCError(w, m.ID, wire.MethodNotFound(m.Method))
		return
	}
	if _, werr := wire.Classify(r.Header, m.Params); werr != nil {
		writeRPCError(w, m.ID, werr)
		return
	}
	var call struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	_ = json.Unmarshal(m.Params, &call)
	if werr := wire.CheckHeaders(r.Header, m.Method, m.Params, s.bindings(call.Name)); werr != nil {
		writeRPCError(w, m.ID, werr)
		return
	}
	env, werr := wire.ParseEnvelope(m.Params)
	if werr != nil {
		writeRPCError(w, m.ID, werr)
		return
	}
	if werr := wire.CheckMethod(wire.Era20260728, m.Method); werr != nil {
		writeRPCError(w, m.ID, werr)
		return
	}
	s.mu.Lock()
	s.reqs[idx].env = env
	s.mu.Unlock()
	meta := `"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"modern","version":"9"}}`
	switch m.Method {
	case "server/discover":
		s.mu.Lock()
		listChanged := !s.static
		s.mu.Unlock()
		writeResult(w, m.ID, `{"resultType":"complete",`+meta+`,"ttlMs":0,"cacheScope":"public","supportedVersions":["2026-07-28","2025-11-25"],`+
			`"capabilities":{"tools":{"listChanged":`+fmt.Sprint(listChanged)+`},"resources":{"subscribe":true},"logging":{}},"instructions":"be modern"}`)
	case "resources/list":
		writeResult(w, m.ID, `{"resultType":"complete","resources":[],"ttlMs":0,"cacheScope":"public"}`)
	case "resources/templates/list":
		writeResult(w, m.ID, `{"resultType":"complete","resourceTemplates":[],"ttlMs":0,"cacheScope":"public"}`)
	case "subscriptions/listen":
		var p struct {
			Notifications json.RawMessage `json:"notifications"`
		}
		_ = json.Unmarshal(m.Params, &p)
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		fmt.Fprintf(w, "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/subscriptions/acknowledged\",\"params\":{\"_meta\":{%q:%s},\"notifications\":%s}}\n\n",
			wire.MetaSubscriptionID, m.ID, p.Notifications)
		w.(http.Flusher).Flush()
		s.mu.Lock()
		s.listening++
		s.mu.Unlock()
		defer func() {
			s.mu.Lock()
			s.listening--
			s.mu.Unlock()
		}()
		for {
			select {
			case <-r.Context().Done():
				return
			case <-s.endListen:
				return // ended without a result: the client opens another
			case n := <-s.push:
				fmt.Fprintf(w, ": keep-alive\n\ndata: %s\n\n", n)
				w.(http.Flusher).Flush()
			}
		}
	case "tools/list":
		s.mu.Lock()
		s.lists++
		ttl, tools := s.ttlMs, s.tools
		s.mu.Unlock()
		writeResult(w, m.ID, fmt.Sprintf(`{"resultType":"complete","tools":%s,"ttlMs":%d,"cacheScope":"public"}`, tools, ttl))
	case "tools/call":
		switch call.Name {
		case "echo", "region":
			b, _ := json.Marshal(string(call.Arguments))
			writeResult(w, m.ID, `{"resultType":"complete","content":[{"type":"text","text":`+string(b)+`}]}`)
		case "ask":
			writeResult(w, m.ID, `{"resultType":"input_required","inputRequests":{"confirm":{"method":"elicitation/create","params":{"message":"sure?","requestedSchema":{"type":"object"}}}},"requestState":"st-1","content":null}`)
		case "refuse":
			writeRPCError(w, m.ID, wire.MissingCapability(json.RawMessage(`{"elicitation":{}}`)))
		case "slow":
			// Streams nothing until the client gives up: closing the POST
			// is the cancel.
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(http.StatusOK)
			w.(http.Flusher).Flush()
			<-r.Context().Done()
			s.slowGone <- struct{}{}
		}
	default:
		writeRPCError(w, m.ID, wire.MethodNotFound(m.Method))
	}
}

// legacyInit serves a 2025 initialize and what follows it (stateless).
func legacyInit(w http.ResponseWriter, m rpcMessage) bool {
	switch m.Method {
	case "initialize":
		writeResult(w, m.ID, `{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"old","version":"1"}}`)
	case "tools/list":
		writeResult(w, m.ID, `{"tools":[{"name":"old_tool","inputSchema":{"type":"object"}}]}`)
	default:
		return false
	}
	return true
}

func modernUpstream(t testing.TB, url, protocol string, o Options) *Upstream {
	t.Helper()
	o.Server = config.Server{Name: "modern", Transport: config.TransportHTTPStreamable, URL: url, Protocol: protocol, Timeout: 10 * time.Second}
	if o.Logger == nil {
		o.Logger = quietLogger()
	}
	o.ClientName, o.ClientVersion = "scratchpad-mcp", "test"
	u := New(o)
	u.Start(context.Background(), nil)
	t.Cleanup(u.Close)
	return u
}

// awaitSettled waits until u is ready or has failed.
func awaitSettled(t testing.TB, u *Upstream) (string, error) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		st, err := u.State()
		if st == StateReady || st == StateFailed || st == StateRestarting && err != nil {
			return st, err
		}
		if time.Now().After(deadline) {
			t.Fatalf("upstream not settled: %s, %v", st, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestModernHTTPWire: every request to a modern HTTP upstream carries the
// envelope and the headers a modern server checks, none of the 2025 wire
// (initialize, session, GET stream, DELETE), and the caller's capabilities.
func TestModernHTTPWire(t *testing.T) {
	s := newModernServer(t)
	u := modernUpstream(t, s.url(), config.ProtocolAuto, Options{})
	if st, err := awaitSettled(t, u); st != StateReady {
		t.Fatalf("state %s: %v", st, err)
	}
	if p := u.Protocol(); p.Version != wire.Revision20260728 || p.How != "server/discover" {
		t.Errorf("protocol %+v", p)
	}
	if caps := u.Capabilities(); caps.Tools == nil || caps.Logging == nil {
		t.Errorf("capabilities from discover: %+v", caps)
	}
	var init struct {
		ProtocolVersion string          `json:"protocolVersion"`
		ServerInfo      json.RawMessage `json:"serverInfo"`
		Instructions    string          `json:"instructions"`
	}
	if err := json.Unmarshal(u.InitializeResult(), &init); err != nil || init.ProtocolVersion != wire.Revision20260728 ||
		string(init.ServerInfo) != `{"name":"modern","version":"9"}` || init.Instructions != "be modern" {
		t.Errorf("synthesized initialize result %s (%v)", u.InitializeResult(), err)
	}
	names := []string{}
	for _, tool := range u.Tools() {
		names = append(names, tool.Name)
	}
	if strings.Join(names, ",") != "echo,region,ask,slow,refuse" {
		t.Errorf("tools %v: badheader (an object x-mcp-header) must be dropped", names)
	}

	ctx := WithClient(context.Background(), ClientMeta{Caps: json.RawMessage(`{"elicitation":{"form":{}}}`), LogLevel: "debug"})
	res, err := u.Call(ctx, "tools/call", map[string]any{"name": "region", "arguments": map[string]any{"region": "eu-wést", "n": 42},
		"_meta": map[string]any{"progressToken": "sp-7"}})
	if err != nil {
		t.Fatalf("region: %v", err)
	}
	if !strings.Contains(string(res), `"resultType":"complete"`) {
		t.Errorf("result not raw: %s", res)
	}
	last := s.seen()[len(s.seen())-1]
	for h, want := range map[string]string{
		"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "region",
		"Mcp-Param-Region": wire.EncodeHeaderValue("eu-wést"), "Mcp-Param-N": "42",
	} {
		if got := last.header.Get(h); got != want {
			t.Errorf("header %s = %q, want %q", h, got, want)
		}
	}
	if string(last.env.Caps.Raw) != `{"elicitation":{"form":{}}}` || last.env.LogLevel != "debug" || string(last.env.ProgressToken) != `"sp-7"` ||
		!strings.Contains(string(last.env.ClientInfo), `"scratchpad-mcp"`) {
		t.Errorf("envelope %+v", last.env)
	}

	// resources/read names its URI in Mcp-Name (base64 when not ASCII).
	_, err = u.Call(ctx, "resources/read", map[string]any{"uri": "file:///tmp/ü.txt"})
	if rerr, ok := errors.AsType[*RPCError](err); !ok || rerr.Code != wire.CodeMethodNotFound {
		t.Errorf("resources/read: %v, want the server's -32601 (its headers passed)", err)
	}
	if last := s.seen()[len(s.seen())-1]; last.header.Get("Mcp-Name") != wire.EncodeHeaderValue("file:///tmp/ü.txt") {
		t.Errorf("resources/read Mcp-Name %q", last.header.Get("Mcp-Name"))
	}

	// A re-listing declares no capabilities; the probe declared the offer.
	for _, r := range s.seen() {
		switch r.method {
		case "server/discover":
			if !strings.Contains(string(r.env.Caps.Raw), `"sampling"`) {
				t.Errorf("discover caps %s, want the offer", r.env.Caps.Raw)
			}
		case "tools/list":
			if string(r.env.Caps.Raw) != `{}` {
				t.Errorf("tools/list caps %s, want {}", r.env.Caps.Raw)
			}
		}
	}
	// Removed methods are answered here, never sent.
	if _, err := u.Call(context.Background(), "ping", nil); err != nil {
		t.Errorf("ping: %v", err)
	}
	if _, err := u.Call(context.Background(), "resources/subscribe", map[string]any{"uri": "file:///x"}); err != nil {
		t.Errorf("subscribe: %v", err)
	}
	u.SetLogLevel(context.Background(), "info")
	_ = u.Notify(context.Background(), "notifications/roots/list_changed", nil)
	u.Close()
	for i, r := range s.seen() {
		if r.httpMethod != http.MethodPost || r.header.Get(wire.HeaderSessionID) != "" {
			t.Errorf("request %d: %s with session %q", i, r.httpMethod, r.header.Get(wire.HeaderSessionID))
		}
		switch r.method {
		case "initialize", "notifications/initialized", "ping", "logging/setLevel", "resources/subscribe", "notifications/roots/list_changed":
			t.Errorf("request %d: %s sent to a modern upstream", i, r.method)
		}
		if r.header.Get("Mcp-Method") != r.method {
			t.Errorf("request %d: Mcp-Method %q for %s", i, r.header.Get("Mcp-Method"), r.method)
		}
	}
}

// TestModernHTTPResults: errors in 4xx bodies are the call's RPCError;
// input-required is an *InputRequired; cancel is the POST closed.
func TestModernHTTPResults(t *testing.T) {
	s := newModernServer(t)
	u := modernUpstream(t, s.url(), config.Protocol20260728, Options{})
	if st, err := awaitSettled(t, u); st != StateReady {
		t.Fatalf("state %s: %v", st, err)
	}
	_, err := u.Call(context.Background(), "tools/call", map[string]any{"name": "refuse"})
	var rerr *RPCError
	if !errors.As(err, &rerr) || rerr.Code != wire.CodeMissingCapability || string(rerr.Data) != `{"requiredCapabilities":{"elicitation":{}}}` {
		t.Errorf("400 -32021: %v", err)
	}
	_, err = u.Call(context.Background(), "nope/nope", nil)
	if !errors.As(err, &rerr) || rerr.Code != wire.CodeMethodNotFound {
		t.Errorf("404 -32601: %v", err)
	}
	_, err = u.Call(context.Background(), "tools/call", map[string]any{"name": "ask"})
	var ir *InputRequired
	if !errors.As(err, &ir) || ir.State != "st-1" || len(ir.Requests) != 1 || !strings.Contains(string(ir.Requests["confirm"]), "elicitation/create") {
		t.Errorf("input required: %v", err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := u.Call(ctx, "tools/call", map[string]any{"name": "slow"})
		done <- err
	}()
	for s.count("tools/call") < 3 {
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	if err := recv(t, done, "the cancelled call"); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled call: %v", err)
	}
	recv(t, s.slowGone, "the server seeing the POST closed")
	time.Sleep(50 * time.Millisecond)
	if n := s.count("notifications/cancelled"); n != 0 {
		t.Errorf("%d notifications/cancelled POSTed: closing the stream is the cancel", n)
	}
}

// TestModernTTLRefresh: Refresh re-lists only a listing whose ttlMs has
// passed, and waits for it.
func TestModernTTLRefresh(t *testing.T) {
	old := minRelist
	minRelist = 0
	t.Cleanup(func() { minRelist = old })
	s := newModernServer(t)
	s.ttlMs, s.static = 3_600_000, true
	u := modernUpstream(t, s.url(), config.ProtocolAuto, Options{})
	if st, err := awaitSettled(t, u); st != StateReady {
		t.Fatalf("state %s: %v", st, err)
	}
	if err := u.Refresh(context.Background(), KindAll); err != nil {
		t.Fatal(err)
	}
	if n := s.count("tools/list"); n != 1 {
		t.Errorf("an hour's ttl: %d tools/list, want 1", n)
	}
	// A listing of ttl 0 that changed: Refresh shows the new tools.
	s.mu.Lock()
	s.ttlMs, s.tools = 0, `[{"name":"fresh","inputSchema":{"type":"object"}}]`
	s.mu.Unlock()
	u.mu.Lock()
	l := u.listed[KindTools]
	l.ttl = 0
	u.listed[KindTools] = l
	u.mu.Unlock()
	if err := u.Refresh(context.Background(), KindTools); err != nil {
		t.Fatal(err)
	}
	if tools := u.Tools(); len(tools) != 1 || tools[0].Name != "fresh" {
		t.Errorf("after Refresh: %+v", tools)
	}
	// The floor: with minRelist at a second, an immediate second Refresh
	// sends nothing.
	minRelist = time.Hour
	before := s.count("tools/list")
	if err := u.Refresh(context.Background(), KindTools); err != nil {
		t.Fatal(err)
	}
	if n := s.count("tools/list"); n != before {
		t.Errorf("Refresh within minRelist listed again (%d → %d)", before, n)
	}
}

// TestProbeVerdicts: each answer to server/discover over HTTP and the
// revision it leads to.
func TestProbeVerdicts(t *testing.T) {
	unsupported := func(supported string) func(http.ResponseWriter, json.RawMessage, int) bool {
		return func(w http.ResponseWriter, id json.RawMessage, n int) bool {
			if n > 1 {
				return false // the retry: answered as usual
			}
			e := wire.UnsupportedVersion("2026-07-28")
			e.Data = json.RawMessage(`{"supported":` + supported + `,"requested":"2026-07-28"}`)
			writeRPCError(w, id, e)
			return true
		}
	}
	for _, tc := range []struct {
		name      string
		protocol  string
		discover  func(http.ResponseWriter, json.RawMessage, int) bool
		initErr   bool // initialize answered 400 -32022 naming 2026-07-28
		version   string
		how       string
		discovers int
	}{
		{"modern", config.ProtocolAuto, nil, false, "2026-07-28", "server/discover", 1},
		{"-32022 retried", config.ProtocolAuto, unsupported(`["2026-07-28"]`), false, "2026-07-28", "server/discover", 2},
		{"-32022 no mutual", config.ProtocolAuto, unsupported(`["2099-01-01"]`), false, "2025-11-25", "initialize; discover: -32022", 1},
		{"-32601", config.ProtocolAuto, func(w http.ResponseWriter, id json.RawMessage, _ int) bool {
			writeRPCError(w, id, wire.MethodNotFound("server/discover"))
			return true
		}, false, "2025-11-25", "initialize; discover: -32601", 1},
		{"2025 error in a 200", config.ProtocolAuto, func(w http.ResponseWriter, id json.RawMessage, _ int) bool {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32600,"message":"Server not initialized"}}`, id)
			return true
		}, false, "2025-11-25", "initialize; discover: -32600 Server not initialized", 1},
		{"html 404", config.ProtocolAuto, func(w http.ResponseWriter, _ json.RawMessage, _ int) bool {
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprint(w, "<html><body>Not Found</body></html>")
			return true
		}, false, "2025-11-25", "initialize; discover: HTTP 404 Not Found: <html>", 1},
		{"4xx no body", config.ProtocolAuto, func(w http.ResponseWriter, _ json.RawMessage, _ int) bool {
			w.WriteHeader(http.StatusBadRequest)
			return true
		}, false, "2025-11-25", "initialize; discover: HTTP 400", 1},
		{"html 200", config.ProtocolAuto, func(w http.ResponseWriter, _ json.RawMessage, _ int) bool {
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, "<html></html>")
			return true
		}, false, "2025-11-25", "initialize; discover: invalid response", 1},
		{"no 2026 in supportedVersions", config.ProtocolAuto, func(w http.ResponseWriter, id json.RawMessage, _ int) bool {
			writeResult(w, id, `{"supportedVersions":["2025-11-25"],"capabilities":{}}`)
			return true
		}, false, "2025-11-25", "initialize; discover: supportedVersions [2025-11-25]", 1},
		{"initialize -32022 ⇒ modern", config.ProtocolAuto, func(w http.ResponseWriter, _ json.RawMessage, n int) bool {
			if n > 1 {
				return false
			}
			w.WriteHeader(http.StatusNotFound) // a front that lost the first probe
			return true
		}, true, "2026-07-28", "server/discover", 2},
		{"pinned 2025", config.Protocol2025, nil, false, "2025-11-25", `initialize; protocol = "2025-11-25"`, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newModernServer(t)
			s.discover = tc.discover
			s.legacy = legacyInit
			if tc.initErr {
				s.legacy = func(w http.ResponseWriter, m rpcMessage) bool {
					e := wire.UnsupportedVersion("2025-11-25")
					e.Data = json.RawMessage(`{"supported":["2026-07-28"],"requested":"2025-11-25"}`)
					writeRPCError(w, m.ID, e)
					return true
				}
			}
			u := modernUpstream(t, s.url(), tc.protocol, Options{})
			if st, err := awaitSettled(t, u); st != StateReady {
				t.Fatalf("state %s: %v", st, err)
			}
			p := u.Protocol()
			if p.Version != tc.version || !strings.HasPrefix(p.How, tc.how) {
				t.Errorf("protocol %q (%s), want %q (%s…)", p.Version, p.How, tc.version, tc.how)
			}
			if n := s.count("server/discover"); n != tc.discovers {
				t.Errorf("%d server/discover, want %d", n, tc.discovers)
			}
			tools := u.Tools()
			if len(tools) == 0 || (tc.version == wire.Revision20260728) != (tools[0].Name == "echo") {
				t.Errorf("tools %+v for %s", tools, tc.version)
			}
		})
	}
}

// TestProbePinnedModernRefused: protocol = "2026-07-28" with a 2025 server
// fails to start, saying why, instead of falling back.
func TestProbePinnedModernRefused(t *testing.T) {
	s := newModernServer(t)
	s.discover = func(w http.ResponseWriter, id json.RawMessage, _ int) bool {
		writeRPCError(w, id, wire.MethodNotFound("server/discover"))
		return true
	}
	s.legacy = legacyInit
	u := modernUpstream(t, s.url(), config.Protocol20260728, Options{})
	_, err := awaitSettled(t, u)
	if err == nil || !strings.Contains(err.Error(), `protocol = "2026-07-28"`) || !strings.Contains(err.Error(), "-32601") {
		t.Errorf("error %v", err)
	}
	if n := s.count("initialize"); n != 0 {
		t.Errorf("%d initialize with protocol pinned to 2026-07-28", n)
	}
}

// The stdio side: the test binary as a stdio server (envModernStdio names
// how it treats server/discover) counting its starts in envStarts' file.
const (
	envModernStdio = "UPSTREAM_TEST_MODERN_STDIO"
	envStarts      = "UPSTREAM_TEST_STARTS"
)

func init() {
	mode := os.Getenv(envModernStdio)
	if mode == "" {
		return
	}
	if f := os.Getenv(envStarts); f != "" {
		fh, _ := os.OpenFile(f, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		fmt.Fprintln(fh, os.Getpid())
		fh.Close()
	}
	modernStdioServer(mode)
	os.Exit(0)
}

// modernStdioServer: "modern" answers discover and checks every request's
// envelope; "ignore" never answers discover; "late" answers it after a
// second (after the probe gave up); "exit" exits on it — the starts after
// the first serve 2025 only.
func modernStdioServer(mode string) {
	in := bufio.NewReader(os.Stdin)
	out := bufio.NewWriter(os.Stdout)
	var mu sync.Mutex
	write := func(s string) {
		mu.Lock()
		out.WriteString(s + "\n")
		out.Flush()
		mu.Unlock()
	}
	for {
		line, err := in.ReadBytes('\n')
		if err != nil {
			return
		}
		var m rpcMessage
		if json.Unmarshal(line, &m) != nil || len(m.ID) == 0 {
			continue
		}
		res := func(r string) { write(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":%s}`, m.ID, r)) }
		if m.Method == "server/discover" {
			switch mode {
			case "ignore":
				continue
			case "exit":
				os.Exit(1)
			case "late":
				id := m.ID
				go func() {
					time.Sleep(time.Second)
					write(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"supportedVersions":["2026-07-28"],"capabilities":{"tools":{}}}}`, id))
				}()
				continue
			}
		}
		if mode == "modern" {
			if _, werr := wire.ParseEnvelope(m.Params); werr != nil {
				write(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":%d,"message":%q}}`, m.ID, werr.Code, werr.Message))
				continue
			}
		}
		switch {
		case m.Method == "server/discover" && mode == "modern":
			res(`{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"tools":{}},"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"stdio-modern","version":"1"}}}`)
		case m.Method == "initialize":
			if mode == "modern" {
				res(`null`)
				continue
			}
			res(`{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"old","version":"1"}}`)
		case m.Method == "tools/list":
			res(`{"tools":[{"name":"echo","inputSchema":{"type":"object"}},{"name":"ask","inputSchema":{"type":"object"}}],"ttlMs":1000}`)
		case m.Method == "tools/call":
			var p struct {
				Name string `json:"name"`
			}
			_ = json.Unmarshal(m.Params, &p)
			if p.Name == "ask" && mode == "modern" {
				res(`{"resultType":"input_required","inputRequests":{"r":{"method":"roots/list"}}}`)
				continue
			}
			b, _ := json.Marshal(string(m.Params))
			res(`{"content":[{"type":"text","text":` + string(b) + `}]}`)
		default:
			write(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"Method not found"}}`, m.ID))
		}
	}
}

// TestProbeStdio: the stdio verdicts, and that a legacy server that
// ignored (or answered late) the probe keeps its one process.
func TestProbeStdio(t *testing.T) {
	old := maxStdioProbe
	maxStdioProbe = 300 * time.Millisecond
	t.Cleanup(func() { maxStdioProbe = old })
	for _, tc := range []struct {
		mode, version, how string
		starts             int
	}{
		{"modern", "2026-07-28", "server/discover", 1},
		{"ignore", "2025-11-25", "initialize; discover: no answer within 300ms", 1},
		{"late", "2025-11-25", "initialize; discover: no answer within 300ms", 1},
		{"exit", "2025-11-25", "initialize; discover: the process exited", 2},
		{"2025 -32601", "2025-11-25", "initialize; discover: -32601 Method not found", 1},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			starts := filepath.Join(t.TempDir(), "starts")
			cfg := config.Server{Name: "s", Transport: config.TransportStdio, Cmd: []string{os.Args[0]}, Protocol: config.ProtocolAuto,
				Env: map[string]string{envModernStdio: tc.mode, envStarts: starts}, Timeout: 10 * time.Second,
				RestartMaxAttempts: config.NeverRestart, RestartBackoffMax: 100 * time.Millisecond} // a counted failure would be the end
			u := New(Options{Server: cfg, Logger: quietLogger()})
			u.Start(context.Background(), nil)
			t.Cleanup(u.Close)
			if st, err := awaitSettled(t, u); st != StateReady {
				t.Fatalf("state %s: %v", st, err)
			}
			if p := u.Protocol(); p.Version != tc.version || p.How != tc.how {
				t.Errorf("protocol %q (%s), want %q (%s)", p.Version, p.How, tc.version, tc.how)
			}
			ctx := WithClient(context.Background(), ClientMeta{Caps: json.RawMessage(`{"roots":{}}`)})
			res, err := u.Call(ctx, "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"a": 1}})
			if err != nil {
				t.Fatalf("echo: %v", err)
			}
			if text, _ := toolResultText(t, res); tc.version == wire.Revision20260728 != strings.Contains(text, `clientCapabilities":{"roots":{}}`) {
				t.Errorf("echoed params %s: envelope only to a modern upstream, with the caller's caps", text)
			}
			if tc.version == wire.Revision20260728 {
				_, err := u.Call(ctx, "tools/call", map[string]any{"name": "ask"})
				if ir, ok := errors.AsType[*InputRequired](err); !ok || !strings.Contains(string(ir.Requests["r"]), "roots/list") {
					t.Errorf("ask: %v", err)
				}
			}
			if tc.mode == "late" {
				time.Sleep(1200 * time.Millisecond) // the late answer came: nothing is confused
				if _, err := u.Call(ctx, "tools/call", map[string]any{"name": "echo"}); err != nil {
					t.Errorf("after the late answer: %v", err)
				}
			}
			b, _ := os.ReadFile(starts)
			if n := strings.Count(string(b), "\n"); n != tc.starts {
				t.Errorf("%d processes started, want %d", n, tc.starts)
			}
		})
	}
}

// TestModernListen: a modern upstream declaring listChanged gets one
// subscriptions/listen; its list_changed re-lists, a listing it covers is
// not re-listed for its ttl, a stream that ends is opened again, and a new
// resource subscription opens a new listen (before the old one closes).
func TestModernListen(t *testing.T) {
	old := minRelist
	minRelist = 0
	t.Cleanup(func() { minRelist = old })
	s := newModernServer(t)
	changed := make(chan struct{}, 10)
	u := modernUpstream(t, s.url(), config.ProtocolAuto, Options{OnListChanged: func(*Upstream) { changed <- struct{}{} }})
	if st, err := awaitSettled(t, u); st != StateReady {
		t.Fatalf("state %s: %v", st, err)
	}
	recv(t, changed, "the first listing")
	waitFor(t, "the listen stream acknowledged", func() bool {
		u.mu.Lock()
		defer u.mu.Unlock()
		return u.listening&KindTools != 0
	})
	lists := s.count("tools/list")
	if err := u.Refresh(context.Background(), KindTools); err != nil || s.count("tools/list") != lists {
		t.Errorf("Refresh of a listing the listen stream covers listed again (%v)", err)
	}
	s.mu.Lock()
	s.tools = `[{"name":"pushed","inputSchema":{"type":"object"}}]`
	s.mu.Unlock()
	s.push <- `{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":1}}}`
	recv(t, changed, "the re-listing after list_changed")
	if tools := u.Tools(); len(tools) != 1 || tools[0].Name != "pushed" {
		t.Errorf("tools after list_changed: %+v", tools)
	}
	s.endListen <- struct{}{}
	waitFor(t, "the listen stream reopened", func() bool { return s.count("subscriptions/listen") == 2 })

	if _, err := u.Call(context.Background(), "resources/subscribe", map[string]any{"uri": "file:///a"}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "a listen with the subscription", func() bool {
		reqs := s.seen()
		last := reqs[len(reqs)-1]
		for _, r := range reqs {
			if r.method == "subscriptions/listen" {
				last = r
			}
		}
		return strings.Contains(string(last.params), `"resourceSubscriptions":["file:///a"]`)
	})
	waitFor(t, "the old listen closed", func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.listening == 1
	})
	for _, r := range s.seen() {
		if r.method == "subscriptions/listen" && !strings.Contains(string(r.params), `"toolsListChanged":true`) {
			t.Errorf("listen params %s", r.params)
		}
	}
}

func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
