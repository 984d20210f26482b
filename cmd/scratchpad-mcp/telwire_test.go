package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testotlp"
	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testwait"
)

// telemetryConfig is a config with [telemetry] exporting to endpoint,
// serving /metrics on maddr and auditing to audit.jsonl, and one bearer
// token (owner alice).
func telemetryConfig(t *testing.T, endpoint, maddr, extra string) string {
	t.Helper()
	cfg, _ := writeConfig(t, `
[telemetry]
endpoint = "`+endpoint+`"
metrics_addr = "`+maddr+`"
audit_log = "audit.jsonl"
`+extra+`
[[http.tokens]]
owner = "alice"
token = "alice-token-0123456789"
`)
	return cfg
}

// aliceClient connects to base as alice, asking for version.
func aliceClient(t *testing.T, base, version string) *mcp.ClientSession {
	t.Helper()
	hc := &http.Client{Transport: headerTransport{map[string]string{"Authorization": "Bearer alice-token-0123456789"}, http.DefaultTransport}}
	c := connectWith(t, &mcp.StreamableClientTransport{Endpoint: base + "/mcp", HTTPClient: hc}, nil, version)
	t.Cleanup(func() { c.Close() })
	return c
}

func callMeta(t *testing.T, c *mcp.ClientSession, name string, args map[string]any, meta mcp.Meta) *mcp.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := c.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args, Meta: meta})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res
}

