package telemetry

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/scratchpad-mcp/scratchpad-mcp/config"
	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testwait"
)

func scrape(t *testing.T, p *Provider) string {
	t.Helper()
	h := p.MetricsHandler()
	if h == nil {
		t.Fatal("no metrics handler")
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if rec.Code != 200 || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/plain; version=0.0.4") {
		t.Fatalf("metrics: %d %q", rec.Code, rec.Header().Get("Content-Type"))
	}
	return rec.Body.String()
}

func grepLines(text, sub string) string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// skipOrFail skips when a peer program is missing, but fails under
// CI=true: CI must run every test (the rule of e2e's skipOrFail).
func skipOrFail(t *testing.T, format string, args ...any) {
	t.Helper()
	if ci, _ := strconv.ParseBool(os.Getenv("CI")); ci {
		t.Fatalf(format+" (CI=true: a missing peer fails the run instead of skipping it)", args...)
	}
	t.Skipf(format, args...)
}

// promtool is the path of Prometheus's promtool (Debian package
// prometheus, scripts/deps.sh).
func promtool(t *testing.T) string {
	t.Helper()
	for _, p := range []string{"promtool", "/usr/bin/promtool"} {
		if path, err := exec.LookPath(p); err == nil {
			return path
		}
	}
	skipOrFail(t, "promtool is not installed (Debian package prometheus; scripts/deps.sh installs it)")
	return ""
}

// TestPrometheusText: after calls of every kind, the metrics endpoint's
// text has the conventions' operation-duration histograms (buckets
// reaching an hour), the session histogram and our counters, and
// promtool check metrics accepts it (its lint included).
func TestPrometheusText(t *testing.T) {
	p := openTest(t, config.Telemetry{MetricsAddr: "127.0.0.1:0"}, nil)
	ctx := context.Background()
	for i := range 3 {
		sctx, s := p.StartServer(ctx, Op{Method: "tools/call", Target: "github_search", ProtocolVersion: "2025-06-18", Owner: "team-a", Server: "github"})
		_, c := p.StartClient(sctx, Op{Method: "tools/call", Target: "search", Server: "github"})
		c.End(Outcome{})
		s.End(Outcome{IsError: i == 2})
	}
	p.RecordTokens(ctx, Usage{Server: "github", Tool: "search", Owner: "team-a", Diverted: 48000, Charged: 200})
	p.RecordTokens(ctx, Usage{Server: "github", Tool: "get_issue", Owner: "team-a", PassedThrough: 900, Charged: 900})
	p.RecordTokens(ctx, Usage{Tool: "grep", Owner: "team-a", Extracted: 300, Charged: 300})
	p.RecordTokens(ctx, Usage{Server: "fs", Tool: "write_file", Owner: "team-a", ByReference: 512000, Charged: 12})
	p.BudgetRemaining(ctx, "team-a", "worker-1", 120000)
	p.UpstreamRestarted(ctx, "github")
	p.Refused(ctx, "budget", "team-a")
	p.SessionEnded(ctx, 90*time.Second, "2025-06-18")
	text := scrape(t, p)
	for _, want := range []string{
		"# TYPE mcp_server_operation_duration_seconds histogram",
		`mcp_server_operation_duration_seconds_bucket{gen_ai_tool_name="github_search",mcp_method_name="tools/call",mcp_protocol_version="2025-06-18",owner="team-a",server="github",le="3600"} 2`,
		`error_type="tool_error"`,
		"# TYPE mcp_client_operation_duration_seconds histogram",
		"mcp_server_session_duration_seconds_count",
		`scratchpad_tokens_diverted_total{owner="team-a",server="github",tool="search"} 48000`,
		`scratchpad_tokens_passed_through_total{owner="team-a",server="github",tool="get_issue"} 900`,
		`scratchpad_tokens_extracted_total{owner="team-a",server="",tool="grep"} 300`,
		`scratchpad_tokens_by_reference_total{owner="team-a",server="fs",tool="write_file"} 512000`,
		`scratchpad_budget_remaining{agent="worker-1",owner="team-a"} 120000`,
		`scratchpad_upstream_restarts_total{server="github"} 1`,
		`scratchpad_refusals_total{kind="budget",owner="team-a"} 1`,
		"scratchpad_telemetry_spans_dropped_total 0",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	if t.Failed() {
		t.Logf("metrics:\n%s", text)
	}
	cmd := exec.Command(promtool(t), "check", "metrics")
	cmd.Stdin = strings.NewReader(text)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("promtool check metrics: %v\n%s\n--- input\n%s", err, out, text)
	}
}

