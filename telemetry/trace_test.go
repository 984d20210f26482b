package telemetry

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/scratchpad-mcp/scratchpad-mcp/config"
)

// env is a fixed environment, so that the machine's OTEL_* variables
// never reach a test.
func env(vars map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := vars[k]; return v, ok }
}

func openTest(t *testing.T, cfg config.Telemetry, vars map[string]string) *Provider {
	t.Helper()
	if cfg.Protocol == "" {
		cfg.Protocol = config.ProtocolHTTPProtobuf
	}
	p, err := Open(context.Background(), cfg, Options{Version: "test", LookupEnv: env(vars), FlushInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if p == nil {
		t.Fatal("Open returned nil for a configured section")
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = p.Close(ctx)
	})
	return p
}

func flush(t *testing.T, p *Provider) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := p.Flush(ctx); err != nil {
		t.Fatal(err)
	}
}

const (
	clientTrace  = "4bf92f3577b34da6a3ce929d0e0e4736"
	clientParent = "00f067aa0ba902b7"
)

// TestSpansContinueTheClientsTrace: a tools/call with the client's
// traceparent in _meta gives a server span in the client's trace, a
// client span under it whose context Inject writes into the upstream's
// _meta, and the divert and explore spans under those, all named and
// attributed by the MCP conventions; the receiver decodes them from
// OTLP/HTTP protobuf.
func TestSpansContinueTheClientsTrace(t *testing.T) {
	rcv := newReceiver(t, false)
	p := openTest(t, config.Telemetry{}, map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": rcv.Srv.URL, "OTEL_SERVICE_NAME": "sp-test"})
	if !p.Tracing() {
		t.Fatal("OTEL_EXPORTER_OTLP_ENDPOINT did not turn tracing on")
	}
	ctx, srv := p.StartServer(context.Background(), Op{
		Method: "tools/call", Target: "github_search", SessionID: "sess-1", ProtocolVersion: "2025-06-18", RequestID: "7",
		Meta:      map[string]any{"traceparent": "00-" + clientTrace + "-" + clientParent + "-01", "tracestate": "vendor=x", "progressToken": 3},
		Arguments: []byte(`{"q":"secret"}`),
	})
	cctx, cli := p.StartClient(ctx, Op{Method: "tools/call", Target: "search", Server: "github", RequestID: "41"})
	upstreamMeta := map[string]any{"traceparent": "00-" + clientTrace + "-" + clientParent + "-01", "tracestate": "stale=1", "progressToken": 9}
	p.Inject(cctx, upstreamMeta)
	if upstreamMeta["tracestate"] != "vendor=x" || upstreamMeta["progressToken"] != 9 {
		t.Errorf("upstream _meta after Inject: %v", upstreamMeta)
	}
	// A context without a span writes nothing.
	untouched := map[string]any{"traceparent": "x"}
	p.Inject(context.Background(), untouched)
	if untouched["traceparent"] != "x" {
		t.Errorf("Inject without a span wrote %v", untouched)
	}
	cli.End(Outcome{})
	_, dv := p.StartDivert(ctx, "github", "search")
	dv.SetTokens(Tokens{Counted: 48000, Diverted: 48000, Charged: 120, BudgetLeft: 90000})
	dv.SetFile("scratchpad/github-search-1.json")
	dv.End(Outcome{})
	_, ex := p.StartExplore(ctx, "grep", "scratchpad/github-search-1.json")
	ex.End(Outcome{})
	srv.End(Outcome{IsError: true})
	if srv.TraceID() != clientTrace {
		t.Errorf("TraceID = %q, want the client's %s", srv.TraceID(), clientTrace)
	}
	flush(t, p)

	s := rcv.ByName("tools/call github_search")
	if s == nil {
		t.Fatalf("no server span named %q; got %d spans", "tools/call github_search", len(rcv.Got()))
	}
	if hexID(s.TraceId) != clientTrace || hexID(s.ParentSpanId) != clientParent {
		t.Errorf("server span trace %s parent %s, want %s %s", hexID(s.TraceId), hexID(s.ParentSpanId), clientTrace, clientParent)
	}
	if s.TraceState != "vendor=x" {
		t.Errorf("tracestate %q", s.TraceState)
	}
	a := attrs(s)
	for k, v := range map[string]string{"mcp.method.name": "tools/call", "gen_ai.tool.name": "github_search", "gen_ai.operation.name": "execute_tool",
		"mcp.session.id": "sess-1", "mcp.protocol.version": "2025-06-18", "jsonrpc.request.id": "7", "error.type": "tool_error"} {
		if a[k] != v {
			t.Errorf("server span %s = %q, want %q", k, a[k], v)
		}
	}
	if _, ok := a["scratchpad.arguments"]; ok {
		t.Error("arguments recorded without record_arguments")
	}
	if rcv.Service() != "sp-test" {
		t.Errorf("service.name %q, want OTEL_SERVICE_NAME's", rcv.Service())
	}
	c := rcv.ByName("tools/call search")
	if c == nil || hexID(c.ParentSpanId) != hexID(s.SpanId) || hexID(c.TraceId) != clientTrace {
		t.Fatalf("client span %v not a child of the server span", c)
	}
	if want := "00-" + clientTrace + "-" + hexID(c.SpanId) + "-01"; upstreamMeta["traceparent"] != want {
		t.Errorf("upstream _meta.traceparent = %v, want the client span's %s", upstreamMeta["traceparent"], want)
	}
	if attrs(c)["scratchpad.upstream"] != "github" || c.Kind.String() != "SPAN_KIND_CLIENT" {
		t.Errorf("client span: %v %v", attrs(c), c.Kind)
	}
	d := rcv.ByName("divert github/search")
	if d == nil || hexID(d.ParentSpanId) != hexID(s.SpanId) {
		t.Fatalf("divert span %v", d)
	}
	for k, v := range map[string]int64{"scratchpad.tokens.counted": 48000, "scratchpad.tokens.diverted": 48000, "scratchpad.tokens.charged": 120, "scratchpad.budget.remaining": 90000} {
		if got := intAttr(d, k); got != v {
			t.Errorf("divert span %s = %d, want %d", k, got, v)
		}
	}
	if attrs(d)["scratchpad.file"] != "scratchpad/github-search-1.json" {
		t.Errorf("divert span file: %v", attrs(d))
	}
	if e := rcv.ByName("explore grep"); e == nil || attrs(e)["scratchpad.file"] == "" {
		t.Errorf("explore span %v", e)
	}
}

// TestMalformedTraceparentStartsATrace: a traceparent that is not one
// (wrong version, zero ids, bad hex, not a string) is ignored: the span
// starts its own trace, with no parent.
func TestMalformedTraceparentStartsATrace(t *testing.T) {
	rcv := newReceiver(t, false)
	p := openTest(t, config.Telemetry{Endpoint: rcv.Srv.URL}, nil)
	for i, tp := range []any{
		"garbage",
		"00-00000000000000000000000000000000-" + clientParent + "-01",
		"00-" + clientTrace + "-0000000000000000-01",
		"ff-" + clientTrace + "-" + clientParent + "-01",
		"00-" + strings.ToUpper(clientTrace) + "-" + clientParent + "-01x",
		"00-zz" + clientTrace[2:] + "-" + clientParent + "-01",
		42,
	} {
		_, s := p.StartServer(context.Background(), Op{Method: "tools/call", Target: "t" + string(rune('a'+i)), Meta: map[string]any{"traceparent": tp}})
		if s.TraceID() == "" || s.TraceID() == clientTrace {
			t.Errorf("%v: trace id %q, want a new one", tp, s.TraceID())
		}
		s.End(Outcome{})
	}
	flush(t, p)
	spans := rcv.Got()
	if len(spans) != 7 {
		t.Fatalf("%d spans, want 7", len(spans))
	}
	for _, s := range spans {
		if len(s.ParentSpanId) != 0 {
			t.Errorf("%s has parent %s", s.Name, hexID(s.ParentSpanId))
		}
	}
}

// TestBlockedEndpointNeverSlowsACall: with an endpoint that takes the
// connection and never answers, spans keep ending at once (the calls
// below return while the exporter is stuck in its first request) and
// the ones the bounded queue cannot hold are dropped and counted, in
// DroppedSpans and in the metric.
func TestBlockedEndpointNeverSlowsACall(t *testing.T) {
	rcv := newReceiver(t, true)
	p := openTest(t, config.Telemetry{Endpoint: rcv.Srv.URL, QueueSize: 8, ExportTimeout: time.Minute, MetricsAddr: "127.0.0.1:0"}, nil)
	// First span, then a flush in the background: the exporter is now
	// inside a request the receiver holds.
	_, s := p.StartServer(context.Background(), Op{Method: "tools/call", Target: "first"})
	s.End(Outcome{})
	go func() { _ = p.Flush(context.Background()) }()
	select {
	case <-rcv.Started:
	case <-time.After(10 * time.Second):
		t.Fatal("the exporter never reached the endpoint")
	}
	for range 200 {
		ctx, s := p.StartServer(context.Background(), Op{Method: "tools/call", Target: "x"})
		_, c := p.StartClient(ctx, Op{Method: "tools/call", Target: "x", Server: "up"})
		p.Inject(ctx, map[string]any{})
		c.End(Outcome{Err: errors.New("boom"), ErrorType: "timeout"})
		s.End(Outcome{})
	}
	if got := p.DroppedSpans(); got < 400-8 {
		t.Fatalf("DroppedSpans = %d, want at least %d (queue of 8)", got, 400-8)
	}
	text := scrape(t, p)
	if !strings.Contains(text, "scratchpad_telemetry_spans_dropped_total ") || strings.Contains(text, "scratchpad_telemetry_spans_dropped_total 0\n") {
		t.Errorf("the dropped-spans metric does not show the drops:\n%s", grepLines(text, "dropped"))
	}
	close(rcv.Block)
}

// TestUnreachableEndpoint: nothing listening at all: Open does not dial,
// calls go on, Close returns within its deadline.
func TestUnreachableEndpoint(t *testing.T) {
	p := openTest(t, config.Telemetry{Endpoint: "http://127.0.0.1:1", ExportTimeout: time.Second}, nil)
	for range 50 {
		_, s := p.StartServer(context.Background(), Op{Method: "tools/list"})
		s.End(Outcome{})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = p.Flush(ctx) // the export fails; Flush returns
	if ctx.Err() != nil {
		t.Fatal("Flush did not return before its deadline")
	}
}

// TestOff: no endpoint, no metrics_addr, no audit_log and no OTEL_*
// variables: Open returns a provider that exports and writes nothing
// (it keeps the recent calls for the dashboard), and every call on a nil
// provider and its nil spans is a no-op that allocates nothing.
func TestOff(t *testing.T) {
	for _, tc := range []struct {
		name string
		vars map[string]string
		cfg  config.Telemetry
	}{
		{"empty", nil, config.Telemetry{}},
		{"sdk disabled", map[string]string{"OTEL_SDK_DISABLED": "true", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}, config.Telemetry{MetricsAddr: "127.0.0.1:0"}},
		{"exporters none", map[string]string{"OTEL_TRACES_EXPORTER": "none", "OTEL_METRICS_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}, config.Telemetry{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Open(context.Background(), tc.cfg, Options{LookupEnv: env(tc.vars)})
			if err != nil || p == nil || p.tracer != nil || p.m != nil || p.audit != nil || p.MetricsHandler() != nil {
				t.Fatalf("Open = %+v, %v; want a provider with no tracer, metrics or audit log", p, err)
			}
			// It still keeps the calls the dashboard draws.
			ctx, s := p.StartServer(context.Background(), Op{Method: "tools/call", Target: "x"})
			s.End(Outcome{})
			_ = ctx
			p.Audit(Record{Tool: "x"})
			if calls := p.Calls(""); len(calls) != 1 {
				t.Errorf("recent calls: %d, want 1", len(calls))
			}
		})
	}
	var p *Provider
	meta := map[string]any{"traceparent": "00-" + clientTrace + "-" + clientParent + "-01"}
	allocs := testing.AllocsPerRun(100, func() {
		ctx, s := p.StartServer(context.Background(), Op{Method: "tools/call", Target: "x", Meta: meta})
		ctx, c := p.StartClient(ctx, Op{Method: "tools/call"})
		p.Inject(ctx, meta)
		c.SetTokens(Tokens{Counted: 1})
		c.End(Outcome{})
		p.RecordTokens(ctx, Usage{Diverted: 1})
		p.BudgetRemaining(ctx, "", "a", 1)
		p.Audit(Record{Tool: "x"})
		s.End(Outcome{})
	})
	if allocs != 0 {
		t.Errorf("telemetry off allocates %v per call", allocs)
	}
	if p.MetricsHandler() != nil || p.Calls("") != nil || p.Close(context.Background()) != nil {
		t.Error("a nil provider did something")
	}
}

// TestOpenErrors: what Open refuses, with its sentinel.
func TestOpenErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  config.Telemetry
		vars map[string]string
		want error
	}{
		{"http/json from the environment", config.Telemetry{}, map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"}, ErrProtocol},
		{"signal's protocol", config.Telemetry{}, map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "thrift"}, ErrProtocol},
		{"grpc from the environment", config.Telemetry{}, map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4317", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, ErrProtocol},
		{"plain http off loopback", config.Telemetry{Endpoint: "http://collector.example:4318"}, nil, ErrInsecureEndpoint},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Open(context.Background(), tc.cfg, Options{LookupEnv: env(tc.vars)})
			if !errors.Is(err, tc.want) {
				t.Fatalf("Open: %v, want %v", err, tc.want)
			}
			// gRPC is no longer built in: the error says what to use.
			if tc.vars["OTEL_EXPORTER_OTLP_PROTOCOL"] == "grpc" && !strings.Contains(err.Error(), `OTEL_EXPORTER_OTLP_PROTOCOL="grpc": OTLP over gRPC is no longer built in; use "http/protobuf"`) {
				t.Errorf("the grpc error does not say what to use: %v", err)
			}
		})
	}
	p := openTest(t, config.Telemetry{Endpoint: "http://collector.example:4318", Insecure: true}, nil)
	if !p.Tracing() {
		t.Error("insecure = true did not allow the endpoint")
	}
}

// TestRecordArguments: with record_arguments the span carries the
// arguments, cut to 4 KiB.
func TestRecordArguments(t *testing.T) {
	rcv := newReceiver(t, false)
	p := openTest(t, config.Telemetry{Endpoint: rcv.Srv.URL, RecordArguments: true}, nil)
	big := `{"q":"` + strings.Repeat("é", 5000) + `"}`
	_, s := p.StartServer(context.Background(), Op{Method: "tools/call", Target: "a", Arguments: []byte(`{"q":"x"}`)})
	s.End(Outcome{})
	_, s = p.StartServer(context.Background(), Op{Method: "tools/call", Target: "b", Arguments: []byte(big)})
	s.End(Outcome{})
	flush(t, p)
	if got := attrs(rcv.ByName("tools/call a"))["scratchpad.arguments"]; got != `{"q":"x"}` {
		t.Errorf("arguments %q", got)
	}
	if got := attrs(rcv.ByName("tools/call b"))["scratchpad.arguments"]; len(got) > maxArgumentBytes || len(got) < maxArgumentBytes-1 || !strings.HasPrefix(got, `{"q":"éé`) {
		t.Errorf("long arguments: %d bytes", len(got))
	}
}
