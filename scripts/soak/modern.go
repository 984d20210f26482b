//go:build unix

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testupstream"
)

// The 2026-07-28 part of the hostile mix (issue 52), on the owners'
// proxy: alice floods input-required (parked) calls over many agent
// names — a 2025 upstream over streamable HTTP asks each call a
// question — far past her per-owner bound, while bob's calls that ask
// must keep coming back with their question; and both send requests
// whose body smuggles a name past Mcp-Name (a case variant, a duplicate,
// a folded key), each of which must be refused with 400 before anything
// runs. Every answer must be a real HTTP answer (no closed connection,
// no 5xx).

// parkedPerOwner is the server's bound of parked calls per owner
// (server/parked.go); the flood goes past it.
const parkedPerOwner = 128

// modernCounts is what the 2026-07-28 part did and met.
type modernCounts struct {
	aliceParked, alice429, aliceOther atomic.Int64
	bobAsked, bobOK                   atomic.Int64
	smuggled, smuggledRefused         atomic.Int64
	firstFailure                      atomic.Value // string
}

func (m *modernCounts) String() string {
	s := fmt.Sprintf("parked-call flood: alice %d parked, %d refused 429, %d other; bob %d of %d questions came; smuggled names: %d of %d refused 400",
		m.aliceParked.Load(), m.alice429.Load(), m.aliceOther.Load(), m.bobOK.Load(), m.bobAsked.Load(), m.smuggledRefused.Load(), m.smuggled.Load())
	if v, ok := m.firstFailure.Load().(string); ok {
		s += "; first failure: " + v
	}
	return s
}

func (m *modernCounts) fail(s string) {
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	m.firstFailure.CompareAndSwap(nil, s)
}

// failed reports whether a bound broke.
func (m *modernCounts) failed() []string {
	var out []string
	if m.aliceParked.Load() > parkedPerOwner {
		out = append(out, fmt.Sprintf("alice parked %d calls, past her bound of %d", m.aliceParked.Load(), parkedPerOwner))
	}
	if m.alice429.Load() == 0 {
		out = append(out, "alice's flood never met its bound")
	}
	if m.aliceOther.Load() > 0 {
		out = append(out, "an answer to alice's flood was neither a question nor a 429")
	}
	if n := m.bobAsked.Load(); n == 0 || m.bobOK.Load() != n {
		out = append(out, "bob's questions did not all come next to alice's flood")
	}
	if n := m.smuggled.Load(); n == 0 || m.smuggledRefused.Load() != n {
		out = append(out, "a smuggled name was not refused")
	}
	return out
}

// askingUpstream serves a 2025 upstream over streamable HTTP on
// loopback (this binary's testupstream): its ask_elicitation asks its
// client mid-call, on the call's own stream.
func askingUpstream() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	go func() { _ = http.Serve(ln, testupstream.Handler()) }()
	return "http://" + ln.Addr().String() + "/mcp", nil
}

const modernAsk = "h__ask_elicitation"

// modernClient opens a connection per request: a pooled one the server
// closed while idle would fail a POST that Go does not retry, which is
// the client's race, not an answer the server failed to give.
var modernClient = &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}

// modernPost sends one 2026-07-28 request; its status and body.
func modernPost(ctx context.Context, base, token, agent, body, mcpName string) (int, string, error) {
	req, _ := http.NewRequestWithContext(ctx, "POST", base+"/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "tools/call")
	req.Header.Set("Mcp-Name", mcpName)
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("X-Scratchpad-Agent", agent)
	resp, err := modernClient.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

const modernMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}`

func askBody(id int) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,%s}}`, id, modernAsk, modernMeta)
}

