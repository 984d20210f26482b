package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scratchpad-mcp/scratchpad-mcp/config"
	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testupstream"
	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testwait"
)

func TestToolContentIsIdenticalToDirect(t *testing.T) {
	e := startEnv(t, stdioUpstream("up", thresholds(t, "*", 100000)))
	d := direct(t, nil)
	for _, front := range fronts {
		t.Run(front, func(t *testing.T) {
			c := connect(t, e, front, nil)
			for _, tool := range []string{"mixed", "echo", "image", "fail", "structured"} {
				args := map[string]any{"text": "héllo", "n": 2}
				if a, b := mustJSON(t, call(t, c, tool, args)), mustJSON(t, call(t, d, tool, args)); a != b {
					t.Errorf("%s: proxy result differs from direct\nproxy:  %s\ndirect: %s", tool, a, b)
				}
			}
		})
	}
}

func TestUpstreamErrorKeepsMessage(t *testing.T) {
	e := startEnv(t, stdioUpstream("up", nil))
	d := direct(t, nil)
	args := map[string]any{"message": "quota exceeded for key 7"}
	viaRes, viaErr := callErr(connect(t, e, "http", nil), "tool_error", args)
	directRes, directErr := callErr(d, "tool_error", args)
	if fmt.Sprint(viaErr) != fmt.Sprint(directErr) || mustJSON(t, viaRes) != mustJSON(t, directRes) {
		t.Errorf("error differs\nproxy:  %v %s\ndirect: %v %s", viaErr, mustJSON(t, viaRes), directErr, mustJSON(t, directRes))
	}
	if !strings.Contains(fmt.Sprint(viaErr)+mustJSON(t, viaRes), "quota exceeded for key 7") {
		t.Errorf("message lost: %v %s", viaErr, mustJSON(t, viaRes))
	}
	for _, front := range fronts {
		c := connect(t, e, front, nil)
		if _, err := callErr(c, "tool_error", args); fmt.Sprint(err) != fmt.Sprint(directErr) {
			t.Errorf("%s: %v, direct %v", front, err, directErr)
		}
		// The session goes on.
		if got := text(call(t, c, "echo", map[string]any{"text": "still here"})); got != "still here" {
			t.Errorf("%s: after the error: %q", front, got)
		}
	}
}

func TestServerToClientRequestsReachTheCaller(t *testing.T) {
	e := startEnv(t, stdioUpstream("up", nil))
	for _, front := range fronts {
		t.Run(front, func(t *testing.T) {
			viaR, directR, bystander := &recorder{}, &recorder{}, &recorder{}
			// Another client, able to answer everything, has no call in
			// flight: it is never asked.
			connect(t, e, "http", bystander, fullClient...)
			c := connect(t, e, front, viaR, fullClient...)
			d := direct(t, directR, fullClient...)
			for _, tc := range []struct {
				tool string
				args map[string]any
			}{
				{"ask_sampling", nil},
				{"ask_elicitation", nil},
				{"ask_elicitation", map[string]any{"mode": "url"}},
				{"ask_roots", nil},
			} {
				via, direct := call(t, c, tc.tool, tc.args), call(t, d, tc.tool, tc.args)
				if via.IsError || text(via) != text(direct) {
					t.Errorf("%s %v: answer differs\nproxy:  %s\ndirect: %s", tc.tool, tc.args, text(via), text(direct))
				}
			}
			for _, m := range []string{"sampling/createMessage", "elicitation/create", "roots/list"} {
				if via, direct := viaR.askedOf(m), directR.askedOf(m); mustJSON(t, via) != mustJSON(t, direct) || len(via) == 0 {
					t.Errorf("%s requests differ\nproxy:  %v\ndirect: %v", m, via, direct)
				}
			}
			if asked := bystander.askedAll(); len(asked) != 0 {
				t.Errorf("a client with no call in flight was asked %v", asked)
			}
			via := viaR.waitNotes(t, "notifications/elicitation/complete", 1)
			direct := directR.waitNotes(t, "notifications/elicitation/complete", 1)
			if a, b := string(via[0].params), string(direct[0].params); a != b || !strings.Contains(a, `"el-1"`) {
				t.Errorf("elicitation/complete differs\nproxy:  %s\ndirect: %s", a, b)
			}
			if n := bystander.notesOf("notifications/elicitation/complete"); len(n) != 0 {
				t.Errorf("the completion reached a client that was not asked: %v", n)
			}
		})
	}
}

