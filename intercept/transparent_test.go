package intercept

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/scratchpad-mcp/scratchpad-mcp/config"
	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testupstream"
	"github.com/scratchpad-mcp/scratchpad-mcp/upstream"
)

// fronts are the transports the proxy serves its clients over in these
// tests: the mcp-go streamable HTTP server and its stdio server (over
// pipes, in process).
var fronts = []string{"http", "stdio"}

// fakeClient answers what upstreams ask the client, and records what
// reached it.
type fakeClient struct {
	mu       sync.Mutex
	sampling []json.RawMessage
	elicit   []json.RawMessage
	roots    int
	notes    []mcp.JSONRPCNotification
	block    chan struct{} // when set, sampling answers once it is closed
}

func (f *fakeClient) CreateMessage(ctx context.Context, req mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
	b, _ := json.Marshal(req.CreateMessageParams)
	f.mu.Lock()
	f.sampling = append(f.sampling, b)
	block := f.block
	f.mu.Unlock()
	if block != nil {
		select {
		case <-block:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return &mcp.CreateMessageResult{
		SamplingMessage: mcp.SamplingMessage{Role: mcp.RoleAssistant, Content: mcp.NewTextContent("4")},
		Model:           "test-model", StopReason: "endTurn",
	}, nil
}

func (f *fakeClient) Elicit(ctx context.Context, req mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	b, _ := json.Marshal(req.Params)
	f.mu.Lock()
	f.elicit = append(f.elicit, b)
	f.mu.Unlock()
	res := &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{Action: mcp.ElicitationResponseActionAccept}}
	if req.Params.Mode != mcp.ElicitationModeURL {
		res.Content = map[string]any{"name": "ada"}
	}
	return res, nil
}

func (f *fakeClient) ListRoots(ctx context.Context, req mcp.ListRootsRequest) (*mcp.ListRootsResult, error) {
	f.mu.Lock()
	f.roots++
	f.mu.Unlock()
	return &mcp.ListRootsResult{Roots: []mcp.Root{{URI: "file:///work", Name: "work"}}}, nil
}

func (f *fakeClient) onNote(n mcp.JSONRPCNotification) {
	f.mu.Lock()
	f.notes = append(f.notes, n)
	f.mu.Unlock()
}

// notes returns the notifications with method received so far.
func (f *fakeClient) notesOf(method string) []mcp.JSONRPCNotification {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []mcp.JSONRPCNotification
	for _, n := range f.notes {
		if n.Method == method {
			out = append(out, n)
		}
	}
	return out
}

// waitNotes polls until at least n notifications with method arrived.
func (f *fakeClient) waitNotes(t *testing.T, method string, n int) []mcp.JSONRPCNotification {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		got := f.notesOf(method)
		if len(got) >= n {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("got %d %s notifications, want %d", len(got), method, n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// fullClient declares sampling, elicitation (form and URL) and roots.
func (f *fakeClient) options() []client.ClientOption {
	return []client.ClientOption{
		client.WithSamplingHandler(f), client.WithElicitationHandler(f), client.WithRootsHandler(f),
		client.WithClientCapabilities(mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapability{Form: &struct{}{}, URL: &struct{}{}}}),
	}
}

func initialize(t testing.TB, c *client.Client) {
	t.Helper()
	// Start's context lives as long as the connection: the stdio
	// transport's process and the HTTP listening stream end with it.
	if err := c.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	req := mcp.InitializeRequest{}
	req.Params.ProtocolVersion = mcp.LATEST_LEGACY_PROTOCOL_VERSION
	req.Params.ClientInfo = mcp.Implementation{Name: "test", Version: "1"}
	if _, err := c.Initialize(ctx, req); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
}

// connectFront connects a client to the proxy over front.
func connectFront(t testing.TB, p *proxy, front string, f *fakeClient, opts ...client.ClientOption) *client.Client {
	t.Helper()
	var tr transport.Interface
	switch front {
	case "http":
		h, err := transport.NewStreamableHTTP(p.url, transport.WithContinuousListening(), transport.WithHTTPLogger(quietLogger()))
		if err != nil {
			t.Fatal(err)
		}
		tr = h
	case "stdio":
		inR, inW := io.Pipe()
		outR, outW := io.Pipe()
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			defer close(done)
			_ = server.NewStdioServer(p.srv).Listen(ctx, inR, p.router.Output(outW))
		}()
		t.Cleanup(func() { cancel(); inW.Close(); outW.Close(); <-done })
		tr = transport.NewIO(outR, inW, nil)
	}
	c := client.NewClient(tr, opts...)
	if f != nil {
		c.OnNotification(f.onNote)
	}
	initialize(t, c)
	return c
}

// directTo connects a client straight to a fresh upstream process.
func directTo(t testing.TB, f *fakeClient, opts ...client.ClientOption) *client.Client {
	t.Helper()
	tr := transport.NewStdio(os.Args[0], append(os.Environ(), testupstream.EnvMode+"=stdio"))
	c := client.NewClient(tr, opts...)
	if f != nil {
		c.OnNotification(f.onNote)
	}
	initialize(t, c)
	return c
}

func callErr(c *client.Client, name string, args map[string]any) (*mcp.CallToolResult, error) {
	req := mcp.CallToolRequest{}
	req.Params.Name = name
	req.Params.Arguments = args
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return c.CallTool(ctx, req)
}

func mustJSON2(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestToolContentIsIdenticalToDirect(t *testing.T) {
	for _, front := range fronts {
		t.Run(front, func(t *testing.T) {
			p := startProxy(t, stdioUpstream("up", thresholds(t, "*", 100000)))
			c := connectFront(t, p, front, nil)
			waitTool(t, c, "mixed")
			d := directTo(t, nil)
			for _, tool := range []string{"mixed", "echo", "image", "fail", "structured"} {
				args := map[string]any{"text": "héllo", "n": 2}
				via, direct := call(t, c, tool, args), call(t, d, tool, args)
				if a, b := mustJSON2(t, via), mustJSON2(t, direct); a != b {
					t.Errorf("%s: proxy result differs from direct\nproxy:  %s\ndirect: %s", tool, a, b)
				}
			}
			// The raw bytes too: every content type, annotations, _meta,
			// structuredContent.
			raw := rawCall(t, p.url, "mixed")
			for _, want := range []string{`"type":"audio"`, `"type":"resource_link"`, `"blob":"` + testupstream.BlobBase64 + `"`, `"upstream/trace":"abc-123"`, `"structuredContent":{`, `"audience":["user"]`} {
				if !strings.Contains(string(raw), want) {
					t.Errorf("raw result lacks %s:\n%s", want, raw)
				}
			}
		})
	}
}

// rawCall calls a tool over streamable HTTP and returns the result bytes
// as sent.
func rawCall(t testing.TB, url, tool string) json.RawMessage {
	t.Helper()
	return rawRequest(t, url, "tools/call", map[string]any{"name": tool})
}

func TestUpstreamErrorKeepsMessage(t *testing.T) {
	p := startProxy(t, stdioUpstream("up", nil))
	c := connect(t, p.url)
	waitTool(t, c, "tool_error")
	d := directClient(t)
	args := map[string]any{"message": "quota exceeded for key 7"}
	_, viaErr := callErr(c, "tool_error", args)
	_, directErr := callErr(d, "tool_error", args)
	if viaErr == nil || directErr == nil {
		t.Fatalf("want JSON-RPC errors, got proxy %v direct %v", viaErr, directErr)
	}
	if viaErr.Error() != directErr.Error() {
		t.Errorf("error differs\nproxy:  %v\ndirect: %v", viaErr, directErr)
	}
	if !strings.Contains(viaErr.Error(), "quota exceeded for key 7") {
		t.Errorf("message lost: %v", viaErr)
	}
	// The session goes on.
	if got := text(call(t, c, "echo", map[string]any{"text": "still here"})); got != "still here" {
		t.Errorf("after the error: %q", got)
	}
}

func TestForwardErrorMapsCodes(t *testing.T) {
	modern := server.WithRequestProtocolInfo(context.Background(), &server.RequestProtocolInfo{Modern: true, ProtocolVersion: mcp.ProtocolVersion20260728})
	urlData := json.RawMessage(`{"elicitations":[{"mode":"url","message":"consent","url":"https://x","elicitationId":"e1"}]}`)
	for _, tc := range []struct {
		ctx     context.Context
		in      *RPCError
		wantMsg string
		url     bool
	}{
		{context.Background(), &RPCError{Code: -32602, Message: "bad argument x"}, "bad argument x", false},
		{context.Background(), &RPCError{Code: -32603, Message: "boom"}, "boom", false},
		// Passed on as it came (code, message, data) to legacy clients.
		{context.Background(), &RPCError{Code: mcp.URL_ELICITATION_REQUIRED, Message: "go there", Data: urlData}, "go there", false},
		// Protocol 2026-07-28 has no -32042: mcp-go asks through its
		// multi round-trip request instead.
		{modern, &RPCError{Code: mcp.URL_ELICITATION_REQUIRED, Message: "go there", Data: urlData}, "URL elicitation required: 1 elicitation(s) needed", true},
		{modern, &RPCError{Code: mcp.URL_ELICITATION_REQUIRED, Message: "no data"}, "no data", false},
	} {
		err := forwardError(tc.ctx, tc.in)
		msg := err.Error()
		var ue *UpstreamError
		if errors.As(err, &ue) {
			msg = ue.Error() // what restoring the code leaves of the text
		}
		if msg != tc.wantMsg {
			t.Errorf("%d: message %q, want %q", tc.in.Code, msg, tc.wantMsg)
		}
		var u mcp.URLElicitationRequiredError
		if got := errors.As(err, &u); got != tc.url {
			t.Errorf("%d: URLElicitationRequiredError=%v, want %v", tc.in.Code, got, tc.url)
		}
		var rerr *RPCError
		if !tc.url && (!errors.As(err, &rerr) || rerr.Code != tc.in.Code) {
			t.Errorf("%d: original code not reachable with errors.As", tc.in.Code)
		}
	}
}

func TestServerToClientRequestsReachTheCaller(t *testing.T) {
	for _, front := range fronts {
		t.Run(front, func(t *testing.T) {
			p := startProxy(t, stdioUpstream("up", nil))
			viaF, directF := &fakeClient{}, &fakeClient{}
			c := connectFront(t, p, front, viaF, viaF.options()...)
			waitTool(t, c, "ask_sampling")
			d := directTo(t, directF, directF.options()...)
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
			viaF.mu.Lock()
			directF.mu.Lock()
			defer viaF.mu.Unlock()
			defer directF.mu.Unlock()
			if len(viaF.sampling) != 1 || !bytes.Equal(viaF.sampling[0], directF.sampling[0]) {
				t.Errorf("sampling request differs\nproxy:  %s\ndirect: %s", viaF.sampling, directF.sampling)
			}
			if len(viaF.elicit) != 2 || !bytes.Equal(viaF.elicit[0], directF.elicit[0]) || !bytes.Equal(viaF.elicit[1], directF.elicit[1]) {
				t.Errorf("elicitation requests differ\nproxy:  %s\ndirect: %s", viaF.elicit, directF.elicit)
			}
			if viaF.roots != 1 {
				t.Errorf("roots/list reached the client %d times", viaF.roots)
			}
			viaF.mu.Unlock()
			directF.mu.Unlock()
			via := viaF.waitNotes(t, "notifications/elicitation/complete", 1)
			direct := directF.waitNotes(t, "notifications/elicitation/complete", 1)
			if a, b := mustJSON2(t, via[0].Params), mustJSON2(t, direct[0].Params); a != b {
				t.Errorf("elicitation/complete differs\nproxy:  %s\ndirect: %s", a, b)
			}
			viaF.mu.Lock()
			directF.mu.Lock()
		})
	}
}

func TestUndeclaredCapabilityIsAJSONRPCError(t *testing.T) {
	p := startProxy(t, stdioUpstream("up", nil))
	// Declares elicitation (form only) and nothing else.
	f := &fakeClient{}
	c := connectFront(t, p, "http", f, client.WithElicitationHandler(f))
	waitTool(t, c, "ask_sampling")
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
}

func TestClientThatNeverAnswersTimesOut(t *testing.T) {
	up := stdioUpstream("up", nil)
	up.Timeout = 4 * time.Second
	p := startProxy(t, up)
	release := make(chan struct{})
	f := &fakeClient{block: release}
	c := connectFront(t, p, "http", f, client.WithSamplingHandler(f))
	waitTool(t, c, "ask_sampling")
	res := call(t, c, "ask_sampling", nil)
	if !res.IsError || !strings.Contains(text(res), "did not answer") {
		t.Fatalf("want a clear timeout, got %q", text(res))
	}
	// The client answers late (the upstream's request is over by then),
	// then promptly.
	f.mu.Lock()
	f.block = nil
	f.mu.Unlock()
	close(release)
	if res := call(t, c, "ask_sampling", nil); res.IsError || !strings.Contains(text(res), `"model":"test-model"`) {
		t.Fatalf("session did not survive: %q", text(res))
	}
}

func TestUpstreamThatNeverAnswersTimesOut(t *testing.T) {
	up := stdioUpstream("up", nil)
	up.Timeout = 3 * time.Second
	p := startProxy(t, up)
	c := connect(t, p.url)
	waitTool(t, c, "hang")
	res := call(t, c, "hang", nil)
	if !res.IsError || !strings.Contains(text(res), "did not answer hang within 3s") {
		t.Fatalf("want a clear timeout, got %q", text(res))
	}
	if got := text(call(t, c, "echo", map[string]any{"text": "alive"})); got != "alive" {
		t.Fatalf("after the timeout: %q", got)
	}
}

func TestCancelReachesUpstream(t *testing.T) {
	p := startProxy(t, stdioUpstream("up", nil))
	c := connect(t, p.url)
	waitTool(t, c, "block")
	before := text(call(t, c, "cancelled", nil))
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		// Cancel once the call is in flight on the upstream.
		for {
			if _, ok := p.router.sess.caller(p.router.ups[0]); ok {
				cancel()
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()
	req := mcp.CallToolRequest{}
	req.Params.Name = "block"
	if _, err := c.CallTool(ctx, req); err == nil {
		t.Fatal("cancelled call succeeded")
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		if got := text(call(t, c, "cancelled", nil)); got != before {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the upstream never saw notifications/cancelled")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestLoggingHonoursSetLevel(t *testing.T) {
	for _, front := range fronts {
		t.Run(front, func(t *testing.T) {
			p := startProxy(t, stdioUpstream("up", nil))
			f := &fakeClient{}
			c := connectFront(t, p, front, f)
			waitTool(t, c, "log")
			ctx := context.Background()
			if err := c.SetLevel(ctx, mcp.SetLevelRequest{Params: mcp.SetLevelParams{Level: mcp.LoggingLevelWarning}}); err != nil {
				t.Fatal(err)
			}
			call(t, c, "log", nil)
			f.waitNotes(t, "notifications/message", 2)
			if err := c.SetLevel(ctx, mcp.SetLevelRequest{Params: mcp.SetLevelParams{Level: mcp.LoggingLevelDebug}}); err != nil {
				t.Fatal(err)
			}
			call(t, c, "log", nil)
			got := f.waitNotes(t, "notifications/message", 6)
			var levels []string
			for _, n := range got {
				levels = append(levels, fmt.Sprint(n.Params.AdditionalFields["level"]))
				if lg := n.Params.AdditionalFields["logger"]; lg != "testupstream" {
					t.Errorf("logger %v", lg)
				}
			}
			// The two calls' messages may interleave: mcp-go delivers
			// notifications on whichever stream is open.
			sort.Strings(levels[:2])
			sort.Strings(levels[2:])
			if want := "error warning debug error info warning"; strings.Join(levels, " ") != want {
				t.Errorf("levels %v, want %s", levels, want)
			}
		})
	}
}

func TestLogLevelFiltersPerSession(t *testing.T) {
	p := startProxy(t, stdioUpstream("up", nil))
	quiet, loud := &fakeClient{}, &fakeClient{}
	cq := connectFront(t, p, "http", quiet)
	cl := connectFront(t, p, "http", loud)
	waitTool(t, cq, "log")
	ctx := context.Background()
	_ = cq.SetLevel(ctx, mcp.SetLevelRequest{Params: mcp.SetLevelParams{Level: mcp.LoggingLevelError}})
	_ = cl.SetLevel(ctx, mcp.SetLevelRequest{Params: mcp.SetLevelParams{Level: mcp.LoggingLevelDebug}})
	call(t, cq, "log", nil)
	loud.waitNotes(t, "notifications/message", 4)
	quiet.waitNotes(t, "notifications/message", 1)
	call(t, cl, "echo", map[string]any{"text": "sync"})
	if got := quiet.notesOf("notifications/message"); len(got) != 1 || got[0].Params.AdditionalFields["level"] != "error" {
		t.Errorf("session at error got %d messages", len(got))
	}
}

// listed follows cursors through a list method with the client's typed
// calls and returns each item's JSON keyed by key.
func listedResources(t testing.TB, c *client.Client) map[string]string {
	t.Helper()
	out := map[string]string{}
	req := mcp.ListResourcesRequest{}
	for {
		res, err := c.ListResources(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range res.Resources {
			out[r.URI] = mustJSON2(t, r)
		}
		if res.NextCursor == "" {
			return out
		}
		req.Params.Cursor = res.NextCursor
	}
}

func listedPrompts(t testing.TB, c *client.Client) map[string]string {
	t.Helper()
	out := map[string]string{}
	req := mcp.ListPromptsRequest{}
	for {
		res, err := c.ListPrompts(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range res.Prompts {
			out[p.Name] = mustJSON2(t, p)
		}
		if res.NextCursor == "" {
			return out
		}
		req.Params.Cursor = res.NextCursor
	}
}

func listedTools(t testing.TB, c *client.Client) []string {
	t.Helper()
	var out []string
	req := mcp.ListToolsRequest{}
	for {
		res, err := c.ListTools(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		for _, tl := range res.Tools {
			out = append(out, tl.Name)
		}
		if res.NextCursor == "" {
			sort.Strings(out)
			return out
		}
		req.Params.Cursor = res.NextCursor
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
	for _, front := range fronts {
		t.Run(front, func(t *testing.T) {
			p := startProxy(t, stdioUpstream("up", nil))
			c := connectFront(t, p, front, nil)
			waitTool(t, c, "mixed")
			d := directTo(t, nil)
			ctx := context.Background()

			if via, direct := listedTools(t, c), listedTools(t, d); strings.Join(via, ",") != strings.Join(direct, ",") {
				t.Errorf("tools differ (pagination?)\nproxy:  %v\ndirect: %v", via, direct)
			}
			sameMap(t, "resource", listedResources(t, c), listedResources(t, d))
			sameMap(t, "prompt", listedPrompts(t, c), listedPrompts(t, d))

			vt, err := c.ListResourceTemplates(ctx, mcp.ListResourceTemplatesRequest{})
			if err != nil {
				t.Fatal(err)
			}
			dt, _ := d.ListResourceTemplates(ctx, mcp.ListResourceTemplatesRequest{})
			if a, b := mustJSON2(t, vt.ResourceTemplates), mustJSON2(t, dt.ResourceTemplates); a != b {
				t.Errorf("templates differ\nproxy:  %s\ndirect: %s", a, b)
			}

			for _, uri := range []string{testupstream.TextURI, testupstream.BlobURI, "test://items/42", "test://many/09"} {
				req := mcp.ReadResourceRequest{}
				req.Params.URI = uri
				via, err := c.ReadResource(ctx, req)
				if err != nil {
					t.Fatalf("read %s: %v", uri, err)
				}
				direct, _ := d.ReadResource(ctx, req)
				if a, b := mustJSON2(t, via), mustJSON2(t, direct); a != b {
					t.Errorf("read %s differs\nproxy:  %s\ndirect: %s", uri, a, b)
				}
			}

			get := mcp.GetPromptRequest{}
			get.Params.Name = testupstream.PromptName
			get.Params.Arguments = map[string]string{"name": "ada", "style": "formal"}
			via, err := c.GetPrompt(ctx, get)
			if err != nil {
				t.Fatal(err)
			}
			direct, _ := d.GetPrompt(ctx, get)
			if a, b := mustJSON2(t, via), mustJSON2(t, direct); a != b {
				t.Errorf("prompt differs\nproxy:  %s\ndirect: %s", a, b)
			}
			if len(via.Messages) != 3 {
				t.Errorf("prompt messages: %d", len(via.Messages))
			}
			get.Params.Arguments = nil
			_, viaErr := c.GetPrompt(ctx, get)
			_, directErr := d.GetPrompt(ctx, get)
			if viaErr == nil || directErr == nil || viaErr.Error() != directErr.Error() {
				t.Errorf("prompt error differs\nproxy:  %v\ndirect: %v", viaErr, directErr)
			}

			for _, ref := range []any{mcp.PromptReference{Type: "ref/prompt", Name: testupstream.PromptName}, mcp.ResourceReference{Type: "ref/resource", URI: testupstream.ItemTemplate}} {
				creq := mcp.CompleteRequest{}
				creq.Params.Ref = ref
				creq.Params.Argument.Name = "name"
				creq.Params.Argument.Value = "a"
				via, err := c.Complete(ctx, creq)
				if err != nil {
					t.Fatalf("complete %v: %v", ref, err)
				}
				direct, err := d.Complete(ctx, creq)
				if err != nil {
					t.Fatal(err)
				}
				if a, b := mustJSON2(t, via), mustJSON2(t, direct); a != b || len(via.Completion.Values) == 0 {
					t.Errorf("completion %v differs\nproxy:  %s\ndirect: %s", ref, a, b)
				}
			}
		})
	}
}

func TestSubscriptionsAndUpdates(t *testing.T) {
	p := startProxy(t, stdioUpstream("up", nil))
	f := &fakeClient{}
	c := connectFront(t, p, "http", f)
	waitTool(t, c, "touch")
	ctx := context.Background()
	sub := mcp.SubscribeRequest{}
	sub.Params.URI = testupstream.TextURI
	if err := c.Subscribe(ctx, sub); err != nil {
		t.Fatal(err)
	}
	call(t, c, "touch", map[string]any{"uri": testupstream.TextURI})
	got := f.waitNotes(t, "notifications/resources/updated", 1)
	if got[0].Params.AdditionalFields["uri"] != testupstream.TextURI {
		t.Errorf("updated %v", got[0].Params.AdditionalFields)
	}
	// Another session that did not subscribe hears nothing.
	other := &fakeClient{}
	co := connectFront(t, p, "http", other)
	unsub := mcp.UnsubscribeRequest{}
	unsub.Params.URI = testupstream.TextURI
	if err := c.Unsubscribe(ctx, unsub); err != nil {
		t.Fatal(err)
	}
	sub.Params.URI = testupstream.BlobURI
	if err := c.Subscribe(ctx, sub); err != nil {
		t.Fatal(err)
	}
	call(t, co, "touch", map[string]any{"uri": testupstream.TextURI})
	call(t, co, "touch", map[string]any{"uri": testupstream.BlobURI})
	got = f.waitNotes(t, "notifications/resources/updated", 2)
	if len(got) != 2 || got[1].Params.AdditionalFields["uri"] != testupstream.BlobURI {
		t.Errorf("after unsubscribing text and subscribing blob: %d updates, last %v", len(got), got[len(got)-1].Params.AdditionalFields)
	}
	if n := other.notesOf("notifications/resources/updated"); len(n) != 0 {
		t.Errorf("unsubscribed session got %d updates", len(n))
	}
}

func TestCollidingResourcesArePrefixed(t *testing.T) {
	second := stdioUpstream("b", nil)
	second.Prefix = "b"
	p := startProxy(t, stdioUpstream("a", nil), second)
	c := connect(t, p.url)
	waitTool(t, c, "b__echo")
	ctx := context.Background()
	var res map[string]string
	deadline := time.Now().Add(20 * time.Second)
	for {
		res = listedResources(t, c)
		if _, ok := res["b+"+testupstream.TextURI]; ok || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if _, ok := res[testupstream.TextURI]; !ok {
		t.Fatalf("first upstream's URI not kept: %v", res)
	}
	for _, tc := range []struct{ uri, want string }{
		{"b+" + testupstream.TextURI, testupstream.TextBody},
		{"b+test://items/7", `{"id":"7"}`},
		{testupstream.TextURI, testupstream.TextBody},
	} {
		req := mcp.ReadResourceRequest{}
		req.Params.URI = tc.uri
		got, err := c.ReadResource(ctx, req)
		if err != nil {
			t.Fatalf("read %s: %v", tc.uri, err)
		}
		tr, ok := got.Contents[0].(mcp.TextResourceContents)
		if !ok || tr.Text != tc.want || tr.URI != tc.uri {
			t.Errorf("read %s: %+v", tc.uri, got.Contents[0])
		}
	}
	prompts := listedPrompts(t, c)
	if _, ok := prompts["b__"+testupstream.PromptName]; !ok {
		t.Errorf("prefixed prompt missing: %v", prompts)
	}
	get := mcp.GetPromptRequest{}
	get.Params.Name = "b__" + testupstream.PromptName
	get.Params.Arguments = map[string]string{"name": "grace"}
	if res, err := c.GetPrompt(ctx, get); err != nil || !strings.Contains(mustJSON2(t, res), "Greet grace") {
		t.Errorf("prefixed prompt: %v %v", res, err)
	}
}

func TestPromptListChangedPropagates(t *testing.T) {
	p := startProxy(t, stdioUpstream("up", nil))
	f := &fakeClient{}
	c := connectFront(t, p, "http", f)
	waitTool(t, c, "add_prompt")
	call(t, c, "add_prompt", map[string]any{"name": "late_prompt"})
	f.waitNotes(t, "notifications/prompts/list_changed", 1)
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, ok := listedPrompts(t, c)["late_prompt"]; ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("late_prompt never listed")
		}
		time.Sleep(20 * time.Millisecond)
	}
	get := mcp.GetPromptRequest{}
	get.Params.Name = "late_prompt"
	if res, err := c.GetPrompt(context.Background(), get); err != nil || !strings.Contains(mustJSON2(t, res), "hello from late_prompt") {
		t.Errorf("late prompt: %v %v", res, err)
	}
}

func TestDivertReportsProgress(t *testing.T) {
	p := startProxyWith(t, Options{ProgressDelay: -1}, stdioUpstream("up", thresholds(t, "words", 10)))
	f := &fakeClient{}
	c := connectFront(t, p, "http", f)
	waitTool(t, c, "words")
	req := mcp.CallToolRequest{}
	req.Params.Name = "words"
	req.Params.Arguments = map[string]any{"n": 50}
	req.Params.Meta = &mcp.Meta{ProgressToken: "tok-9"}
	res, err := c.CallTool(context.Background(), req)
	if err != nil || !isPointer(res) {
		t.Fatalf("not diverted: %v", err)
	}
	// mcp-go sends notifications from another goroutine than the reply,
	// and on whichever stream is open: some may be lost or reordered. The
	// stages and their order are checked in TestDivertProgressStages.
	for _, n := range f.waitNotes(t, "notifications/progress", 1) {
		a := n.Params.AdditionalFields
		if a["progressToken"] != "tok-9" || !strings.HasPrefix(fmt.Sprint(a["message"]), "scratchpad-mcp: ") {
			t.Errorf("progress %v", a)
		}
	}
}

func TestDivertProgressStages(t *testing.T) {
	for _, tc := range []struct {
		name  string
		delay time.Duration
		want  []string
	}{
		{"at once", -1, []string{"a", "b", "c"}},
		{"never due", time.Hour, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pr := &progressRoute{token: "t", last: 7} // the upstream reached 7
			var got []map[string]any
			d := startDivertProgress(pr, tc.delay, func(p map[string]any) { got = append(got, p) })
			d.stage("a")
			d.stage("b")
			d.stage("c")
			d.stop()
			d.stage("after stop")
			if len(got) != len(tc.want) {
				t.Fatalf("sent %v", got)
			}
			for i, p := range got {
				if p["message"] != "scratchpad-mcp: "+tc.want[i] || p["progress"] != float64(8+i) || p["progressToken"] != "t" {
					t.Errorf("notification %d: %v", i, p)
				}
			}
		})
	}
	var nilReporter *divertProgress
	nilReporter.stage("no token: no-op")
	nilReporter.stop()
}

// remoteUpstream serves a fresh test upstream in process over kind
// (config.TransportSSE or config.TransportHTTPStreamable).
func remoteUpstream(t testing.TB, name, kind string) config.Server {
	t.Helper()
	var url string
	switch kind {
	case config.TransportSSE:
		ts := httptest.NewServer(testupstream.SSEHandler())
		t.Cleanup(ts.Close)
		url = ts.URL + "/sse"
	default:
		ts := httptest.NewServer(testupstream.Handler())
		t.Cleanup(ts.Close)
		url = ts.URL + "/mcp"
	}
	return config.Server{Name: name, Transport: kind, URL: url, Timeout: 10 * time.Second,
		RestartMaxAttempts: 20, RestartBackoffMax: 500 * time.Millisecond}
}

// TestEveryUpstreamTransport checks what depends on the upstream's
// transport (results, errors, requests to the client, notifications,
// resources, prompts) over stdio, SSE and streamable HTTP.
func TestEveryUpstreamTransport(t *testing.T) {
	for _, kind := range []string{config.TransportStdio, config.TransportSSE, config.TransportHTTPStreamable} {
		t.Run(kind, func(t *testing.T) {
			up := stdioUpstream("up", nil)
			if kind != config.TransportStdio {
				up = remoteUpstream(t, "up", kind)
			}
			p := startProxy(t, up)
			f := &fakeClient{}
			c := connectFront(t, p, "http", f, f.options()...)
			waitTool(t, c, "mixed")
			// Compared with a client of the same upstream over the same
			// transport: mcp-go's SSE server cannot send requests to a
			// client, so over SSE both see the same refusal.
			df := &fakeClient{}
			var d *client.Client
			switch kind {
			case config.TransportStdio:
				d = directTo(t, df, df.options()...)
			case config.TransportSSE:
				tr, err := transport.NewSSE(up.URL)
				if err != nil {
					t.Fatal(err)
				}
				d = client.NewClient(tr, df.options()...)
				initialize(t, d)
			default:
				tr, err := transport.NewStreamableHTTP(up.URL, transport.WithContinuousListening(), transport.WithHTTPLogger(quietLogger()))
				if err != nil {
					t.Fatal(err)
				}
				d = client.NewClient(tr, df.options()...)
				initialize(t, d)
			}
			ctx := context.Background()

			for _, tool := range []string{"mixed", "ask_sampling", "ask_elicitation", "ask_roots"} {
				via, direct := call(t, c, tool, nil), call(t, d, tool, nil)
				if a, b := mustJSON2(t, via), mustJSON2(t, direct); a != b {
					t.Errorf("%s differs\nproxy:  %s\ndirect: %s", tool, a, b)
				}
			}
			_, viaErr := callErr(c, "tool_error", map[string]any{"message": "nope"})
			if viaErr == nil || !strings.Contains(viaErr.Error(), "nope") {
				t.Errorf("tool_error: %v", viaErr)
			}
			if got := listedTools(t, c); len(got) != len(listedTools(t, d)) {
				t.Errorf("tools: proxy lists %d, direct %d", len(got), len(listedTools(t, d)))
			}
			req := mcp.ReadResourceRequest{}
			req.Params.URI = testupstream.BlobURI
			if via, err := c.ReadResource(ctx, req); err != nil || mustJSON2(t, via) != `{"contents":[{"uri":"test://blob","mimeType":"application/octet-stream","blob":"AAECA/7/"}]}` {
				t.Errorf("blob: %s %v", mustJSON2(t, via), err)
			}
			get := mcp.GetPromptRequest{}
			get.Params.Name = testupstream.PromptName
			get.Params.Arguments = map[string]string{"name": "ada"}
			if res, err := c.GetPrompt(ctx, get); err != nil || len(res.Messages) != 3 {
				t.Errorf("prompt: %v %v", res, err)
			}
			if err := c.SetLevel(ctx, mcp.SetLevelRequest{Params: mcp.SetLevelParams{Level: mcp.LoggingLevelError}}); err != nil {
				t.Fatal(err)
			}
			call(t, c, "log", nil)
			if got := f.waitNotes(t, "notifications/message", 1); got[0].Params.AdditionalFields["level"] != "error" {
				t.Errorf("log: %v", got[0].Params.AdditionalFields)
			}
			preq := mcp.CallToolRequest{}
			preq.Params.Name = "slow"
			preq.Params.Arguments = map[string]any{"steps": 2, "ms": 1}
			preq.Params.Meta = &mcp.Meta{ProgressToken: "p-1"}
			if _, err := c.CallTool(ctx, preq); err != nil {
				t.Fatal(err)
			}
			for _, n := range f.waitNotes(t, "notifications/progress", 2) {
				if n.Params.AdditionalFields["progressToken"] != "p-1" {
					t.Errorf("progress token %v", n.Params.AdditionalFields["progressToken"])
				}
			}
		})
	}
}

func TestUpstreamRequestsThatCannotBeServed(t *testing.T) {
	r := New(Options{Logger: quietLogger(), Agent: func(context.Context) (*Agent, error) { return &Agent{}, nil }})
	r.Attach(server.NewMCPServer("p", "1"))
	u := upstream.New(upstream.Options{Server: config.Server{Name: "lonely"}, Logger: quietLogger()})
	for _, tc := range []struct {
		method string
		code   int
		want   string
	}{
		{"sampling/createMessage", -32603, `no client request to "lonely" is in flight`},
		{"roots/list", -32603, "no client request"},
		{"tools/call", -32601, "Method not found: tools/call"},
		{"", -32601, "Method not found"},
	} {
		_, err := r.onRequest(u, context.Background(), tc.method, json.RawMessage(`{}`))
		var rerr *RPCError
		if !errors.As(err, &rerr) || rerr.Code != tc.code || !strings.Contains(rerr.Message, tc.want) {
			t.Errorf("%q: got %v, want %d %q", tc.method, err, tc.code, tc.want)
		}
	}
}

func TestRootsListChangedReachesUpstreams(t *testing.T) {
	second := stdioUpstream("b", nil)
	second.Prefix = "b"
	p := startProxy(t, stdioUpstream("a", nil), second)
	f := &fakeClient{}
	c := connectFront(t, p, "http", f, client.WithRootsHandler(f))
	waitTool(t, c, "roots_changed")
	waitTool(t, c, "b__roots_changed")
	if err := c.RootListChanges(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, tool := range []string{"roots_changed", "b__roots_changed"} {
		deadline := time.Now().Add(10 * time.Second)
		for text(call(t, c, tool, nil)) != "1" {
			if time.Now().After(deadline) {
				t.Fatalf("%s: the upstream never heard roots/list_changed", tool)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

func TestRemovedTemplateIsHidden(t *testing.T) {
	p := startProxy(t, stdioUpstream("up", nil))
	f := &fakeClient{}
	c := connectFront(t, p, "http", f)
	waitTool(t, c, "drop_templates")
	ctx := context.Background()
	read := mcp.ReadResourceRequest{}
	read.Params.URI = "test://items/1"
	if _, err := c.ReadResource(ctx, read); err != nil {
		t.Fatalf("template read before removal: %v", err)
	}
	call(t, c, "drop_templates", nil)
	deadline := time.Now().Add(10 * time.Second)
	for {
		res, err := c.ListResourceTemplates(ctx, mcp.ListResourceTemplatesRequest{})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.ResourceTemplates) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("removed template still listed: %v", mustJSON2(t, res.ResourceTemplates))
		}
		time.Sleep(20 * time.Millisecond)
	}
	// The read still goes to the only upstream, which answers as it
	// would a direct client: not found.
	if _, err := c.ReadResource(ctx, read); err == nil || !strings.Contains(err.Error(), "handler not found for resource URI 'test://items/1'") {
		t.Errorf("read of a removed template: %v", err)
	}
	// Plain resources are untouched.
	read.Params.URI = testupstream.TextURI
	if _, err := c.ReadResource(ctx, read); err != nil {
		t.Errorf("text resource after removal: %v", err)
	}
}

func TestMalformedClientMessageIsAnswered(t *testing.T) {
	p := startProxy(t, stdioUpstream("up", nil))
	c := connect(t, p.url)
	waitTool(t, c, "echo")
	for _, body := range []string{"not json", `{"jsonrpc":"1.0","id":1,"method":"tools/list"}`, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":"oops"}`} {
		req, _ := http.NewRequest(http.MethodPost, p.url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Session-Id", c.GetSessionId())
		req.Header.Set("Mcp-Protocol-Version", mcp.LATEST_LEGACY_PROTOCOL_VERSION)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		// The answer may come as one SSE event.
		for _, line := range strings.Split(string(b), "\n") {
			if data, ok := strings.CutPrefix(line, "data: "); ok {
				b = []byte(data)
			}
		}
		var m struct {
			Error *RPCError `json:"error"`
		}
		if json.Unmarshal(b, &m) != nil || m.Error == nil || m.Error.Code >= -32000 {
			t.Errorf("%s: want a JSON-RPC error, got %d %s", body, resp.StatusCode, b)
		}
	}
	if got := text(call(t, c, "echo", map[string]any{"text": "fine"})); got != "fine" {
		t.Errorf("after garbage: %q", got)
	}
}

// TestUnlistedURIs: a URI no upstream lists goes to the only upstream
// offering resources, which answers as it would a direct client; with
// two, nothing says which, and it is not found.
func TestUnlistedURIs(t *testing.T) {
	read := mcp.ReadResourceRequest{}
	read.Params.URI = "test://unlisted"
	one := startProxy(t, stdioUpstream("up", nil))
	c := connectFront(t, one, "http", nil)
	if _, err := c.ReadResource(context.Background(), read); err == nil || !strings.Contains(err.Error(), "handler not found for resource URI 'test://unlisted'") {
		t.Errorf("one upstream: %v", err)
	}
	two := startProxy(t, stdioUpstream("a", nil), stdioUpstream("b", nil))
	c = connectFront(t, two, "http", nil)
	if _, err := c.ReadResource(context.Background(), read); err == nil || !strings.Contains(err.Error(), "no upstream lists it") {
		t.Errorf("two upstreams: %v", err)
	}
	// The catch-all that routes them is not listed.
	res, err := c.ListResourceTemplates(context.Background(), mcp.ListResourceTemplatesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tm := range res.ResourceTemplates {
		if tm.URITemplate.Raw() == catchAllTemplate {
			t.Errorf("catch-all template listed")
		}
	}
}