// answerBody is the retry answering the question of an input-required
// answer (its last message) with the name "bob".
func answerBody(id int, answer string) string {
	var last struct {
		Result struct {
			InputRequests map[string]json.RawMessage `json:"inputRequests"`
			RequestState  string                     `json:"requestState"`
		} `json:"result"`
	}
	for _, line := range strings.Split(answer, "\n") {
		_ = json.Unmarshal([]byte(strings.TrimPrefix(strings.TrimSpace(line), "data: ")), &last)
	}
	responses := map[string]any{}
	for k := range last.Result.InputRequests {
		responses[k] = map[string]any{"action": "accept", "content": map[string]any{"name": "bob"}}
	}
	rb, _ := json.Marshal(responses)
	sb, _ := json.Marshal(last.Result.RequestState)
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"inputResponses":%s,"requestState":%s,%s}}`, id, modernAsk, rb, sb, modernMeta)
}

// smuggledBodies name h__words under Mcp-Name and something else in the
// body.
var smuggledBodies = []string{
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"h__words","Name":"h__pid","arguments":{"n":1},` + modernMeta + `}}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"h__words","NAME":"h__pid","arguments":{"n":1},` + modernMeta + `}}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"h__words","name":"h__pid","arguments":{"n":1},` + modernMeta + `}}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"h__words","arguments":{"n":1},"argumentſ":{"n":2},` + modernMeta + `}}`,
}

// modern runs the 2026-07-28 part until end.
func modern(ctx context.Context, base string, end time.Time, m *modernCounts) *sync.WaitGroup {
	var wg sync.WaitGroup
	// alice: 8 at a time over 16 agent names, again and again.
	for w := range 8 {
		wg.Go(func() {
			for n := 0; time.Now().Before(end) && ctx.Err() == nil; n++ {
				st, body, err := modernPost(ctx, base, ownerTokens["alice"], fmt.Sprintf("flood-%d", (w+8*n)%16), askBody(n), modernAsk)
				switch {
				case err != nil && ctx.Err() != nil:
					return
				case err != nil:
					m.aliceOther.Add(1)
					m.fail("alice: " + err.Error())
				case st == http.StatusOK && strings.Contains(body, `"input_required"`):
					m.aliceParked.Add(1)
				case st == http.StatusTooManyRequests:
					m.alice429.Add(1)
				default:
					m.aliceOther.Add(1)
					m.fail(fmt.Sprintf("alice: %d %s", st, body))
				}
				time.Sleep(20 * time.Millisecond)
			}
		})
	}
	// bob: a question a second, each answered by his retry (so the call
	// completes and he stays under his own bound), and the smuggled
	// bodies.
	wg.Go(func() {
		for n := 0; time.Now().Before(end) && ctx.Err() == nil; n++ {
			m.bobAsked.Add(1)
			agent := fmt.Sprintf("bob-%d", n%8)
			st, body, err := modernPost(ctx, base, ownerTokens["bob"], agent, askBody(n), modernAsk)
			if err == nil && st == http.StatusOK && strings.Contains(body, `"input_required"`) {
				st, body, err = modernPost(ctx, base, ownerTokens["bob"], agent, answerBody(n, body), modernAsk)
			}
			if err == nil && st == http.StatusOK && strings.Contains(body, `"complete"`) && strings.Contains(body, "bob") {
				m.bobOK.Add(1)
			} else if ctx.Err() == nil {
				m.fail(fmt.Sprintf("bob: %d %v %s", st, err, body))
			} else {
				m.bobAsked.Add(-1)
				return
			}
			for _, b := range smuggledBodies {
				m.smuggled.Add(1)
				st, body, err := modernPost(ctx, base, ownerTokens["bob"], "smuggler", b, "h__words")
				if err == nil && st == http.StatusBadRequest && strings.Contains(body, "-32602") {
					m.smuggledRefused.Add(1)
				} else if ctx.Err() == nil {
					m.fail(fmt.Sprintf("smuggled: %d %v %s", st, err, body))
				} else {
					m.smuggled.Add(-1)
					return
				}
			}
			time.Sleep(time.Second)
		}
	})
	return &wg
}