// TestClientErrorReachesTheUpstream: a client's own JSON-RPC error to a
// forwarded request goes back to the upstream with its message.
func TestClientErrorReachesTheUpstream(t *testing.T) {
	e := startEnv(t, stdioUpstream("up", nil))
	for _, front := range fronts {
		t.Run(front, func(t *testing.T) {
			r := &recorder{}
			o := r.options("elicitation")
			o.ElicitationHandler = func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				return nil, &jsonrpc.Error{Code: -32001, Message: "declined by policy"}
			}
			c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, o)
			cs, err := c.Connect(context.Background(), e.transport(t, front), &mcp.ClientSessionOptions{ProtocolVersion: protocol})
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			if got := text(call(t, cs, "ask_elicitation", nil)); !strings.Contains(got, "declined by policy") {
				t.Errorf("the upstream got %q", got)
			}
		})
	}
}

func TestUndeclaredCapabilityIsAJSONRPCError(t *testing.T) {
	e := startEnv(t, stdioUpstream("up", nil))
	for _, front := range fronts {
		t.Run(front, func(t *testing.T) {
			// Declares elicitation (form only) and nothing else.
			r := &recorder{}
			c := connect(t, e, front, r, "elicitation")
			for _, tc := range []struct {
				tool string
				args map[string]any
				want string
			}{
				{"ask_sampling", nil, "did not declare the sampling capability"},
				{"ask_roots", nil, "did not declare the roots capability"},
				{"ask_elicitation", map[string]any{"mode": "url"}, "did not declare the elicitation.url capability"},
			} {
				res := call(t, c, tc.tool, tc.args)
				if !res.IsError || !strings.Contains(text(res), tc.want) || !strings.Contains(text(res), "Method not found") {
					t.Errorf("%s: want a method-not-found error saying %q, got %q", tc.tool, tc.want, text(res))
				}
			}
			if res := call(t, c, "ask_elicitation", nil); res.IsError {
				t.Errorf("declared form elicitation failed: %s", text(res))
			}
			if asked := r.askedAll(); len(asked) != 1 {
				t.Errorf("the client was asked %d times, want 1: %v", len(asked), asked)
			}
		})
	}
}

func TestClientThatNeverAnswersTimesOut(t *testing.T) {
	up := stdioUpstream("up", nil)
	up.Timeout = 3 * time.Second
	e := startEnv(t, up)
	release := make(chan struct{})
	r := &recorder{block: release}
	c := connect(t, e, "http", r, "sampling")
	res := call(t, c, "ask_sampling", nil)
	if !res.IsError || !strings.Contains(text(res), "did not answer") {
		t.Fatalf("want a clear timeout, got %q", text(res))
	}
	// The client answers late (the upstream's request is over by then),
	// then promptly.
	r.mu.Lock()
	r.block = nil
	r.mu.Unlock()
	close(release)
	if res := call(t, c, "ask_sampling", nil); res.IsError || !strings.Contains(text(res), `"model":"test-model"`) {
		t.Fatalf("session did not survive: %q", text(res))
	}
}

func TestUpstreamThatNeverAnswersTimesOut(t *testing.T) {
	up := stdioUpstream("up", nil)
	up.Timeout = 2 * time.Second
	e := startEnv(t, up)
	c := connect(t, e, "http", nil)
	res := call(t, c, "hang", nil)
	if !res.IsError || !strings.Contains(text(res), "did not answer hang within 2s") {
		t.Fatalf("want a clear timeout, got %q", text(res))
	}
	if got := text(call(t, c, "echo", map[string]any{"text": "alive"})); got != "alive" {
		t.Fatalf("after the timeout: %q", got)
	}
}

// TestCancelReachesUpstream: a client cancelling its call (go-sdk sends
// notifications/cancelled) is cancelled at the upstream, over every
// serving transport.
func TestCancelReachesUpstream(t *testing.T) {
	e := startEnv(t, blockerUpstream("b"))
	for i, front := range fronts {
		t.Run(front, func(t *testing.T) {
			r := &recorder{}
			c := connect(t, e, front, r)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			done := make(chan error, 1)
			go func() {
				p := &mcp.CallToolParams{Name: "block", Arguments: map[string]any{}}
				p.SetProgressToken("blocking")
				_, err := c.CallTool(ctx, p)
				done <- err
			}()
			// The upstream says it has the call.
			r.waitNotes(t, "notifications/progress", 1)
			cancel()
			if err := <-done; err == nil {
				t.Fatal("cancelled call succeeded")
			}
			want := fmt.Sprint(i + 1)
			testwait.For(t, "the upstream to see notifications/cancelled", func() bool { return text(call(t, c, "cancelled", nil)) == want })
		})
	}
}

