package telemetry

import (
	"context"
	"net"
	"sync"
	"testing"

	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/grpc"

	"github.com/scratchpad-mcp/scratchpad-mcp/config"
)

// grpcReceiver is an OTLP/gRPC trace service: what a collector on :4317
// does.
type grpcReceiver struct {
	coltrace.UnimplementedTraceServiceServer
	mu    sync.Mutex
	spans []*tracepb.Span
}

func (g *grpcReceiver) Export(_ context.Context, req *coltrace.ExportTraceServiceRequest) (*coltrace.ExportTraceServiceResponse, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, rs := range req.ResourceSpans {
		for _, ss := range rs.ScopeSpans {
			g.spans = append(g.spans, ss.Spans...)
		}
	}
	return &coltrace.ExportTraceServiceResponse{}, nil
}

// TestSpansOverGRPC: protocol "grpc" (from the section, or from
// OTEL_EXPORTER_OTLP_PROTOCOL) sends the same spans to an OTLP/gRPC
// service, the client's trace continued.
func TestSpansOverGRPC(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  func(url string) config.Telemetry
		vars func(url string) map[string]string
	}{
		{"section", func(u string) config.Telemetry { return config.Telemetry{Endpoint: u, Protocol: config.ProtocolGRPC} }, func(string) map[string]string { return nil }},
		{"environment", func(string) config.Telemetry { return config.Telemetry{} }, func(u string) map[string]string {
			return map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": u, "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			rcv := &grpcReceiver{}
			srv := grpc.NewServer()
			coltrace.RegisterTraceServiceServer(srv, rcv)
			go func() { _ = srv.Serve(ln) }()
			defer srv.Stop()
			url := "http://" + ln.Addr().String()
			p, err := Open(context.Background(), tc.cfg(url), Options{LookupEnv: env(tc.vars(url))})
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close(context.Background())
			_, s := p.StartServer(context.Background(), Op{Method: "tools/call", Target: "search", Meta: map[string]any{"traceparent": "00-" + clientTrace + "-" + clientParent + "-01"}})
			s.End(Outcome{})
			flush(t, p)
			rcv.mu.Lock()
			defer rcv.mu.Unlock()
			if len(rcv.spans) != 1 || rcv.spans[0].Name != "tools/call search" || hexID(rcv.spans[0].TraceId) != clientTrace {
				t.Fatalf("received %v", rcv.spans)
			}
		})
	}
}
