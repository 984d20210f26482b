package telemetry

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/scratchpad-mcp/scratchpad-mcp/config"
	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testwait"
)

// TestRealPrometheusScrapes: a real Prometheus server (Debian package
// prometheus) scrapes the metrics handler every second; its query API
// then answers with the diverted-tokens counter and the operation
// histogram's count, labelled as recorded.
func TestRealPrometheusScrapes(t *testing.T) {
	bin, err := exec.LookPath("prometheus")
	if err != nil {
		skipOrFail(t, "prometheus is not installed (Debian package prometheus; scripts/deps.sh installs it)")
	}
	p := openTest(t, config.Telemetry{MetricsAddr: "127.0.0.1:0"}, nil)
	ctx := context.Background()
	p.RecordTokens(ctx, Usage{Server: "github", Tool: "search", Owner: "team-a", Diverted: 48000})
	for range 3 {
		_, s := p.StartServer(ctx, Op{Method: "tools/call", Target: "github_search", Server: "github"})
		s.End(Outcome{})
	}
	target := httptest.NewServer(p.MetricsHandler())
	defer target.Close()

	dir := t.TempDir()
	promCfg := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(promCfg, []byte(fmt.Sprintf(`global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: scratchpad
    metrics_path: /metrics
    static_configs:
      - targets: [%q]
`, strings.TrimPrefix(target.URL, "http://"))), 0o600); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	web := ln.Addr().String()
	ln.Close()
	cmd := exec.Command(bin, "--config.file="+promCfg, "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+web, "--log.level=warn")
	var logs strings.Builder
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	}()
	query := func(q string) string {
		resp, err := http.Get("http://" + web + "/api/v1/query?query=" + url.QueryEscape(q))
		if err != nil {
			return ""
		}
		defer resp.Body.Close()
		var r struct {
			Data struct {
				Result []struct {
					Metric map[string]string `json:"metric"`
					Value  [2]any            `json:"value"`
				} `json:"result"`
			} `json:"data"`
		}
		if json.NewDecoder(resp.Body).Decode(&r) != nil || len(r.Data.Result) != 1 {
			return ""
		}
		v, _ := r.Data.Result[0].Value[1].(string)
		return v
	}
	var diverted, count string
	testwait.Until(60*time.Second, func() bool {
		diverted = query(`scratchpad_tokens_diverted_total{job="scratchpad",server="github",tool="search",owner="team-a"}`)
		count = query(`mcp_server_operation_duration_seconds_count{mcp_method_name="tools/call",gen_ai_tool_name="github_search"}`)
		return diverted != "" && count != ""
	})
	if diverted != "48000" || count != "3" {
		t.Fatalf("Prometheus answered diverted %q, count %q; want 48000 and 3\n%s", diverted, count, logs.String())
	}
}
