package main

import (
	"strings"
	"testing"

	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testredis"
	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testwait"
)

// A Redis that keeps nothing over its restart is said, at start and by
// doctor, for the cluster and for the pad; one with appendonly is said to
// be persistent. (A restart of the first loses budgets, pads and
// sessions: README, Replicas.)
func TestRedisPersistenceSaid(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		say  string
	}{
		{"none", nil, "NOT persistent"},
		{"aof", []string{"--appendonly", "yes"}, "persistent (appendonly yes)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := testredis.Start(t, tc.args...)
			cfg, _ := writeConfig(t, clusterConfig(srv.URL())+redisPadConfig(srv.URL()))
			log := &serverLog{}
			startHTTPLogged(t, "http", cfg, log)
			for _, key := range []string{"[cluster] redis_url: ", "[pad] redis_url: "} {
				line := log.wait(t, testwait.Timeout, func(l string) bool { return strings.Contains(l, key) && strings.Contains(l, "persist") })
				if !strings.Contains(line, tc.say) {
					t.Errorf("start line for %s: %q, want %q", key, line, tc.say)
				}
			}
			_, out, errOut := runCLI(t, "doctor", "--config", cfg, "--timeout", "20s")
			for _, what := range []string{"cluster: redis", "pad: redis"} {
				found := false
				for _, l := range strings.Split(out, "\n") {
					if strings.Contains(l, what) && strings.Contains(l, tc.say) {
						found = true
					}
				}
				if !found {
					t.Errorf("doctor says nothing of %s being %q:\n%s%s", what, tc.say, out, errOut)
				}
			}
			if !strings.Contains(out, "requestState key: shared on the cluster's Redis") {
				t.Errorf("doctor does not say where the requestState key comes from:\n%s", out)
			}
		})
	}
}
