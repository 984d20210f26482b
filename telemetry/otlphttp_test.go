package telemetry

import (
	"compress/gzip"
	"context"
	"encoding/pem"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"go.opentelemetry.io/otel"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/scratchpad-mcp/scratchpad-mcp/config"
)

// seen is what an endpoint saw of one export.
type seen struct {
	header http.Header
	spans  int
}

// endpoint is an OTLP/HTTP trace endpoint that records the headers of
// each export and answers with status and body.
func endpoint(t *testing.T, tls bool, status int, body []byte) (*httptest.Server, func() []seen) {
	var mu sync.Mutex
	var got []seen
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var rd io.Reader = r.Body
		if r.Header.Get("Content-Encoding") == "gzip" {
			zr, err := gzip.NewReader(r.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			rd = zr
		}
		b, _ := io.ReadAll(rd)
		var req coltrace.ExportTraceServiceRequest
		if err := proto.Unmarshal(b, &req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		n := 0
		for _, rs := range req.ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				n += len(ss.Spans)
			}
		}
		mu.Lock()
		got = append(got, seen{header: r.Header.Clone(), spans: n})
		mu.Unlock()
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.WriteHeader(status)
		_, _ = w.Write(body)
	})
	srv := httptest.NewUnstartedServer(h)
	if tls {
		srv.StartTLS()
	} else {
		srv.Start()
	}
	t.Cleanup(srv.Close)
	return srv, func() []seen { mu.Lock(); defer mu.Unlock(); return append([]seen(nil), got...) }
}

// exportOne opens a provider on cfg and vars, ends one span and flushes
// it, returning what the export returned.
func exportOne(t *testing.T, cfg config.Telemetry, vars map[string]string) error {
	t.Helper()
	exp, err := newSpanExporter(withDefaults(cfg), envFunc(vars), "test")
	if err != nil {
		t.Fatal(err)
	}
	defer exp.Shutdown(context.Background())
	return exp.ExportSpans(context.Background(), spanStubs()[:1])
}

func withDefaults(cfg config.Telemetry) config.Telemetry {
	cfg.ExportTimeout = config.DefaultTelemetryTimeout
	return cfg
}

func envFunc(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

// TestExportHeadersAndCompression: the environment's headers (URL-encoded
// values) and gzip reach the endpoint, the per-signal variable over the
// general one; the section's headers win over the environment's.
func TestExportHeadersAndCompression(t *testing.T) {
	srv, got := endpoint(t, false, http.StatusOK, nil)
	vars := map[string]string{
		"OTEL_EXPORTER_OTLP_ENDPOINT":            srv.URL,
		"OTEL_EXPORTER_OTLP_HEADERS":             "x-general=1",
		"OTEL_EXPORTER_OTLP_TRACES_HEADERS":      "x-api-key=a%20b,broken, x-two = 2 ",
		"OTEL_EXPORTER_OTLP_TRACES_COMPRESSION":  "gzip",
		"OTEL_EXPORTER_OTLP_METRICS_COMPRESSION": "bogus", // another signal's: not read for traces
	}
	if err := exportOne(t, config.Telemetry{}, vars); err != nil {
		t.Fatal(err)
	}
	if err := exportOne(t, config.Telemetry{Headers: map[string]string{"x-section": "s"}}, vars); err != nil {
		t.Fatal(err)
	}
	s := got()
	if len(s) != 2 || s[0].spans != 1 {
		t.Fatalf("exports seen: %+v", s)
	}
	h := s[0].header
	if h.Get("X-Api-Key") != "a b" || h.Get("X-Two") != "2" || h.Get("X-General") != "" || h.Get("Content-Encoding") != "gzip" ||
		h.Get("Content-Type") != "application/x-protobuf" || !strings.HasPrefix(h.Get("User-Agent"), "scratchpad-mcp/test") {
		t.Errorf("headers from the environment: %v", h)
	}
	if h := s[1].header; h.Get("X-Section") != "s" || h.Get("X-Api-Key") != "" {
		t.Errorf("the section's headers did not win: %v", h)
	}
}

// TestExportTLSFromEnvironment: OTEL_EXPORTER_OTLP_CERTIFICATE is the CA
// an https endpoint is checked against; without it the export fails.
func TestExportTLSFromEnvironment(t *testing.T) {
	srv, got := endpoint(t, true, http.StatusOK, nil)
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := exportOne(t, config.Telemetry{Endpoint: srv.URL}, nil); err == nil {
		t.Fatal("an unknown CA was trusted")
	}
	if err := exportOne(t, config.Telemetry{Endpoint: srv.URL}, map[string]string{"OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE": ca}); err != nil {
		t.Fatal(err)
	}
	if len(got()) != 1 {
		t.Fatalf("exports seen: %d", len(got()))
	}
}

// TestExportAnswers: a non-2xx answer is ErrExportStatus with the status
// and the body's text; a partial success goes to OpenTelemetry's error
// handler as ErrPartialSuccess; an export after Shutdown is refused.
func TestExportAnswers(t *testing.T) {
	refused, _ := endpoint(t, false, http.StatusServiceUnavailable, []byte("collector overloaded"))
	err := exportOne(t, config.Telemetry{Endpoint: refused.URL}, nil)
	if !errors.Is(err, ErrExportStatus) || !strings.Contains(err.Error(), "503") || !strings.Contains(err.Error(), "collector overloaded") {
		t.Errorf("503: %v", err)
	}
	partial, _ := proto.Marshal(&coltrace.ExportTraceServiceResponse{PartialSuccess: &coltrace.ExportTracePartialSuccess{RejectedSpans: 1, ErrorMessage: "too old"}})
	half, _ := endpoint(t, false, http.StatusOK, partial)
	var handled []error
	var mu sync.Mutex
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) { mu.Lock(); handled = append(handled, err); mu.Unlock() }))
	t.Cleanup(func() { otel.SetErrorHandler(otel.ErrorHandlerFunc(func(error) {})) })
	if err := exportOne(t, config.Telemetry{Endpoint: half.URL}, nil); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	if len(handled) != 1 || !errors.Is(handled[0], ErrPartialSuccess) || !strings.Contains(handled[0].Error(), "1 rejected: too old") {
		t.Errorf("partial success handled as %v", handled)
	}
	mu.Unlock()
	exp, err := newSpanExporter(withDefaults(config.Telemetry{Endpoint: half.URL}), envFunc(nil), "test")
	if err != nil {
		t.Fatal(err)
	}
	_ = exp.Shutdown(context.Background())
	if err := exp.ExportSpans(context.Background(), spanStubs()[:1]); !errors.Is(err, ErrExporterShutdown) {
		t.Errorf("export after Shutdown: %v", err)
	}
}