// TestLabelsBounded: however many distinct tools and agents come, a
// label keeps at most its cap of values and the rest are "other"; file
// names and argument values are no label at all.
func TestLabelsBounded(t *testing.T) {
	p := openTest(t, config.Telemetry{MetricsAddr: "127.0.0.1:0"}, nil)
	ctx := context.Background()
	for i := range maxTools + 100 {
		p.RecordTokens(ctx, Usage{Server: "s", Tool: fmt.Sprintf("tool-%d", i), Diverted: 1})
	}
	for i := range maxAgents + 50 {
		p.BudgetRemaining(ctx, "", fmt.Sprintf("agent-%d", i), i)
	}
	p.RecordTokens(ctx, Usage{Server: "s", Tool: strings.Repeat("x", maxLabel+1), Diverted: 1})
	text := scrape(t, p)
	series := func(prefix string) int { return strings.Count(text, "\n"+prefix+"{") }
	if n := series("scratchpad_tokens_diverted_total"); n != maxTools+1 {
		t.Errorf("%d diverted series, want %d (cap plus other)", n, maxTools+1)
	}
	if want := fmt.Sprintf(`scratchpad_tokens_diverted_total{owner="",server="s",tool="other"} %d`, 100+1); !strings.Contains(text, want) {
		t.Errorf("no %s", want)
	}
	if n := series("scratchpad_budget_remaining"); n != maxAgents+1 {
		t.Errorf("%d budget series, want %d", n, maxAgents+1)
	}
}

// TestAuditLog: one JSON line per call in a 0600 file, appended to, no
// argument values; ReadAudit reads them back; the dashboard's Calls sees
// only the owner's own.
func TestAuditLog(t *testing.T) {
	path := t.TempDir() + "/logs/audit.jsonl" // its folder is made
	for round := range 2 {
		p, err := Open(context.Background(), config.Telemetry{AuditLog: path}, Options{LookupEnv: env(nil)})
		if err != nil {
			t.Fatal(err)
		}
		p.Audit(Record{Owner: "a", Agent: "w1", Run: "r1", Role: "worker", Server: "github", Tool: "search", Outcome: OutcomeText(Outcome{}),
			TokensIn: 48000, TokensOut: 120, Diverted: 48000, File: "scratchpad/x.json", DurationMS: 812.5, TraceID: clientTrace})
		p.Audit(Record{Owner: "b", Tool: "grep", Outcome: OutcomeText(Outcome{IsError: true})})
		p.Audit(Record{Owner: "a", Agent: "w1", Server: "fs", Tool: "write_file", Outcome: "ok", TokensIn: 12, TokensOut: 12,
			ByReference: 512000, Referenced: []string{"github-search-1a2b3c4d.json", "notes.md"}})
		if got := p.Calls("a"); len(got) != 2 || got[0].Owner != "a" {
			t.Errorf("Calls(a) = %+v", got)
		}
		if err := p.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
		recs, err := ReadAudit(path)
		if err != nil || len(recs) != 3*(round+1) {
			t.Fatalf("round %d: %d records, %v", round, len(recs), err)
		}
	}
	st, err := os.Stat(path)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("audit file mode %v, %v", st.Mode(), err)
	}
	raw, _ := os.ReadFile(path)
	first := strings.SplitN(string(raw), "\n", 2)[0]
	want := `{"time":"`
	if !strings.HasPrefix(first, want) || !strings.Contains(first, `"owner":"a","agent":"w1","run":"r1","role":"worker","server":"github","tool":"search","outcome":"ok","tokens_in":48000,"tokens_out":120,"tokens_diverted":48000,"diverted_file":"scratchpad/x.json","duration_ms":812.5,"trace_id":"`+clientTrace+`"}`) {
		t.Errorf("line: %s", first)
	}
	// Referenced files by name, the tokens they took; never their content.
	if !strings.Contains(string(raw), `"tokens_by_reference":512000,"referenced_files":["github-search-1a2b3c4d.json","notes.md"]`) {
		t.Errorf("no reference figures: %s", raw)
	}
	if !strings.Contains(string(raw), `"outcome":"tool_error"`) {
		t.Errorf("tool error outcome missing: %s", raw)
	}
}

// stuckWriter never returns from Write until released: a disk or pipe
// that stopped taking bytes.
type stuckWriter struct {
	entered chan struct{}
	release chan struct{}
}

func (w *stuckWriter) Write(b []byte) (int, error) {
	select {
	case w.entered <- struct{}{}:
	default:
	}
	<-w.release
	return 0, errors.New("disk full")
}