// scrape is the text of GET /metrics on maddr.
func scrape(t *testing.T, maddr string) string {
	t.Helper()
	resp, err := http.Get("http://" + maddr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// metricSum adds up the samples of the metric name (every label set).
func metricSum(text, name string) float64 {
	var sum float64
	re := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(name) + `(\{[^}]*\})? (\S+)$`)
	for _, m := range re.FindAllStringSubmatch(text, -1) {
		v, _ := strconv.ParseFloat(m[2], 64)
		sum += v
	}
	return sum
}

// spanOf waits for the span named name of kind in trace and returns it.
func spanOf(t *testing.T, rcv *testotlp.Receiver, name string, kind tracepb.Span_SpanKind, trace string) *tracepb.Span {
	t.Helper()
	var found *tracepb.Span
	testwait.Until(15*time.Second, func() bool {
		for _, s := range rcv.Got() {
			if s.Name == name && s.Kind == kind && testotlp.HexID(s.TraceId) == trace {
				found = s
				return true
			}
		}
		return false
	})
	if found == nil {
		var names []string
		for _, s := range rcv.Got() {
			names = append(names, s.Name+"@"+testotlp.HexID(s.TraceId))
		}
		t.Fatalf("no span %q in trace %s; got %v", name, trace, names)
	}
	return found
}

// TestTracesThroughTheBinary: a go-sdk client of either era calls tools
// with _meta.traceparent; the OTLP receiver gets the server span (named
// and attributed by the MCP conventions), the proxy's client span under
// it and the divert span of a diverted output, all in the client's
// trace, and an own tool's span (head over the stored output); the
// upstream receives _meta.traceparent of that trace whose
// parent is the client span; a malformed traceparent starts a new trace;
// /metrics has the operation histogram and the diverted tokens and
// passes promtool; the audit log has one line per tools/call and no
// argument value.
func TestTracesThroughTheBinary(t *testing.T) {
	rcv := testotlp.New(t, false)
	maddr := freeAddr(t)
	cfg := telemetryConfig(t, rcv.Srv.URL, maddr, "")
	base := startHTTP(t, "http", cfg)
	const parent = "00f067aa0ba902b7"
	const sentinel = "ARGUMENT-VALUE-SENTINEL"
	calls := 0
	for i, version := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(version, func(t *testing.T) {
			trace := "4bf92f3577b34da6a3ce929d0e0e473" + strconv.Itoa(i)
			tp := mcp.Meta{"traceparent": "00-" + trace + "-" + parent + "-01"}
			c := aliceClient(t, base, version)
			waitForTool(t, c, "echo_meta")

			got := map[string]any{}
			if err := json.Unmarshal([]byte(text(callMeta(t, c, "echo_meta", nil, tp))), &got); err != nil {
				t.Fatal(err)
			}
			upTP, _ := got["traceparent"].(string)
			parts := strings.Split(upTP, "-")
			if len(parts) != 4 || parts[1] != trace || parts[2] == parent {
				t.Fatalf("upstream _meta.traceparent %q: want trace %s, a parent of the proxy's", upTP, trace)
			}
			srv := spanOf(t, rcv, "tools/call echo_meta", tracepb.Span_SPAN_KIND_SERVER, trace)
			if testotlp.HexID(srv.ParentSpanId) != parent || srv.Kind != tracepb.Span_SPAN_KIND_SERVER {
				t.Errorf("server span: parent %s kind %v, want the client's %s, SERVER", testotlp.HexID(srv.ParentSpanId), srv.Kind, parent)
			}
			a := testotlp.Attrs(srv)
			if a["mcp.method.name"] != "tools/call" || a["gen_ai.tool.name"] != "echo_meta" || a["gen_ai.operation.name"] != "execute_tool" || a["mcp.protocol.version"] != version || a["scratchpad.upstream"] != "k8s" {
				t.Errorf("server span attributes: %v", a)
			}
			if _, has := a["mcp.session.id"]; has != (version != "2026-07-28") {
				t.Errorf("mcp.session.id present %v for %s: %v", has, version, a)
			}
			var client *tracepb.Span
			for _, s := range rcv.Got() {
				if s.Kind == tracepb.Span_SPAN_KIND_CLIENT && testotlp.HexID(s.TraceId) == trace && testotlp.HexID(s.ParentSpanId) == testotlp.HexID(srv.SpanId) {
					client = s
				}
			}
			if client == nil || client.Name != "tools/call echo_meta" || testotlp.HexID(client.SpanId) != parts[2] {
				t.Fatalf("client span under the server span: %v; the upstream's parent is %s", client, parts[2])
			}

			res := callMeta(t, c, "words", map[string]any{"n": 3000}, tp)
			if !strings.Contains(text(res), "scratchpad") {
				t.Fatalf("words 3000 not diverted: %.300s", text(res))
			}
			wsrv := spanOf(t, rcv, "tools/call words", tracepb.Span_SPAN_KIND_SERVER, trace)
			div := spanOf(t, rcv, "divert k8s/words", tracepb.Span_SPAN_KIND_INTERNAL, trace)
			if testotlp.HexID(div.ParentSpanId) != testotlp.HexID(wsrv.SpanId) || testotlp.IntAttr(div, "scratchpad.tokens.diverted") <= 0 || testotlp.Attrs(div)["scratchpad.file"] == "" {
				t.Errorf("divert span: parent %s (server %s), attributes %v", testotlp.HexID(div.ParentSpanId), testotlp.HexID(wsrv.SpanId), testotlp.Attrs(div))
			}

			// An own tool over the stored output: its span under its
			// server span, naming the file.
			file := testotlp.Attrs(div)["scratchpad.file"]
			if head := text(callMeta(t, c, "head", map[string]any{"file": file, "lines": 3}, tp)); head == "" {
				t.Fatal("head of the stored output: empty")
			}
			hsrv := spanOf(t, rcv, "tools/call head", tracepb.Span_SPAN_KIND_SERVER, trace)
			ex := spanOf(t, rcv, "explore head", tracepb.Span_SPAN_KIND_INTERNAL, trace)
			if testotlp.HexID(ex.ParentSpanId) != testotlp.HexID(hsrv.SpanId) || testotlp.Attrs(ex)["scratchpad.file"] != file || testotlp.IntAttr(ex, "scratchpad.tokens.charged") <= 0 {
				t.Errorf("explore span: parent %s (server %s), attributes %v", testotlp.HexID(ex.ParentSpanId), testotlp.HexID(hsrv.SpanId), testotlp.Attrs(ex))
			}

			bad := mcp.Meta{"traceparent": "00-zz" + trace[2:] + "-" + parent + "-01"}
			got = map[string]any{}
			if err := json.Unmarshal([]byte(text(callMeta(t, c, "echo_meta", nil, bad))), &got); err != nil {
				t.Fatal(err)
			}
			if fresh, _ := got["traceparent"].(string); !regexp.MustCompile(`^00-[0-9a-f]{32}-[0-9a-f]{16}-0[01]$`).MatchString(fresh) || strings.Contains(fresh, trace[2:]) {
				t.Errorf("a malformed traceparent: upstream got %q, want a new trace", fresh)
			}
			callMeta(t, c, "echo", map[string]any{"text": sentinel}, nil)
			calls += 5
		})
	}

	text := scrape(t, maddr)
	if metricSum(text, "mcp_server_operation_duration_seconds_count") < float64(calls) || !strings.Contains(text, "mcp_server_operation_duration_seconds_bucket{") {
		t.Errorf("no operation-duration histogram of %d calls:\n%s", calls, text)
	}
	if metricSum(text, "scratchpad_tokens_diverted_total") <= 0 || metricSum(text, "mcp_client_operation_duration_seconds_count") <= 0 {
		t.Errorf("diverted tokens or client durations missing:\n%s", text)
	}
	if path, err := exec.LookPath("promtool"); err == nil {
		cmd := exec.Command(path, "check", "metrics")
		cmd.Stdin = strings.NewReader(text)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("promtool check metrics: %v\n%s", err, out)
		}
	} else if ci, _ := strconv.ParseBool(os.Getenv("CI")); ci {
		t.Fatal("promtool is not installed (Debian package prometheus)")
	}

	// The audit writer is asynchronous: wait for every line.
	audit := filepath.Join(filepath.Dir(cfg), "audit.jsonl")
	var lines []map[string]any
	var raw []byte
	testwait.Until(10*time.Second, func() bool {
		raw, _ = os.ReadFile(audit)
		lines = nil
		sc := bufio.NewScanner(strings.NewReader(string(raw)))
		for sc.Scan() {
			var m map[string]any
			if json.Unmarshal(sc.Bytes(), &m) == nil {
				lines = append(lines, m)
			}
		}
		return len(lines) >= calls
	})
	if len(lines) != calls {
		t.Fatalf("audit: %d lines for %d tools/call:\n%s", len(lines), calls, raw)
	}
	if strings.Contains(string(raw), sentinel) {
		t.Errorf("the audit log holds an argument value:\n%s", raw)
	}
	diverted := 0
	for _, l := range lines {
		wantServer := "k8s"
		if l["tool"] == "head" {
			wantServer = "" // an own tool
		}
		if server, _ := l["server"].(string); l["owner"] != "alice" || l["outcome"] != "ok" || l["tool"] == "" || server != wantServer || l["trace_id"] == "" || l["agent"] == "" {
			t.Errorf("audit line %v", l)
		}
		if l["tool"] == "words" {
			if n, _ := l["tokens_diverted"].(float64); n > 0 && l["diverted_file"] != "" {
				diverted++
			}
		} else if n, _ := l["tokens_out"].(float64); n <= 0 {
			t.Errorf("audit line of a passed-through result without tokens_out: %v", l)
		}
	}
	if diverted != 2 {
		t.Errorf("%d audit lines of a diverted words, want 2:\n%s", diverted, raw)
	}
}