// TestUpstreamCancellationReachesTheClient: an upstream asks the client
// for sampling mid-call, then cancels that request; the client's handler
// is cancelled (go-sdk got notifications/cancelled for it).
func TestUpstreamCancellationReachesTheClient(t *testing.T) {
	e := startEnv(t, rawUpstream("raw"))
	for _, front := range fronts {
		t.Run(front, func(t *testing.T) {
			r := &recorder{block: make(chan struct{}), cancelled: make(chan error, 1), sampled: make(chan struct{}, 1)}
			cl, c := connectClient(t, e.transport(t, front), r, "sampling", "roots")
			done := make(chan error, 1)
			go func() { _, err := callErr(c, "ask_then_cancel", nil); done <- err }()
			select {
			case <-r.sampled:
			case <-time.After(20 * time.Second):
				t.Fatal("the upstream's sampling request never reached the client")
			}
			// The server tells the upstream roots changed, and it then
			// cancels its request.
			cl.AddRoots(&mcp.Root{URI: "file:///other", Name: "other-" + front})
			select {
			case err := <-r.cancelled:
				if err == nil {
					t.Error("cancelled without an error")
				}
			case <-time.After(20 * time.Second):
				t.Fatal("the client was not told the request was cancelled")
			}
			if got := text(call(t, c, "release", nil)); got != "released" {
				t.Errorf("release: %q", got)
			}
			if err := <-done; err != nil {
				t.Errorf("ask_then_cancel: %v", err)
			}
		})
	}
}

// TestRequestOutsideACallGoesToTheOnlyClient: an upstream asking for
// roots with no call in flight (as servers tracking roots do when they
// change) is answered by the only client; with two clients it is
// refused.
func TestRequestOutsideACallGoesToTheOnlyClient(t *testing.T) {
	e := startEnv(t, rawUpstream("raw"))
	r := &recorder{}
	cl, c := connectClient(t, e.transport(t, "http"), r, "roots")
	if err := c.SetLoggingLevel(context.Background(), &mcp.SetLoggingLevelParams{Level: "debug"}); err != nil {
		t.Fatal(err)
	}
	// A change of roots reaches the upstream, which asks roots/list and
	// logs the answer. (Polling a tool instead would put a call in
	// flight, which the request would be taken for.)
	answered := func(n int) string {
		t.Helper()
		cl.AddRoots(&mcp.Root{URI: fmt.Sprintf("file:///root-%d", n)})
		notes := r.waitNotes(t, "notifications/message", n)
		return fmt.Sprint(notes[n-1].field("data"))
	}
	if got := answered(1); !strings.Contains(got, `"roots"`) || !strings.Contains(got, "file:///root-1") {
		t.Fatalf("one client: %s", got)
	}
	other := connect(t, e, "http", nil, "roots")
	// Its notifications/initialized (which attaches it) is handled
	// before this ping.
	if err := other.Ping(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if got := answered(2); !strings.Contains(got, "2 clients are connected") {
		t.Errorf("two clients: %s", got)
	}
}

func TestLoggingHonoursSetLevel(t *testing.T) {
	for _, front := range fronts {
		t.Run(front, func(t *testing.T) {
			e := startEnv(t, stdioUpstream("up", nil))
			r := &recorder{}
			c := connect(t, e, front, r)
			ctx := context.Background()
			if err := c.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "warning"}); err != nil {
				t.Fatal(err)
			}
			call(t, c, "log", nil)
			r.waitNotes(t, "notifications/message", 2)
			if err := c.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "debug"}); err != nil {
				t.Fatal(err)
			}
			call(t, c, "log", nil)
			got := r.waitNotes(t, "notifications/message", 6)
			var levels []string
			for _, n := range got {
				levels = append(levels, fmt.Sprint(n.field("level")))
				if lg := n.field("logger"); lg != "testupstream" {
					t.Errorf("logger %v", lg)
				}
			}
			// Log messages belong to no call: order within a call is
			// not what this tests.
			sort.Strings(levels[:2])
			sort.Strings(levels[2:])
			if want := "error warning debug error info warning"; strings.Join(levels, " ") != want {
				t.Errorf("levels %v, want %s", levels, want)
			}
		})
	}
}

func TestLogLevelFiltersPerSession(t *testing.T) {
	e := startEnv(t, stdioUpstream("up", nil))
	quiet, loud := &recorder{}, &recorder{}
	cq := connect(t, e, "http", quiet)
	cl := connect(t, e, "sse", loud)
	ctx := context.Background()
	if err := cq.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "error"}); err != nil {
		t.Fatal(err)
	}
	if err := cl.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "debug"}); err != nil {
		t.Fatal(err)
	}
	call(t, cq, "log", nil)
	loud.waitNotes(t, "notifications/message", 4)
	quiet.waitNotes(t, "notifications/message", 1)
	call(t, cl, "echo", map[string]any{"text": "sync"})
	if got := quiet.notesOf("notifications/message"); len(got) != 1 || got[0].field("level") != "error" {
		t.Errorf("session at error got %v", got)
	}
}