// TestAuditNeverBlocks: with a writer stuck in its first line, Audit
// keeps returning; what the bounded queue cannot hold is counted, in
// DroppedAudit and the metric.
func TestAuditNeverBlocks(t *testing.T) {
	w := &stuckWriter{entered: make(chan struct{}, 1), release: make(chan struct{})}
	p, err := Open(context.Background(), config.Telemetry{AuditLog: config.AuditStderr, QueueSize: 4, MetricsAddr: "127.0.0.1:0"}, Options{LookupEnv: env(nil), Stderr: w})
	if err != nil {
		t.Fatal(err)
	}
	p.Audit(Record{Tool: "first"})
	<-w.entered
	for range 100 {
		p.Audit(Record{Tool: "x"})
	}
	if got := p.DroppedAudit(); got != 100-4 {
		t.Errorf("DroppedAudit = %d, want %d", got, 100-4)
	}
	if text := scrape(t, p); !strings.Contains(text, "scratchpad_telemetry_audit_dropped_total 96") {
		t.Errorf("metric: %s", grepLines(text, "audit_dropped"))
	}
	close(w.release)
	if err := p.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	// Each failed write counts too: the first and the four queued.
	if got := p.DroppedAudit(); got != 101 {
		t.Errorf("after close DroppedAudit = %d, want 101", got)
	}
}

// TestMetricsOverOTLP: with an endpoint, the same instruments are pushed
// over OTLP/HTTP; Close sends the last collection.
func TestMetricsOverOTLP(t *testing.T) {
	rcv := newReceiver(t, false)
	p, err := Open(context.Background(), config.Telemetry{Endpoint: rcv.Srv.URL}, Options{LookupEnv: env(nil), MetricInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	_, s := p.StartServer(ctx, Op{Method: "tools/call", Target: "t"})
	s.End(Outcome{})
	p.RecordTokens(ctx, Usage{Server: "s", Tool: "t", Diverted: 10})
	if err := p.Close(ctx); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"mcp.server.operation.duration", MetricTokensDiverted, MetricSpansDropped} {
		if rcv.Metric(name) == 0 {
			t.Errorf("no %s received over OTLP", name)
		}
	}
}

// TestAuditRotates: past audit_max_bytes the file becomes .1 and a new
// one starts; no line is lost or split.
func TestAuditRotates(t *testing.T) {
	path := t.TempDir() + "/audit.jsonl"
	p, err := Open(context.Background(), config.Telemetry{AuditLog: path, AuditMaxBytes: 1000}, Options{LookupEnv: env(nil)})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 30 {
		p.Audit(Record{Tool: fmt.Sprintf("t%02d", i), Outcome: "ok"})
	}
	if err := p.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	cur, err := ReadAudit(path)
	if err != nil {
		t.Fatal(err)
	}
	old, err := ReadAudit(path + ".1")
	if err != nil {
		t.Fatal(err)
	}
	st, _ := os.Stat(path)
	if st.Size() > 1000 || len(cur) == 0 || len(old) == 0 || cur[len(cur)-1].Tool != "t29" || st.Mode().Perm() != 0o600 {
		t.Fatalf("current %d bytes, %d records (last %v), rotated %d", st.Size(), len(cur), cur, len(old))
	}
	if old[len(old)-1].Tool != fmt.Sprintf("t%02d", 29-len(cur)) {
		t.Errorf("a line lost between the files: rotated ends %s, current starts %s", old[len(old)-1].Tool, cur[0].Tool)
	}
}

// TestOpenFailsCleanly: an Open that fails part way (an audit_log that
// cannot be opened; a metrics protocol that does not exist, after the
// span queue started) says what is wrong and leaves no goroutine running.
func TestOpenFailsCleanly(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(dir+"/file", nil, 0o600); err != nil {
		t.Fatal(err)
	}
	rcv := newReceiver(t, false)
	for _, tc := range []struct {
		name string
		cfg  config.Telemetry
		vars map[string]string
		want string
	}{
		{"audit log", config.Telemetry{Endpoint: rcv.Srv.URL, MetricsAddr: "127.0.0.1:0", AuditLog: dir + "/file/audit.jsonl"}, nil, "[telemetry] audit_log"},
		{"metrics protocol", config.Telemetry{MetricsAddr: "127.0.0.1:0"},
			map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": rcv.Srv.URL, "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL": "http/json"}, "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := runtime.NumGoroutine()
			_, err := Open(context.Background(), tc.cfg, Options{LookupEnv: env(tc.vars)})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Open: %v, want it to name %s", err, tc.want)
			}
			if !testwait.Until(5*time.Second, func() bool { return runtime.NumGoroutine() <= before }) {
				buf := make([]byte, 1<<16)
				t.Errorf("%d goroutines after a failed Open, %d before:\n%s", runtime.NumGoroutine(), before, buf[:runtime.Stack(buf, true)])
			}
		})
	}
}
