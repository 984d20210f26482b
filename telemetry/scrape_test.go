package telemetry

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/scratchpad-mcp/scratchpad-mcp/config"
	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testprom"
	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testwait"
)

// TestRealPrometheusScrapes: a real Prometheus server (Debian package
// prometheus) scrapes the metrics handler every second; its query API
// then answers with the diverted-tokens counter and the operation
// histogram's count, labelled as recorded.
func TestRealPrometheusScrapes(t *testing.T) {
	p := openTest(t, config.Telemetry{MetricsAddr: "127.0.0.1:0"}, nil)
	ctx := context.Background()
	p.RecordTokens(ctx, Usage{Server: "github", Tool: "search", Owner: "team-a", Diverted: 48000})
	for range 3 {
		_, s := p.StartServer(ctx, Op{Method: "tools/call", Target: "github_search", Server: "github"})
		s.End(Outcome{})
	}
	target := httptest.NewServer(p.MetricsHandler())
	defer target.Close()
	prom := testprom.Start(t, strings.TrimPrefix(target.URL, "http://"), "scratchpad")
	query := prom.Query
	var diverted, count string
	testwait.Until(60*time.Second, func() bool {
		diverted = query(`scratchpad_tokens_diverted_total{job="scratchpad",server="github",tool="search",owner="team-a"}`)
		count = query(`mcp_server_operation_duration_seconds_count{mcp_method_name="tools/call",gen_ai_tool_name="github_search"}`)
		return diverted != "" && count != ""
	})
	if diverted != "48000" || count != "3" {
		t.Fatalf("Prometheus answered diverted %q, count %q; want 48000 and 3\n%s", diverted, count, prom.Logs())
	}
}