func sameMap(t testing.TB, what string, via, direct map[string]string) {
	t.Helper()
	if len(via) != len(direct) {
		t.Errorf("%s: proxy lists %d, direct %d", what, len(via), len(direct))
	}
	for k, d := range direct {
		if via[k] != d {
			t.Errorf("%s %s differs\nproxy:  %s\ndirect: %s", what, k, via[k], d)
		}
	}
}

func TestResourcesPromptsCompletionsAreIdentical(t *testing.T) {
	e := startEnv(t, stdioUpstream("up", nil))
	d := direct(t, nil)
	for _, front := range fronts {
		t.Run(front, func(t *testing.T) {
			c := connect(t, e, front, nil)
			ctx := context.Background()
			// Every page, in the upstream's order.
			if via, direct := listedTools(t, c), listedTools(t, d); strings.Join(via, ",") != strings.Join(direct, ",") {
				t.Errorf("tools differ\nproxy:  %v\ndirect: %v", via, direct)
			}
			sameMap(t, "resource", listedResources(t, c), listedResources(t, d))
			sameMap(t, "prompt", listedPrompts(t, c), listedPrompts(t, d))
			vt, err := c.ListResourceTemplates(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			dt, _ := d.ListResourceTemplates(ctx, nil)
			if a, b := mustJSON(t, vt.ResourceTemplates), mustJSON(t, dt.ResourceTemplates); a != b {
				t.Errorf("templates differ\nproxy:  %s\ndirect: %s", a, b)
			}
			for _, uri := range []string{testupstream.TextURI, testupstream.BlobURI, "test://items/42", "test://many/09"} {
				via, err := c.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
				if err != nil {
					t.Fatalf("read %s: %v", uri, err)
				}
				direct, _ := d.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
				if a, b := mustJSON(t, via), mustJSON(t, direct); a != b {
					t.Errorf("read %s differs\nproxy:  %s\ndirect: %s", uri, a, b)
				}
			}
			get := &mcp.GetPromptParams{Name: testupstream.PromptName, Arguments: map[string]string{"name": "ada", "style": "formal"}}
			via, err := c.GetPrompt(ctx, get)
			if err != nil {
				t.Fatal(err)
			}
			direct, _ := d.GetPrompt(ctx, get)
			if a, b := mustJSON(t, via), mustJSON(t, direct); a != b || len(via.Messages) != 3 {
				t.Errorf("prompt differs\nproxy:  %s\ndirect: %s", a, b)
			}
			get.Arguments = nil
			_, viaErr := c.GetPrompt(ctx, get)
			_, directErr := d.GetPrompt(ctx, get)
			if viaErr == nil || fmt.Sprint(viaErr) != fmt.Sprint(directErr) {
				t.Errorf("prompt error differs\nproxy:  %v\ndirect: %v", viaErr, directErr)
			}
			for _, ref := range []*mcp.CompleteReference{{Type: "ref/prompt", Name: testupstream.PromptName}, {Type: "ref/resource", URI: testupstream.ItemTemplate}} {
				p := &mcp.CompleteParams{Ref: ref, Argument: mcp.CompleteParamsArgument{Name: "name", Value: "a"}}
				via, err := c.Complete(ctx, p)
				if err != nil {
					t.Fatalf("complete %v: %v", ref, err)
				}
				direct, err := d.Complete(ctx, p)
				if err != nil {
					t.Fatal(err)
				}
				if a, b := mustJSON(t, via), mustJSON(t, direct); a != b || len(via.Completion.Values) == 0 {
					t.Errorf("completion %v differs\nproxy:  %s\ndirect: %s", ref, a, b)
				}
			}
		})
	}
}

// TestListsKeepTheUpstreamsOrder: servers in config order, each
// upstream's own order within, every page.
func TestListsKeepTheUpstreamsOrder(t *testing.T) {
	second := stdioUpstream("b", nil)
	second.Prefix = "b"
	e := startEnv(t, stdioUpstream("a", nil), second)
	c := connect(t, e, "http", nil)
	waitTool(t, c, "b__echo")
	d := listedTools(t, direct(t, nil))
	want := slices.Clone(d)
	for _, n := range d {
		want = append(want, "b__"+n)
	}
	if got := listedTools(t, c); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("tools\ngot  %v\nwant %v", got, want)
	}
}