// TestUnreachableOTLPEndpoint: an endpoint that takes connections and
// never answers neither fails calls nor holds them: once the exporter
// hangs on its first batch, with a queue of 1, the spans of 20 calls are
// dropped and counted while every call is answered.
func TestUnreachableOTLPEndpoint(t *testing.T) {
	rcv := testotlp.New(t, true)
	maddr := freeAddr(t)
	cfg := telemetryConfig(t, rcv.Srv.URL, maddr, "queue_size = 1\nexport_timeout = \"30s\"\n")
	base := startHTTP(t, "http", cfg)
	c := aliceClient(t, base, "2025-11-25")
	waitForTool(t, c, "echo")
	select {
	case <-rcv.Started: // the exporter now hangs on its first batch
	case <-time.After(10 * time.Second):
		t.Fatal("no export reached the endpoint")
	}
	for i := range 20 {
		if got := text(callMeta(t, c, "echo", map[string]any{"text": "x" + strconv.Itoa(i)}, nil)); got != "x"+strconv.Itoa(i) {
			t.Fatalf("call %d: %q", i, got)
		}
	}
	if n := metricSum(scrape(t, maddr), "scratchpad_telemetry_spans_dropped_total"); n < 10 {
		t.Errorf("spans dropped %v, want most of the 40 or more ended while the exporter hangs (a server and a client span per call)", n)
	}
}

// TestRequestIDOnSpans: a 2025 request's server span names its id as
// the client sent it (jsonrpc.request.id), on every transport: go-sdk
// keeps the id only in its handler's context, and over stdio and SSE
// hands the handler nothing of the request's own, so the ids the
// connection admitted (ids.go) name it. An id go-sdk would not answer as
// sent (1.50, 2^53+1), which it sees under an internal id, is named as
// sent too.
func TestRequestIDOnSpans(t *testing.T) {
	ids := []string{`"req-7"`, `1.50`, `9007199254740993`, `12`}
	want := map[string]bool{"req-7": true, "1.50": true, "9007199254740993": true, "12": true}
	for _, kind := range wireTransports {
		t.Run(kind, func(t *testing.T) {
			rcv := testotlp.New(t, false)
			cfg, _ := writeConfig(t, "\n[telemetry]\nendpoint = \""+rcv.Srv.URL+"\"\n")
			c := dialWire(t, kind, cfg)
			c.initialize(t)
			for _, id := range ids {
				c.send(t, `{"jsonrpc":"2.0","id":`+id+`,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}`)
				if got := c.next(t); !strings.HasPrefix(got, `{"jsonrpc":"2.0","id":`+id+`,"result":`) {
					t.Fatalf("call %s answered %.200s", id, got)
				}
			}
			got := map[string]bool{}
			testwait.Until(15*time.Second, func() bool {
				for _, s := range rcv.Got() {
					if s.Name == "tools/call echo" && s.Kind == tracepb.Span_SPAN_KIND_SERVER {
						got[testotlp.Attrs(s)["jsonrpc.request.id"]] = true
					}
				}
				return len(got) >= len(want)
			})
			for id := range want {
				if !got[id] {
					t.Errorf("no tools/call echo span with jsonrpc.request.id %q; got %v", id, got)
				}
			}
		})
	}
}
