package server_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/scratchpad-mcp/scratchpad-mcp/config"
	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testupstream"
)

// TestLegacyClientAnswersModernUpstream: a 2026-07-28 upstream's
// input-required results reach a 2025 client as the server→client
// requests it understands (elicitation, sampling, roots; several at once;
// several rounds), and the upstream completes with its answers.
func TestLegacyClientAnswersModernUpstream(t *testing.T) {
	bin, err := testupstream.EverythingServer()
	if err != nil {
		t.Fatal(err)
	}
	up := config.Server{Name: "ev", Transport: config.TransportStdio, Cmd: []string{bin}, Protocol: config.ProtocolAuto, Timeout: 20 * time.Second, RestartMaxAttempts: 3, RestartBackoffMax: time.Second}
	e := startEnv(t, up)
	e.px.AwaitStarted(context.Background(), 30*time.Second)
	if p := e.px.Upstreams()[0].Protocol(); !strings.HasPrefix(p.String(), "2026-07-28") {
		t.Fatalf("the everything-server speaks %s, want 2026-07-28", p)
	}
	for _, front := range []string{"http", "stdio"} {
		t.Run(front, func(t *testing.T) {
			r := &recorder{}
			cs := connect(t, e, front, r, fullClient...)
			for _, tc := range []struct {
				tool string
				asks []string // the requests the client is put, in any order
			}{
				{"test_input_required_result_elicitation", []string{"elicitation/create"}},
				{"test_input_required_result_sampling", []string{"sampling/createMessage"}},
				{"test_input_required_result_list_roots", []string{"roots/list"}},
				{"test_input_required_result_multiple_inputs", []string{"elicitation/create", "sampling/createMessage", "roots/list"}},
				{"test_input_required_result_multi_round", []string{"elicitation/create", "elicitation/create"}},
			} {
				before := len(r.askedAll())
				res := call(t, cs, tc.tool, nil)
				if res.IsError {
					t.Errorf("%s: %s", tc.tool, text(res))
					continue
				}
				asked := r.askedAll()[before:]
				var got []string
				for _, n := range asked {
					got = append(got, n.method)
				}
				for _, want := range tc.asks {
					if !contains(got, want) {
						t.Errorf("%s: client asked %v, want %v", tc.tool, got, tc.asks)
						break
					}
				}
				if strings.Contains(text(res), "input_required") {
					t.Errorf("%s: the input-required result reached a 2025 client: %s", tc.tool, text(res))
				}
			}
		})
	}
}