func TestSubscriptionsAndUpdates(t *testing.T) {
	e := startEnv(t, stdioUpstream("up", nil))
	r := &recorder{}
	c := connect(t, e, "http", r)
	ctx := context.Background()
	if err := c.Subscribe(ctx, &mcp.SubscribeParams{URI: testupstream.TextURI}); err != nil {
		t.Fatal(err)
	}
	call(t, c, "touch", map[string]any{"uri": testupstream.TextURI})
	if got := r.waitNotes(t, "notifications/resources/updated", 1); got[0].field("uri") != testupstream.TextURI {
		t.Errorf("updated %s", got[0].params)
	}
	// Another session subscribed to the same URI; the first leaves it
	// and takes another: each hears what it is subscribed to.
	other := &recorder{}
	co := connect(t, e, "sse", other)
	if err := co.Subscribe(ctx, &mcp.SubscribeParams{URI: testupstream.TextURI}); err != nil {
		t.Fatal(err)
	}
	if err := c.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: testupstream.TextURI}); err != nil {
		t.Fatal(err)
	}
	if err := c.Subscribe(ctx, &mcp.SubscribeParams{URI: testupstream.BlobURI}); err != nil {
		t.Fatal(err)
	}
	call(t, co, "touch", map[string]any{"uri": testupstream.TextURI})
	call(t, co, "touch", map[string]any{"uri": testupstream.BlobURI})
	got := r.waitNotes(t, "notifications/resources/updated", 2)
	if len(got) != 2 || got[1].field("uri") != testupstream.BlobURI {
		t.Errorf("after unsubscribing text and subscribing blob: %v", got)
	}
	if got := other.waitNotes(t, "notifications/resources/updated", 1); len(got) != 1 || got[0].field("uri") != testupstream.TextURI {
		t.Errorf("the other session got %v", got)
	}
	// A session that subscribed to nothing hears nothing.
	none := &recorder{}
	cn := connect(t, e, "http", none)
	call(t, cn, "touch", map[string]any{"uri": testupstream.TextURI})
	other.waitNotes(t, "notifications/resources/updated", 2)
	if n := none.notesOf("notifications/resources/updated"); len(n) != 0 {
		t.Errorf("unsubscribed session got %d updates", len(n))
	}
}

// TestSubscriptionsAreForwardedOnce: the upstream is told of the first
// session's subscription to a URI and of the last one leaving it (by
// unsubscribing or by ending its session), not of the others.
func TestSubscriptionsAreForwardedOnce(t *testing.T) {
	e := startEnv(t, blockerUpstream("b"))
	ctx := context.Background()
	a := connect(t, e, "http", nil)
	b := connect(t, e, "sse", nil)
	ending := rawConnect(t, e, "stdio", `{}`)
	subs := func() string { return text(call(t, a, "subscriptions", nil)) }
	for _, step := range []struct {
		do   func() error
		want string
	}{
		{func() error { return a.Subscribe(ctx, &mcp.SubscribeParams{URI: "blocker://a"}) }, "subscribe=1 unsubscribe=0"},
		{func() error { return b.Subscribe(ctx, &mcp.SubscribeParams{URI: "blocker://a"}) }, "subscribe=1 unsubscribe=0"},
		{func() error { return a.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: "blocker://a"}) }, "subscribe=1 unsubscribe=0"},
		{func() error { return b.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: "blocker://a"}) }, "subscribe=1 unsubscribe=1"},
		{func() error {
			ending.mustRequest("resources/subscribe", map[string]any{"uri": "blocker://a"})
			return nil
		}, "subscribe=2 unsubscribe=1"},
		{func() error { return a.Subscribe(ctx, &mcp.SubscribeParams{URI: "blocker://a"}) }, "subscribe=2 unsubscribe=1"},
		{func() error { return a.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: "blocker://a"}) }, "subscribe=2 unsubscribe=1"},
	} {
		if err := step.do(); err != nil {
			t.Fatal(err)
		}
		if got := subs(); got != step.want {
			t.Fatalf("upstream told %s, want %s", got, step.want)
		}
	}
	// The stdio session, the last subscriber, ends.
	ending.close()
	testwait.For(t, "the upstream to be told", func() bool { return subs() == "subscribe=2 unsubscribe=2" })
	// So do HTTP and SSE sessions.
	for i, front := range []string{"http", "sse"} {
		c := connect(t, e, front, nil)
		if err := c.Subscribe(ctx, &mcp.SubscribeParams{URI: "blocker://a"}); err != nil {
			t.Fatal(err)
		}
		if got, want := subs(), fmt.Sprintf("subscribe=%d unsubscribe=%d", 3+i, 2+i); got != want {
			t.Fatalf("%s: upstream told %s, want %s", front, got, want)
		}
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
		want := fmt.Sprintf("subscribe=%d unsubscribe=%d", 3+i, 3+i)
		testwait.For(t, "the upstream to be told the "+front+" session ended", func() bool { return subs() == want })
	}
}

