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

// TestCallOfADownServerSaysWhy: a tool of a server that failed to start
// is not "unknown tool" alone: the answer names the server and why it is
// down (issue 38, item 5).
func TestCallOfADownServerSaysWhy(t *testing.T) {
	broken := stdioUpstream("broken", nil)
	broken.Cmd = []string{"/nonexistent/server-binary"}
	broken.RestartMaxAttempts = 1
	e := startEnv(t, stdioUpstream("fast", nil), broken)
	for _, era := range []string{"2025", "2026"} {
		var got string
		if era == "2025" {
			res, err := callErr(connect(t, e, "http", nil), "broken_tool", nil)
			if err != nil {
				t.Fatalf("%s: %v", era, err)
			}
			got = text(res)
		} else {
			got = string(post(t, t.Context(), e.url, modernBody(1, "tools/call", `"name":"broken_tool"`), modernHeaders("tools/call", "broken_tool")...).body)
		}
		if !strings.Contains(got, "broken (") || !strings.Contains(got, "server-binary") {
			t.Errorf("%s: %s, want the server named with its cause", era, got)
		}
	}
}
