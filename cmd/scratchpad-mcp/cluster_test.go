package main

import (
	"net/http"
	"os/exec"
	"strings"
	"testing"

	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testredis"
	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testwait"
)

func clusterConfig(url string) string {
	return "\n[cluster]\nredis_url = \"" + url + "\"\nprefix = \"e2e-cluster\"\n"
}

// A cluster Redis that cannot be reached stops the start, naming the key
// and the URL without its password.
func TestClusterRedisUnreachableAtStart(t *testing.T) {
	url, pw := closedRedisURL(t)
	cfg, _ := writeConfig(t, clusterConfig(url))
	out, err := exec.Command(binary(t), "serve", "--config", cfg).CombinedOutput()
	if err == nil {
		t.Fatal("serve started with the cluster's Redis unreachable")
	}
	if !strings.Contains(string(out), "[cluster] redis_url") || !strings.Contains(string(out), "xxxxx") || strings.Contains(string(out), pw) {
		t.Errorf("serve's error should name [cluster] redis_url and the redacted URL:\n%s", out)
	}
}

// /readyz says when the cluster's Redis goes away, and recovers with it.
func TestClusterReadyFollowsRedis(t *testing.T) {
	srv := testredis.Start(t)
	cfg, _ := writeConfig(t, clusterConfig(srv.URL()))
	base := startHTTP(t, "http", cfg)
	ready := func() (int, string) {
		t.Helper()
		resp, err := http.Get(base + "/readyz")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var b strings.Builder
		buf := make([]byte, 512)
		n, _ := resp.Body.Read(buf)
		b.Write(buf[:n])
		return resp.StatusCode, b.String()
	}
	// Ready once the upstream has started.
	testwait.For(t, "/readyz to answer 200 with Redis up", func() bool { st, _ := ready(); return st == 200 })
	srv.Kill()
	if st, body := ready(); st != 503 || !strings.Contains(body, "[cluster] redis_url") {
		t.Errorf("/readyz with Redis down: %d %q", st, body)
	}
}
