package server_test

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// TestFirstListingWaitsForEveryUpstream: a client that lists once sees
// the tools of an upstream that takes seconds to start, not only those of
// the one that was up first — in either era (issue 38's item 4).
func TestFirstListingWaitsForEveryUpstream(t *testing.T) {
	slow := rawUpstream("slow")
	// Up two seconds after the other: far past the straggler bound
	// (750 ms), within the start wait.
	slow.Cmd = []string{"sh", "-c", `sleep 2; exec "$0"`, os.Args[0]}
	for _, era := range []string{"2025", "2026"} {
		t.Run(era, func(t *testing.T) {
			e := startEnv(t, stdioUpstream("fast", nil), slow)
			var names []string
			if era == "2025" {
				names = listedTools(t, connect(t, e, "http", nil))
			} else {
				l := post(t, t.Context(), e.url, modernBody(1, "tools/list", ""), modernHeaders("tools/list", "")...)
				var res struct{ Tools []struct{ Name string } }
				if err := json.Unmarshal(l.last(t)["result"], &res); err != nil {
					t.Fatal(err)
				}
				for _, tl := range res.Tools {
					names = append(names, tl.Name)
				}
			}
			if !contains(names, "echo") || !contains(names, "last_roots") {
				t.Errorf("first listing %v: want the fast upstream's echo and the slow one's last_roots", names)
			}
		})
	}
}

// TestCallWaitsForAStartingUpstream: a tool of an upstream still
// starting, called before any listing (2026-07-28 has no initialize to
// wait in), runs once its server is up instead of being unknown.
func TestCallWaitsForAStartingUpstream(t *testing.T) {
	slow := rawUpstream("slow")
	slow.Cmd = []string{"sh", "-c", `sleep 2; exec "$0"`, os.Args[0]}
	e := startEnv(t, stdioUpstream("fast", nil), slow)
	r := post(t, t.Context(), e.url, modernBody(1, "tools/call", `"name":"last_roots"`), modernHeaders("tools/call", "last_roots")...)
	if r.status != 200 || strings.Contains(string(r.body), "unknown tool") || strings.Contains(string(r.body), `"error"`) {
		t.Errorf("call before the server was up: HTTP %d %s", r.status, r.body)
	}
}