func TestCollidingResourcesArePrefixed(t *testing.T) {
	second := stdioUpstream("b", nil)
	second.Prefix = "b"
	e := startEnv(t, stdioUpstream("a", nil), second)
	c := connect(t, e, "http", nil)
	waitTool(t, c, "b__echo")
	ctx := context.Background()
	var res map[string]string
	testwait.For(t, "b's resources", func() bool {
		res = listedResources(t, c)
		_, ok := res["b+"+testupstream.TextURI]
		return ok
	})
	if _, ok := res[testupstream.TextURI]; !ok {
		t.Fatalf("first upstream's URI not kept: %v", res)
	}
	for _, tc := range []struct{ uri, want string }{
		{"b+" + testupstream.TextURI, testupstream.TextBody},
		{"b+test://items/7", `{"id":"7"}`},
		{testupstream.TextURI, testupstream.TextBody},
	} {
		got, err := c.ReadResource(ctx, &mcp.ReadResourceParams{URI: tc.uri})
		if err != nil {
			t.Fatalf("read %s: %v", tc.uri, err)
		}
		if rc := got.Contents[0]; rc.Text != tc.want || rc.URI != tc.uri {
			t.Errorf("read %s: %+v", tc.uri, rc)
		}
	}
	if _, ok := listedPrompts(t, c)["b__"+testupstream.PromptName]; !ok {
		t.Errorf("prefixed prompt missing")
	}
	res2, err := c.GetPrompt(ctx, &mcp.GetPromptParams{Name: "b__" + testupstream.PromptName, Arguments: map[string]string{"name": "grace"}})
	if err != nil || !strings.Contains(mustJSON(t, res2), "Greet grace") {
		t.Errorf("prefixed prompt: %v %v", res2, err)
	}
}

// TestEveryUpstreamTransport checks what depends on the upstream's
// transport (results, errors, requests to the client, notifications,
// resources, prompts) over stdio, SSE and streamable HTTP upstreams.
func TestEveryUpstreamTransport(t *testing.T) {
	for _, kind := range []string{config.TransportStdio, config.TransportSSE, config.TransportHTTPStreamable} {
		t.Run(kind, func(t *testing.T) {
			up := stdioUpstream("up", nil)
			if kind != config.TransportStdio {
				up = remoteUpstream(t, "up", kind)
			}
			e := startEnv(t, up)
			r := &recorder{}
			c := connect(t, e, "http", r, fullClient...)
			// Compared with a client of the same upstream over the same
			// transport.
			var d *mcp.ClientSession
			switch kind {
			case config.TransportStdio:
				d = direct(t, &recorder{}, fullClient...)
			case config.TransportSSE:
				d = connectOver(t, &mcp.SSEClientTransport{Endpoint: up.URL}, &recorder{}, fullClient...)
			default:
				d = connectOver(t, &mcp.StreamableClientTransport{Endpoint: up.URL, MaxRetries: -1}, &recorder{}, fullClient...)
			}
			ctx := context.Background()
			for _, tool := range []string{"mixed", "ask_sampling", "ask_elicitation", "ask_roots"} {
				if a, b := mustJSON(t, call(t, c, tool, nil)), mustJSON(t, call(t, d, tool, nil)); a != b {
					t.Errorf("%s differs\nproxy:  %s\ndirect: %s", tool, a, b)
				}
			}
			res, err := callErr(c, "tool_error", map[string]any{"message": "nope"})
			if !strings.Contains(fmt.Sprint(err)+mustJSON(t, res), "nope") {
				t.Errorf("tool_error: %v %s", err, mustJSON(t, res))
			}
			if via, direct := listedTools(t, c), listedTools(t, d); strings.Join(via, ",") != strings.Join(direct, ",") {
				t.Errorf("tools: proxy lists %v, direct %v", via, direct)
			}
			blob := &mcp.ReadResourceParams{URI: testupstream.BlobURI}
			via, err := c.ReadResource(ctx, blob)
			if err != nil {
				t.Fatal(err)
			}
			if db, _ := d.ReadResource(ctx, blob); mustJSON(t, via) != mustJSON(t, db) || string(via.Contents[0].Blob) != "\x00\x01\x02\x03\xfe\xff" {
				t.Errorf("blob: %s, direct %s", mustJSON(t, via), mustJSON(t, db))
			}
			if res, err := c.GetPrompt(ctx, &mcp.GetPromptParams{Name: testupstream.PromptName, Arguments: map[string]string{"name": "ada"}}); err != nil || len(res.Messages) != 3 {
				t.Errorf("prompt: %v %v", res, err)
			}
			if err := c.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "error"}); err != nil {
				t.Fatal(err)
			}
			call(t, c, "log", nil)
			if got := r.waitNotes(t, "notifications/message", 1); got[0].field("level") != "error" {
				t.Errorf("log: %s", got[0].params)
			}
			p := &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{"steps": 2, "ms": 1}}
			p.SetProgressToken("p-1")
			if _, err := c.CallTool(ctx, p); err != nil {
				t.Fatal(err)
			}
			for _, n := range r.waitNotes(t, "notifications/progress", 2) {
				if n.field("progressToken") != "p-1" {
					t.Errorf("progress %s", n.params)
				}
			}
		})
	}
}