// TestExporterEnvironmentErrors: what the environment can get wrong is an
// error naming the variable.
func TestExporterEnvironmentErrors(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "none.pem")
	for _, tc := range []struct {
		vars map[string]string
		want string
	}{
		{map[string]string{"OTEL_EXPORTER_OTLP_COMPRESSION": "zstd"}, `OTEL_EXPORTER_OTLP_COMPRESSION="zstd": want "gzip" or "none"`},
		{map[string]string{"OTEL_EXPORTER_OTLP_CERTIFICATE": missing}, "OTEL_EXPORTER_OTLP_CERTIFICATE: open "},
		{map[string]string{"OTEL_EXPORTER_OTLP_TRACES_CLIENT_KEY": missing}, "needs both OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE and OTEL_EXPORTER_OTLP_CLIENT_KEY"},
		{map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "collector:4318"}, `traces endpoint "collector:4318"`},
	} {
		if _, ok := tc.vars["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"]; !ok {
			tc.vars["OTEL_EXPORTER_OTLP_ENDPOINT"] = "http://127.0.0.1:4318"
		}
		_, err := newSpanExporter(withDefaults(config.Telemetry{}), envFunc(tc.vars), "test")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want %q", tc.vars, err, tc.want)
		}
	}
}

// TestMetricSelectorsFromEnvironment: the temporality preference and the
// exponential histogram aggregation the OpenTelemetry exporter read.
func TestMetricSelectorsFromEnvironment(t *testing.T) {
	for _, tc := range []struct {
		temporality, aggregation string
		counter                  metricdata.Temporality
		histogramExponential     bool
	}{
		{"", "", metricdata.CumulativeTemporality, false},
		{"DELTA", "base2_exponential_bucket_histogram", metricdata.DeltaTemporality, true},
		{"lowmemory", "explicit_bucket_histogram", metricdata.DeltaTemporality, false},
		{"nonsense", "nonsense", metricdata.CumulativeTemporality, false}, // ignored, as before
	} {
		x, err := newMetricExporter(withDefaults(config.Telemetry{Endpoint: "http://127.0.0.1:4318"}), envFunc(map[string]string{
			"OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE":        tc.temporality,
			"OTEL_EXPORTER_OTLP_METRICS_DEFAULT_HISTOGRAM_AGGREGATION": tc.aggregation,
		}), "test")
		if err != nil {
			t.Fatal(err)
		}
		_, exp := x.Aggregation(sdkmetric.InstrumentKindHistogram).(sdkmetric.AggregationBase2ExponentialHistogram)
		if got := x.Temporality(sdkmetric.InstrumentKindCounter); got != tc.counter || exp != tc.histogramExponential {
			t.Errorf("%q %q: counter %v, exponential %v", tc.temporality, tc.aggregation, got, exp)
		}
		if x.Temporality(sdkmetric.InstrumentKindUpDownCounter) != metricdata.CumulativeTemporality {
			t.Errorf("%q: an up-down counter is cumulative in every preference", tc.temporality)
		}
	}
}
