// Package testprom runs a real Prometheus server (Debian package
// prometheus, installed by scripts/deps.sh) for tests: it scrapes one
// target every second, and [Server.Query] asks its query API. Without the
// binary the test is skipped, or fails under CI=true, so a CI image
// without it cannot pass by skipping.
package testprom

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Server is a running Prometheus scraping one target.
type Server struct {
	web  string
	mu   sync.Mutex
	logs strings.Builder
}

func (s *Server) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.logs.Write(p)
}

// Logs is what Prometheus wrote so far.
func (s *Server) Logs() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.logs.String()
}

// Start runs Prometheus scraping target (host:port, path /metrics) under
// job, every second, until the test ends.
func Start(t *testing.T, target, job string) *Server {
	t.Helper()
	bin, err := exec.LookPath("prometheus")
	if err != nil {
		const why = "prometheus is not installed (Debian package prometheus; scripts/deps.sh installs it)"
		if ci, _ := strconv.ParseBool(os.Getenv("CI")); ci {
			t.Fatal(why + " (CI=true: a missing peer fails the run instead of skipping it)")
		}
		t.Skip(why)
	}
	dir := t.TempDir()
	cfg := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf(`global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: %s
    metrics_path: /metrics
    static_configs:
      - targets: [%q]
`, job, target)), 0o600); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{web: ln.Addr().String()}
	ln.Close()
	cmd := exec.Command(bin, "--config.file="+cfg, "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+s.web, "--log.level=warn")
	cmd.Stdout, cmd.Stderr = s, s
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	return s
}

// Query is the value of the one series the instant query q answers
// with, "" when it answers none, several, or not yet.
func (s *Server) Query(q string) string {
	resp, err := http.Get("http://" + s.web + "/api/v1/query?query=" + url.QueryEscape(q))
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	var r struct {
		Data struct {
			Result []struct {
				Value [2]any `json:"value"`
			} `json:"result"`
		} `json:"data"`
	}
	if json.NewDecoder(resp.Body).Decode(&r) != nil || len(r.Data.Result) != 1 {
		return ""
	}
	v, _ := r.Data.Result[0].Value[1].(string)
	return v
}
