package telemetry

import (
	"context"
	"testing"

	"github.com/scratchpad-mcp/scratchpad-mcp/config"
)

// benchCall is what the wiring does for one proxied tools/call: a server
// span from the client's _meta, a client span injected into the
// upstream's _meta, the token counters, the audit record.
func benchCall(b *testing.B, p *Provider) {
	meta := map[string]any{"traceparent": "00-" + clientTrace + "-" + clientParent + "-01"}
	up := map[string]any{}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		sctx, s := p.StartServer(ctx, Op{Method: "tools/call", Target: "github_search", SessionID: "s", RequestID: "1", Meta: meta, Server: "github"})
		cctx, c := p.StartClient(sctx, Op{Method: "tools/call", Target: "search", Server: "github"})
		p.Inject(cctx, up)
		c.End(Outcome{})
		p.RecordTokens(sctx, Usage{Server: "github", Tool: "search", Diverted: 40000, Charged: 100})
		p.Audit(Record{Server: "github", Tool: "search", Outcome: "ok", TraceID: s.TraceID()})
		s.End(Outcome{})
	}
}

func BenchmarkCallOff(b *testing.B) { benchCall(b, nil) }

func BenchmarkCallMetricsOnly(b *testing.B) {
	p, err := Open(context.Background(), config.Telemetry{MetricsAddr: "127.0.0.1:0"}, Options{LookupEnv: env(nil)})
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close(context.Background())
	benchCall(b, p)
}

// BenchmarkCallTracing exports to an endpoint nobody listens on: the
// queue fills and drops, as with a collector that is down.
func BenchmarkCallTracing(b *testing.B) {
	p, err := Open(context.Background(), config.Telemetry{Endpoint: "http://127.0.0.1:1", MetricsAddr: "127.0.0.1:0"}, Options{LookupEnv: env(nil)})
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close(context.Background())
	benchCall(b, p)
}
