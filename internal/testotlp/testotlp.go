// Package testotlp is an OTLP/HTTP receiver for tests: what a collector
// does with POST /v1/traces and /v1/metrics, decoded with the OTLP
// protobuf definitions ([Receiver]), shared by package telemetry's tests
// and the binary's.
package testotlp

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

// Receiver is an OTLP/HTTP trace and metrics receiver: what a collector does with
// POST /v1/traces, decoded with the OTLP protobuf definitions. With block
// set, each trace request waits until Block is closed: an endpoint that
// accepts connections and never answers.
type Receiver struct {
	Srv     *httptest.Server // its URL is the OTLP endpoint
	mu      sync.Mutex
	spans   []*tracepb.Span
	service string
	metrics map[string]int // metric name → data points received
	Block   chan struct{}
	Started chan struct{} // one value per request received while blocked
}

// New starts a receiver, closed at the end of the test.
func New(t testing.TB, block bool) *Receiver {
	t.Helper()
	r := &Receiver{Started: make(chan struct{}, 1024)}
	if block {
		r.Block = make(chan struct{})
	}
	r.Srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.URL.Path == "/v1/metrics" && req.Header.Get("Content-Type") == "application/x-protobuf" {
			r.receiveMetrics(w, req)
			return
		}
		if req.URL.Path != "/v1/traces" || req.Header.Get("Content-Type") != "application/x-protobuf" {
			http.Error(w, "unexpected "+req.URL.Path+" "+req.Header.Get("Content-Type"), http.StatusNotFound)
			return
		}
		if r.Block != nil {
			r.Started <- struct{}{}
			<-r.Block
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
		if r.Block != nil {
			select {
			case <-r.Block:
			default:
				close(r.Block)
			}
		}
		r.Srv.Close()
	})
	return r
}

func (r *Receiver) receiveMetrics(w http.ResponseWriter, req *http.Request) {
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

// Metric is how many data points of the metric name arrived.
func (r *Receiver) Metric(name string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.metrics[name]
}

// Got is the spans received so far.
func (r *Receiver) Got() []*tracepb.Span {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*tracepb.Span(nil), r.spans...)
}

// ByName is the first span received named name, nil for none.
func (r *Receiver) ByName(name string) *tracepb.Span {
	for _, s := range r.Got() {
		if s.Name == name {
			return s
		}
	}
	return nil
}

// Attrs flattens a span's attributes to text.
func Attrs(s *tracepb.Span) map[string]string {
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

// IntAttr is the integer attribute key of s, -1 without it.
func IntAttr(s *tracepb.Span, key string) int64 {
	for _, a := range s.Attributes {
		if a.Key == key {
			return a.GetValue().GetIntValue()
		}
	}
	return -1
}

// HexID is a trace or span id in hex.
func HexID(b []byte) string { return hex.EncodeToString(b) }

// Service is the service.name of the last spans received.
func (r *Receiver) Service() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.service
}