func TestRootsListChangedReachesUpstreams(t *testing.T) {
	second := stdioUpstream("b", nil)
	second.Prefix = "b"
	e := startEnv(t, stdioUpstream("a", nil), second)
	cl, c := connectClient(t, e.transport(t, "http"), &recorder{}, "roots")
	waitTool(t, c, "b__roots_changed")
	cl.AddRoots(&mcp.Root{URI: "file:///new", Name: "new"})
	for _, tool := range []string{"roots_changed", "b__roots_changed"} {
		testwait.For(t, tool+" to hear roots/list_changed", func() bool { return text(call(t, c, tool, nil)) == "1" })
	}
}

func TestRemovedTemplateIsHidden(t *testing.T) {
	e := startEnv(t, stdioUpstream("up", nil))
	r := &recorder{}
	c := connect(t, e, "http", r)
	d := direct(t, nil)
	ctx := context.Background()
	read := &mcp.ReadResourceParams{URI: "test://items/1"}
	if _, err := c.ReadResource(ctx, read); err != nil {
		t.Fatalf("template read before removal: %v", err)
	}
	call(t, c, "drop_templates", nil)
	call(t, d, "drop_templates", nil)
	r.waitNotes(t, "notifications/resources/list_changed", 1)
	testwait.For(t, "the template to go", func() bool {
		res, err := c.ListResourceTemplates(ctx, nil)
		return err == nil && len(res.ResourceTemplates) == 0
	})
	// The read still goes to the only upstream, which answers as it
	// would a direct client.
	_, viaErr := c.ReadResource(ctx, read)
	var directErr error
	testwait.For(t, "the direct template to go", func() bool { _, directErr = d.ReadResource(ctx, read); return directErr != nil })
	if viaErr == nil || viaErr.Error() != directErr.Error() {
		t.Errorf("read of a removed template\nproxy:  %v\ndirect: %v", viaErr, directErr)
	}
	// Plain resources are untouched.
	if _, err := c.ReadResource(ctx, &mcp.ReadResourceParams{URI: testupstream.TextURI}); err != nil {
		t.Errorf("text resource after removal: %v", err)
	}
}

// TestUnlistedURIs: a URI no upstream lists goes to the only upstream
// offering resources, which answers as it would a direct client; with
// two, nothing says which, and it is not found.
func TestUnlistedURIs(t *testing.T) {
	read := &mcp.ReadResourceParams{URI: "test://unlisted"}
	ctx := context.Background()
	_, directErr := direct(t, nil).ReadResource(ctx, read)
	one := startEnv(t, stdioUpstream("up", nil))
	if _, err := connect(t, one, "http", nil).ReadResource(ctx, read); err == nil || err.Error() != directErr.Error() {
		t.Errorf("one upstream: %v, direct %v", err, directErr)
	}
	two := startEnv(t, stdioUpstream("a", nil), stdioUpstream("b", nil))
	if _, err := connect(t, two, "http", nil).ReadResource(ctx, read); err == nil || !strings.Contains(err.Error(), "no upstream lists it") {
		t.Errorf("two upstreams: %v", err)
	}
}

