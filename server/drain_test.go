package server_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/scratchpad-mcp/scratchpad-mcp/frontdoor"
)

// get is a GET of url with no token; it returns the status and body.
func get(t testing.TB, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, strings.TrimSpace(string(b))
}

// TestDrain: a draining server takes no new work (503, not ready), lets
// the call in flight finish, and says so; answers to it still go in.
func TestDrain(t *testing.T) {
	own, started, cancelled := blockingTool()
	e := startEnvWith(t, envOptions{own: own})
	probes := httptestServer(t, frontdoor.FrontDoor(frontdoor.FrontDoorOptions{Tokens: testTokens, Probes: e.srv.Probes(nil)}, http.NotFoundHandler()))
	if st, body := get(t, probes+frontdoor.ReadyPath); st != 200 || body != "ready" {
		t.Fatalf("/readyz before: %d %q", st, body)
	}
	ctx, cancelCall := context.WithCancel(context.Background())
	go goPost(ctx, e.url, modernBody(1, "tools/call", `"name":"block"`), modernHeaders("tools/call", "block")...)
	<-started
	drained := make(chan bool, 1)
	dctx, stop := context.WithTimeout(context.Background(), 30*time.Second)
	defer stop()
	go func() { drained <- e.srv.Drain(dctx) }()
	for !e.srv.Draining() {
		time.Sleep(time.Millisecond)
	}
	if r := post(t, context.Background(), e.url, modernBody(2, "tools/list", ""), modernHeaders("tools/list", "")...); r.status != http.StatusServiceUnavailable {
		t.Errorf("new work while draining: HTTP %d %s", r.status, r.body)
	}
	if st, body := get(t, probes+frontdoor.ReadyPath); st != 503 || !strings.Contains(body, "shutting down") {
		t.Errorf("/readyz while draining: %d %q", st, body)
	}
	if st, _ := get(t, probes+frontdoor.HealthPath); st != 200 {
		t.Errorf("/healthz while draining: %d", st)
	}
	select {
	case <-drained:
		t.Fatal("the drain ended with a call in flight")
	case <-time.After(50 * time.Millisecond):
	}
	cancelCall() // the call ends (its client left)
	<-cancelled
	if ok := <-drained; !ok {
		t.Error("Drain reported calls left")
	}
}

// TestDrainBound: a call that does not end holds the drain only until
// its bound; a listen does not hold it at all, and is answered.
func TestDrainBound(t *testing.T) {
	own, started, _ := blockingTool()
	e := startEnvWith(t, envOptions{own: own})
	// The listen is open (acknowledged) before the drain begins.
	req, err := newPost(context.Background(), e.url, modernBody(7, "subscriptions/listen", `"notifications":{"toolsListChanged":true}`), modernHeaders("subscriptions/listen", "")...)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	rd := bufio.NewReader(resp.Body)
	if ack, err := rd.ReadString('\n'); err != nil || !strings.HasPrefix(ack, "event: message") {
		t.Fatalf("listen: %q %v", ack, err)
	}
	listened := make(chan string, 1)
	go func() {
		rest, _ := io.ReadAll(rd)
		listened <- string(rest)
	}()
	go goPost(context.Background(), e.url, modernBody(1, "tools/call", `"name":"block"`), modernHeaders("tools/call", "block")...)
	<-started
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if e.srv.Drain(ctx) {
		t.Error("Drain reported nothing in flight")
	}
	if !errors.Is(ctx.Err(), context.DeadlineExceeded) {
		t.Error("Drain returned before its bound")
	}
	select {
	case rest := <-listened:
		if !strings.Contains(rest, `"id":7,"result":`) || !strings.Contains(rest, `"io.modelcontextprotocol/subscriptionId":7`) {
			t.Errorf("listen's end: %s", rest)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the listen was not answered by the drain")
	}
	e.srv.Shutdown()
}

// TestProbes: /healthz and /readyz need no token and say no more than
// ready or why not.
func TestProbes(t *testing.T) {
	e := startEnv(t)
	notReady := errors.New("the pad's Redis is not reachable")
	h := frontdoor.FrontDoor(frontdoor.FrontDoorOptions{Tokens: testTokens, Probes: e.srv.Probes(func(context.Context) error { return notReady })}, http.NotFoundHandler())
	url := httptestServer(t, h)
	if st, body := get(t, url+frontdoor.HealthPath); st != 200 || body != "ok" {
		t.Errorf("/healthz: %d %q", st, body)
	}
	if st, body := get(t, url+frontdoor.ReadyPath); st != 503 || body != "not ready: "+notReady.Error() {
		t.Errorf("/readyz: %d %q", st, body)
	}
	if st, _ := get(t, url+"/mcp"); st != http.StatusUnauthorized {
		t.Errorf("/mcp without a token: %d", st)
	}
}

// goPost is post for a goroutine: a failure is an empty response, for
// the test's own checks to notice.
func goPost(ctx context.Context, url, body string, headers ...string) modernResp {
	req, err := newPost(ctx, url, body, headers...)
	if err != nil {
		return modernResp{}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return modernResp{}
	}
	defer resp.Body.Close()
	return readModernResp(resp)
}
