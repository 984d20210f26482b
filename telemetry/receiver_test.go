package telemetry

import (
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	colmetrics "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// receiver is an OTLP/HTTP trace receiver: what a collector does with
// POST /v1/traces, decoded with the OTLP protobuf definitions. With block
// set, each request waits until release is closed: an endpoint that
// accepts connections and never answers.
type receiver struct {
	srv     *httptest.Server
	mu      sync.Mutex
	spans   []*tracepb.Span
	service string
	metrics map[string]int // metric name → data points received
	block   chan struct{}
	started chan struct{} // one value per request received while blocked
}

func newReceiver(t *testing.T, block bool) *receiver {
	t.Helper()
	r := &receiver{started: make(chan struct{}, 1024)}
	if block {
		r.block = make(chan struct{})
	}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.URL.Path == "/v1/metrics" && req.Header.Get("Content-Type") == "application/x-protobuf" {
			r.receiveMetrics(w, req)
			return
		}
		if req.URL.Path != "/v1/traces" || req.Header.Get("Content-Type") != "application/x-protobuf" {
			http.Error(w, "unexpected "+req.URL.Path+" "+req.Header.Get("Content-Type"), http.StatusNotFound)
			return
		}
		if r.block != nil {
			r.started <- struct{}{}
			<-r.block
		}
		body, err := io.ReadAll(req.Body)
		if err != nil {
			return
		}
		var msg coltrace.ExportTraceServiceRequest
		if err := proto.Unmarshal(body, &msg); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.mu.Lock()
		for _, rs := range msg.ResourceSpans {
			for _, a := range rs.GetResource().GetAttributes() {
				if a.Key == "service.name" {
					r.service = a.GetValue().GetStringValue()
				}
			}
			for _, ss := range rs.ScopeSpans {
				r.spans = append(r.spans, ss.Spans...)
			}
		}
		r.mu.Unlock()
		out, _ := proto.Marshal(&coltrace.ExportTraceServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(out)
	}))
	t.Cleanup(func() {
		if r.block != nil {
			select {
			case <-r.block:
			default:
				close(r.block)
			}
		}
		r.srv.Close()
	})
	return r
}

func (r *receiver) receiveMetrics(w http.ResponseWriter, req *http.Request) {
	body, err := io.ReadAll(req.Body)
	if err != nil {
		return
	}
	var msg colmetrics.ExportMetricsServiceRequest
	if err := proto.Unmarshal(body, &msg); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	r.mu.Lock()
	if r.metrics == nil {
		r.metrics = map[string]int{}
	}
	for _, rm := range msg.ResourceMetrics {
		for _, sm := range rm.ScopeMetrics {
			for _, m := range sm.Metrics {
				n := len(m.GetSum().GetDataPoints()) + len(m.GetHistogram().GetDataPoints()) + len(m.GetGauge().GetDataPoints())
				r.metrics[m.Name] += n
			}
		}
	}
	r.mu.Unlock()
	out, _ := proto.Marshal(&colmetrics.ExportMetricsServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(out)
}

func (r *receiver) metric(name string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.metrics[name]
}

func (r *receiver) got() []*tracepb.Span {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*tracepb.Span(nil), r.spans...)
}

func (r *receiver) byName(name string) *tracepb.Span {
	for _, s := range r.got() {
		if s.Name == name {
			return s
		}
	}
	return nil
}

// attrs flattens a span's attributes to text.
func attrs(s *tracepb.Span) map[string]string {
	out := map[string]string{}
	for _, a := range s.Attributes {
		v := a.GetValue()
		switch {
		case v.GetStringValue() != "":
			out[a.Key] = v.GetStringValue()
		default:
			out[a.Key] = v.String()
		}
	}
	return out
}

func intAttr(s *tracepb.Span, key string) int64 {
	for _, a := range s.Attributes {
		if a.Key == key {
			return a.GetValue().GetIntValue()
		}
	}
	return -1
}

func hexID(b []byte) string { return hex.EncodeToString(b) }