// TestMalformedClientMessageIsAnswered: garbage from a client is
// refused (a JSON-RPC error, or over HTTP a 4xx status) and the session
// goes on.
func TestMalformedClientMessageIsAnswered(t *testing.T) {
	e := startEnv(t, stdioUpstream("up", nil))
	bodies := []string{"not json", `{"jsonrpc":"1.0","id":901,"method":"tools/list"}`, `{"jsonrpc":"2.0","id":902,"method":"tools/call","params":"oops"}`}
	t.Run("http", func(t *testing.T) {
		c := connect(t, e, "http", nil)
		for _, body := range bodies {
			req, _ := http.NewRequest(http.MethodPost, e.url, strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set("Mcp-Session-Id", c.ID())
			req.Header.Set("Mcp-Protocol-Version", protocol)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode/100 == 4 {
				continue
			}
			// The answer may come as one SSE event.
			for _, line := range strings.Split(string(b), "\n") {
				if data, ok := strings.CutPrefix(line, "data: "); ok {
					b = []byte(data)
				}
			}
			var m struct {
				Error *struct{ Code int } `json:"error"`
			}
			if json.Unmarshal(b, &m) != nil || m.Error == nil || m.Error.Code >= -32000 {
				t.Errorf("%s: want a JSON-RPC error or a 4xx, got %d %s", body, resp.StatusCode, b)
			}
		}
		if got := text(call(t, c, "echo", map[string]any{"text": "fine"})); got != "fine" {
			t.Errorf("after garbage: %q", got)
		}
	})
	for _, body := range bodies {
		t.Run("stdio "+body, func(t *testing.T) {
			c := rawConnect(t, e, "stdio", `{}`)
			if err := c.send([]byte(body)); err != nil {
				t.Fatal(err)
			}
			resp, before, err := c.request("tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"text": "fine"}})
			if err != nil || !strings.Contains(string(resp.Result), `"fine"`) {
				t.Errorf("after garbage: %v %s", err, resp.Error)
			}
			// go-sdk answers requests concurrently: the garbage's error
			// (when it has an id) may come after the echo's answer.
			if len(before) == 0 {
				select {
				case m := <-c.in:
					before = append(before, m)
				case <-time.After(10 * time.Second):
				}
			}
			var e struct{ Code int }
			if len(before) != 1 || json.Unmarshal(before[0].Error, &e) != nil || e.Code >= -32000 {
				t.Errorf("garbage answered with %v, want one JSON-RPC error", before)
			}
		})
	}
}

// TestResultBytesPassThrough: an upstream's result reaches the client as
// its bytes, over every serving transport: unescaped <&>, escapes kept
// as written, fields no SDK knows. Only over legacy SSE does whitespace
// between tokens go.
func TestResultBytesPassThrough(t *testing.T) {
	e := startEnv(t, blockerUpstream("b"))
	// Over stdio and streamable HTTP the upstream's bytes are written as
	// they came (rawwire.go, httpconn.go); over legacy SSE go-sdk's
	// encoder compacts them (only whitespace between tokens goes).
	exact := `{"content": [{"type":"text","text":"<&> é \u00e9"}], "future":{"x": 1}}`
	compact := `{"content":[{"type":"text","text":"<&> é \u00e9"}],"future":{"x":1}}`
	for _, front := range fronts {
		want := compact
		if front == "stdio" || front == "http" {
			want = exact
		}
		c := rawConnect(t, e, front, `{}`)
		if got := c.mustRequest("tools/call", map[string]any{"name": "verbatim", "arguments": map[string]any{}}); string(got) != want {
			t.Errorf("%s:\ngot  %s\nwant %s", front, got, want)
		}
	}
}

// prettyUpstream is a minimal streamable-HTTP MCP server whose answers
// are JSON bodies laid out with line breaks between tokens (LF and
// CRLF), as some servers write them. Its one tool, "pretty", answers
// with result.
func prettyUpstream(t *testing.T, result string) config.Server {
	t.Helper()
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if r.Method != http.MethodPost || json.NewDecoder(r.Body).Decode(&m) != nil {
			http.Error(w, "no", http.StatusMethodNotAllowed)
			return
		}
		if m.ID == nil {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		var res string
		switch m.Method {
		case "initialize":
			res = "{\n  \"protocolVersion\": \"2025-11-25\",\n  \"capabilities\": {\"tools\": {}},\n  \"serverInfo\": {\"name\": \"pretty\", \"version\": \"1\"}\n}"
		case "tools/list":
			res = "{\n  \"tools\": [\r\n    {\"name\": \"pretty\", \"inputSchema\": {\"type\": \"object\"}}\n  ]\n}"
		case "tools/call":
			res = result
		default:
			res = "{}"
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, "{\n  \"jsonrpc\": \"2.0\",\n  \"id\": %s,\n  \"result\": %s\n}\n", m.ID, res)
	})
	ts := httptest.NewServer(h)
	t.Cleanup(func() { ts.CloseClientConnections(); ts.Close() })
	return config.Server{Name: "p", Transport: config.TransportHTTPStreamable, URL: ts.URL, Timeout: 10 * time.Second}
}

// TestPrettyResultPassesThrough: a result an HTTP upstream laid out over
// several lines reaches every kind of client intact. Over streamable
// HTTP serving its lines become data lines of one event, which a client
// joins with newlines: the upstream's bytes, CRLF read as LF. Over stdio
// it is compacted onto one line; go-sdk's client reads the same tool
// result over each.
func TestPrettyResultPassesThrough(t *testing.T) {
	result := "{\n  \"content\": [\r\n    {\"type\": \"text\", \"text\": \"a\\nb <&>\"}\n  ],\n  \"isError\": false\n}"
	e := startEnv(t, prettyUpstream(t, result))
	c := rawConnect(t, e, "http", `{}`)
	want := strings.ReplaceAll(result, "\r\n", "\n")
	if got := c.mustRequest("tools/call", map[string]any{"name": "pretty", "arguments": map[string]any{}}); string(got) != want {
		t.Errorf("raw HTTP client:\ngot  %q\nwant %q", got, want)
	}
	for _, front := range fronts {
		cs := connect(t, e, front, nil)
		if got := text(call(t, cs, "pretty", map[string]any{})); got != "a\nb <&>" {
			t.Errorf("%s: %q", front, got)
		}
	}
}
