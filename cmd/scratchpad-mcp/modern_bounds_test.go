package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testredis"
	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testupstream"
	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testwait"
)

// modernEnvelope is a 2026-07-28 request's _meta with these client
// capabilities.
func modernEnvelope(caps string) string {
	return `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":` + caps + `}`
}

// modernPost sends one 2026-07-28 request (method, Mcp-Name, params
// members without the envelope) with a bearer token and an agent name;
// the status and the whole body.
func modernPost(ctx context.Context, base, token, agent string, id int, method, name, members, caps string) (int, string, error) {
	params := "{" + members
	if members != "" {
		params += ","
	}
	params += modernEnvelope(caps) + "}"
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, id, method, params)
	req, _ := http.NewRequestWithContext(ctx, "POST", base+"/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", method)
	if name != "" {
		req.Header.Set("Mcp-Name", name)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if agent != "" {
		req.Header.Set("X-Scratchpad-Agent", agent)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

// lastMessage is the last JSON-RPC message of an answer (a JSON body, or
// an event stream's last data line).
func lastMessage(body string) map[string]json.RawMessage {
	var last map[string]json.RawMessage
	for _, line := range strings.Split(body, "\n") {
		line = strings.TrimPrefix(strings.TrimSpace(line), "data: ")
		var m map[string]json.RawMessage
		if json.Unmarshal([]byte(line), &m) == nil {
			last = m
		}
	}
	return last
}

// One owner floods input-required (parked) calls over many agent names:
// past its own bound it is refused with HTTP 429 (never a panic, never a
// closed connection), and another owner's call that asks still gets its
// question.
func TestModernParkedFloodBoundedPerOwner(t *testing.T) {
	// A 2025 upstream over streamable HTTP: it asks mid-call on the
	// call's own stream (so several calls may ask at once), which parks
	// each call.
	up := upstreamOverHTTP(t, testupstream.Handler())
	cfg, _, tok := tenancyConfig(t, fmt.Sprintf("\n[mcp.servers.h]\ntransport = \"http_streamable\"\nurl = %q\nprotocol = \"2025-11-25\"\nprefix = \"h\"\n", up.URL), "alice", "bob")
	log := &serverLog{}
	base := startHTTPLogged(t, "http", cfg, log)
	const caps = `{"elicitation":{}}`
	const tool = "h__ask_elicitation"
	ctx := context.Background()
	ask := func(token, agent string, id int) (int, string) {
		st, body, err := modernPost(ctx, base, token, agent, id, "tools/call", tool, `"name":"`+tool+`"`, caps)
		if err != nil {
			t.Errorf("%s: %v", agent, err)
		}
		return st, body
	}
	// The harness: a question comes back as input-required.
	testwait.For(t, tool+" answering input-required", func() bool {
		st, body := ask(tok["bob"], "b0", 1)
		return st == 200 && strings.Contains(body, `"input_required"`)
	})
	// alice: 10 agents of 16 calls each, 160 > her 128.
	var parked, refused, other atomic.Int64
	var wg sync.WaitGroup
	sem := make(chan struct{}, 8)
	for a := range 10 {
		for i := range 16 {
			wg.Add(1)
			sem <- struct{}{}
			go func() {
				defer wg.Done()
				defer func() { <-sem }()
				st, body := ask(tok["alice"], fmt.Sprintf("a%d", a), 100*a+i)
				switch {
				case st == 200 && strings.Contains(body, `"input_required"`):
					parked.Add(1)
				case st == http.StatusTooManyRequests && strings.Contains(body, "too many calls waiting"):
					refused.Add(1)
				default:
					other.Add(1)
					t.Logf("unexpected: %d %.300s", st, body)
				}
			}()
		}
	}
	wg.Wait()
	t.Logf("alice: %d parked, %d refused (429), %d other", parked.Load(), refused.Load(), other.Load())
	if parked.Load() != 128 || refused.Load() != 32 || other.Load() != 0 {
		t.Errorf("alice parked %d, refused %d, other %d: want 128, 32, 0", parked.Load(), refused.Load(), other.Load())
	}
	// bob, next to the flood: his question still comes.
	bctx, cancel := context.WithTimeout(ctx, testwait.Timeout)
	defer cancel()
	if st, body, err := modernPost(bctx, base, tok["bob"], "b1", 2, "tools/call", tool, `"name":"`+tool+`"`, caps); err != nil || st != 200 || !strings.Contains(body, `"input_required"`) {
		t.Logf("log tail:\n%s", log.tail(30))
		t.Errorf("bob next to alice's flood: %v %d %.300s", err, st, body)
	}
	if line := log.first(func(l string) bool { return strings.Contains(l, "panic") }); line != "" {
		t.Errorf("the log holds a panic: %s", line)
	}
}

// Revoking an owner's token ends its 2026-07-28 work at once: a call in
// flight is answered with the reason, and a subscriptions/listen ends,
// whether or not another request comes (the tokens file is watched).
func TestModernRevocationEndsWork(t *testing.T) {
	// A 2025 upstream over HTTP too, whose question parks a call: its
	// POSTs in flight are counted, to see the parked call end upstream.
	var upCalls atomic.Int64
	h := testupstream.Handler()
	up := upstreamOverHTTP(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			upCalls.Add(1)
			defer upCalls.Add(-1)
		}
		h.ServeHTTP(w, r)
	}))
	cfg, _, tok := tenancyConfig(t, fmt.Sprintf("\n[mcp.servers.h]\ntransport = \"http_streamable\"\nurl = %q\nprotocol = \"2025-11-25\"\nprefix = \"h\"\n", up.URL), "alice", "bob")
	base := startHTTP(t, "http", cfg)
	ctx := context.Background()
	testwait.For(t, "the upstream's tools", func() bool {
		st, body, _ := modernPost(ctx, base, tok["alice"], "w", 1, "tools/call", "echo", `"name":"echo","arguments":{"text":"up"}`, `{}`)
		return st == 200 && strings.Contains(body, `"up"`)
	})
	// A call of a minute, and a listen.
	type answer struct {
		status int
		body   string
		at     time.Time
	}
	slow := make(chan answer, 1)
	go func() {
		st, body, _ := modernPost(ctx, base, tok["alice"], "w", 2, "tools/call", "slow", `"name":"slow","arguments":{"steps":600,"ms":100}`, `{}`)
		slow <- answer{st, body, time.Now()}
	}()
	listenEnded := make(chan time.Time, 1)
	acked := make(chan struct{})
	go func() {
		body := `{"jsonrpc":"2.0","id":3,"method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true},` + modernEnvelope(`{}`) + `}}`
		req, _ := http.NewRequest("POST", base+"/mcp", strings.NewReader(body))
		for k, v := range map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
			"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "subscriptions/listen", "Authorization": "Bearer " + tok["alice"], "X-Scratchpad-Agent": "l"} {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Error(err)
			close(acked)
			return
		}
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		once := sync.Once{}
		for sc.Scan() {
			if strings.Contains(sc.Text(), "subscriptions/acknowledged") {
				once.Do(func() { close(acked) })
			}
		}
		once.Do(func() { close(acked) })
		listenEnded <- time.Now()
	}()
	<-acked
	// A parked call: its upstream still waits for the answer.
	testwait.For(t, "alice's parked call", func() bool {
		st, body, _ := modernPost(ctx, base, tok["alice"], "p", 5, "tools/call", "h__ask_elicitation", `"name":"h__ask_elicitation"`, `{"elicitation":{}}`)
		return st == 200 && strings.Contains(body, `"input_required"`)
	})
	if n := upCalls.Load(); n < 1 {
		t.Fatalf("the upstream has %d calls in flight, want the parked one", n)
	}
	// A 2025 call of alice's too: it must end with a coded error.
	sid, _ := rawSession(t, base, tok["alice"], "legacy")
	legacy := make(chan answer, 1)
	go func() {
		req, _ := http.NewRequest(http.MethodPost, base+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"slow","arguments":{"steps":600,"ms":100}}}`))
		for k, v := range map[string]string{"Authorization": "Bearer " + tok["alice"], "Content-Type": "application/json",
			"Accept": "application/json, text/event-stream", "Mcp-Protocol-Version": protocolVersion, "Mcp-Session-Id": sid} {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			legacy <- answer{body: err.Error(), at: time.Now()}
			return
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		legacy <- answer{resp.StatusCode, string(b), time.Now()}
	}()
	// bob's call, which must go on.
	bobSlow := make(chan answer, 1)
	go func() {
		st, body, _ := modernPost(ctx, base, tok["bob"], "w", 4, "tools/call", "slow", `"name":"slow","arguments":{"steps":20,"ms":100}`, `{}`)
		bobSlow <- answer{st, body, time.Now()}
	}()
	time.Sleep(300 * time.Millisecond) // the calls are under way
	revoked := time.Now()
	if code, out, errOut := runCLI(t, "token", "revoke", "alice", "--config", cfg); code != 0 {
		t.Fatalf("token revoke: %d %s%s", code, out, errOut)
	}
	select {
	case a := <-slow:
		t.Logf("alice's call answered %v after the revoke: %d %.200s", a.at.Sub(revoked), a.status, a.body)
		if strings.Contains(a.body, `"result"`) || !strings.Contains(a.body, "no longer in force") {
			t.Errorf("alice's call after the revoke: %d %s", a.status, a.body)
		}
	case <-time.After(testwait.Timeout):
		t.Fatal("alice's call in flight outlived her revoked token")
	}
	select {
	case at := <-listenEnded:
		t.Logf("alice's listen ended %v after the revoke", at.Sub(revoked))
	case <-time.After(testwait.Timeout):
		t.Fatal("alice's listen outlived her revoked token")
	}
	select {
	case a := <-legacy:
		// Its stream may close before an answer (the session ends); an
		// answer it carries has a real code, never 0.
		if code, _ := rpcErrorOf(a.body); strings.Contains(a.body, `"error"`) && code == 0 || strings.Contains(a.body, `"result"`) {
			t.Errorf("alice's 2025 call after the revoke: %d %s", a.status, a.body)
		}
		t.Logf("alice's 2025 call ended %v after the revoke: %.200s", a.at.Sub(revoked), a.body)
	case <-time.After(testwait.Timeout):
		t.Fatal("alice's 2025 call outlived her revoked token")
	}
	if !testwait.Until(testwait.Timeout, func() bool { return upCalls.Load() == 0 }) {
		t.Errorf("alice's parked call is still waiting upstream (%d calls in flight)", upCalls.Load())
	}
	a := <-bobSlow
	if a.status != 200 || !strings.Contains(a.body, `"result"`) {
		t.Errorf("bob's call next to alice's revoke: %d %.300s", a.status, a.body)
	}
}

// An input-required retry answered by another replica (behind a
// balancer any replica may get it): the requestState opens there, with
// the key shared on the cluster's Redis, and with keys from [cluster]
// state_key being rotated (one replica seals with the old key, the other
// seals with the new one and still opens the old).
func TestModernRetryOnAnotherReplica(t *testing.T) {
	bin, err := testupstream.EverythingServer()
	if err != nil {
		t.Fatal(err)
	}
	srv := testredis.Start(t)
	upstream := fmt.Sprintf("\n[mcp.servers.ev]\ntransport = \"stdio\"\ncmd = [%q]\n", bin)
	oldKey, newKey := strings.Repeat("o", 40), strings.Repeat("n", 40)
	for _, tc := range []struct {
		name   string
		a, b   string // [cluster] lines of each replica
		prefix string
	}{
		{"shared on Redis", "", "", "shared"},
		{"rotating", "state_key = \"" + oldKey + "\"\n", "state_key = \"" + newKey + "\"\nprevious_state_keys = [\"" + oldKey + "\"]\n", "rotating"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var bases []string
			for _, extra := range []string{tc.a, tc.b} {
				cfg, _ := writeConfig(t, upstream+"\n[cluster]\nredis_url = \""+srv.URL()+"\"\nprefix = \""+tc.prefix+"\"\n"+extra)
				bases = append(bases, startHTTP(t, "http", cfg))
			}
			ctx := context.Background()
			const caps = `{"elicitation":{}}`
			const tool = "test_input_required_result_elicitation"
			var first string
			testwait.For(t, "the input-required answer on replica A", func() bool {
				st, body, _ := modernPost(ctx, bases[0], "", "", 1, "tools/call", tool, `"name":"`+tool+`"`, caps)
				first = body
				return st == 200 && strings.Contains(body, `"input_required"`)
			})
			var ir struct {
				InputRequests map[string]json.RawMessage `json:"inputRequests"`
				RequestState  string                     `json:"requestState"`
			}
			if err := json.Unmarshal(lastMessage(first)["result"], &ir); err != nil || ir.RequestState == "" || len(ir.InputRequests) != 1 {
				t.Fatalf("first answer: %s", first)
			}
			var key string
			for k := range ir.InputRequests {
				key = k
			}
			state, _ := json.Marshal(ir.RequestState)
			members := `"name":"` + tool + `","inputResponses":{"` + key + `":{"action":"accept","content":{"name":"Ada"}}},"requestState":` + string(state)
			var st int
			var body string
			testwait.For(t, "the retry on replica B", func() bool {
				st, body, _ = modernPost(ctx, bases[1], "", "", 2, "tools/call", tool, members, caps)
				// B may still be starting its upstream.
				return !strings.Contains(body, "unknown tool")
			})
			res := lastMessage(body)["result"]
			if st != 200 || res == nil || strings.Contains(string(res), "input_required") || strings.Contains(body, "bad signature") {
				t.Fatalf("retry on replica B: %d %s", st, body)
			}
		})
	}
}

// upstreamOverHTTP serves h as a streamable HTTP upstream for the test.
// Its handlers may still wait for answers to their questions when the
// test ends: their connections go first, then the server, not waited
// for past a few seconds.
func upstreamOverHTTP(t *testing.T, h http.Handler) *httptest.Server {
	up := httptest.NewServer(h)
	t.Cleanup(func() {
		up.CloseClientConnections()
		done := make(chan struct{})
		go func() { up.Close(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
		}
	})
	return up
}

// A 2025 call the client cancels is answered with a JSON-RPC code (go-sdk
// answers a cancelled request; before, with code 0).
func TestCancelledLegacyCallHasCode(t *testing.T) {
	cfg, _ := writeConfig(t, "")
	in, lines := serveLines(t, cfg)
	got := make(chan string, 16)
	go func() {
		for l := range lines {
			if strings.Contains(l, `"id":2`) {
				got <- l
			}
		}
	}()
	fmt.Fprintln(in, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	fmt.Fprintln(in, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	fmt.Fprintln(in, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow","arguments":{"steps":600,"ms":100}}}`)
	time.Sleep(500 * time.Millisecond) // the call under way
	fmt.Fprintln(in, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2,"reason":"test"}}`)
	select {
	case line := <-got:
		if code, _ := rpcErrorOf(line); code == 0 {
			t.Errorf("the cancelled call's answer: %s", line)
		}
	case <-time.After(testwait.Timeout):
		t.Fatal("no answer to the cancelled call")
	}
}
