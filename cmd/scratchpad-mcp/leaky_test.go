//lint:file-ignore SA1019 sampling and logging are channels this test checks are masked (deprecated in 2026-07-28, still served)
package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testupstream"
)

// teeTransport keeps every byte the server answers (bodies and event
// streams alike).
type teeTransport struct {
	mu  sync.Mutex
	got bytes.Buffer
}

func (t *teeTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	resp.Body = &teeBody{ReadCloser: resp.Body, t: t}
	return resp, nil
}

func (t *teeTransport) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.got.String()
}

type teeBody struct {
	io.ReadCloser
	t *teeTransport
}

func (b *teeBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.t.mu.Lock()
	b.t.got.Write(p[:n])
	b.t.mu.Unlock()
	return n, err
}

// leakyConfig is a config whose one upstream plants credentials in every
// kind of message (testupstream.Leaky), speaking 2025 so that it asks
// its client mid-call.
func leakyConfig(t *testing.T) string {
	cfg, _ := writeConfig(t, fmt.Sprintf("\n[mcp.servers.leaky]\ntransport = \"stdio\"\ncmd = [%q]\nenv = { SCRATCHPAD_TESTUPSTREAM = %q }\nprotocol = \"2025-11-25\"\n", upstreamCmd(), testupstream.LeakyMode))
	return cfg
}

// Redaction is one stage every upstream message passes (issue 53): a
// planted credential reaches the client in none of the channels an
// upstream has — the listings (tool and parameter descriptions,
// resources, prompts), a JSON-RPC error's message and data, progress and
// log notifications, an elicitation's and a sampling request's params
// (in 2026-07-28, the input-required question), a token cut across two
// text items, a resource read, a prompt — in either era.
func TestRedactionOnEveryChannel(t *testing.T) {
	for _, version := range []string{"2026-07-28", "2025-11-25"} {
		t.Run(version, func(t *testing.T) {
			// A server (and upstream) of its own: what makes the upstream
			// log is this era's request alone, not a level another era set.
			base := startHTTP(t, "http", leakyConfig(t))
			tee := &teeTransport{}
			asked := make(chan string, 4)
			logged := make(chan string, 16)
			c := mcp.NewClient(&mcp.Implementation{Name: "leak-test", Version: "1"}, &mcp.ClientOptions{
				ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					asked <- req.Params.Message
					return &mcp.ElicitResult{Action: "decline"}, nil
				},
				CreateMessageHandler: func(_ context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
					return &mcp.CreateMessageResult{Role: "assistant", Model: "m", Content: &mcp.TextContent{Text: "fine"}}, nil
				},
				ProgressNotificationHandler: func(context.Context, *mcp.ProgressNotificationClientRequest) {},
				LoggingMessageHandler: func(_ context.Context, req *mcp.LoggingMessageRequest) {
					if req.Params.Logger == "leaky" {
						logged <- fmt.Sprint(req.Params.Data)
					}
				},
			})
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: base + "/mcp", HTTPClient: &http.Client{Transport: tee}}, &mcp.ClientSessionOptions{ProtocolVersion: version})
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			_ = cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "debug"}) // 2025; the envelope's in 2026
			waitForTool(t, cs, "leak_split")
			if _, err := cs.ListResources(ctx, nil); err != nil {
				t.Fatal(err)
			}
			if _, err := cs.ListPrompts(ctx, nil); err != nil {
				t.Fatal(err)
			}
			for _, name := range []string{"leak_error", "leak_progress", "leak_log", "leak_elicit", "leak_sample", "leak_split"} {
				p := &mcp.CallToolParams{Name: name, Arguments: map[string]any{}}
				if version == "2026-07-28" {
					// The level goes with each request in this revision.
					p.Meta = mcp.Meta{mcp.MetaKeyLogLevel: "debug"}
				}
				p.SetProgressToken("pt-" + name)
				res, err := cs.CallTool(ctx, p)
				if name == "leak_split" && err == nil {
					// What the model reads: the items one after the other.
					if joined := resultText(res); strings.Contains(joined, testupstream.Leaked["split result"]) || !strings.Contains(joined, "[REDACTED:github-pat:") {
						t.Errorf("leak_split joined: %q", joined)
					}
				}
				switch {
				case name == "leak_error" && err == nil:
					t.Errorf("leak_error: no error: %+v", res)
				case name != "leak_error" && err != nil:
					t.Errorf("%s: %v", name, err)
				}
			}
			if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "leak://config"}); err != nil {
				t.Errorf("read: %v", err)
			}
			if _, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "leak_prompt"}); err != nil {
				t.Errorf("prompt: %v", err)
			}
			select {
			case q := <-asked:
				if !strings.Contains(q, "[REDACTED:") {
					t.Errorf("the elicitation came without its mask: %q", q)
				}
			default:
				t.Error("the elicitation never reached the client")
			}
			// The log message reaches the client, masked: over 2025 as the
			// session's, over 2026-07-28 on the call's answer (the request
			// asked for logs in its envelope; the upstream, a 2025 one,
			// names no request).
			select {
			case l := <-logged:
				if !strings.Contains(l, "[REDACTED:") {
					t.Errorf("the log message came without its mask: %q", l)
				}
			case <-time.After(5 * time.Second):
				t.Error("leak_log's log message never reached the client")
			}
			got := tee.String()
			for where, secret := range testupstream.Leaked {
				if strings.Contains(got, secret) || strings.Contains(got, secret[4:]) {
					t.Errorf("the %s's secret reached the client", where)
				}
			}
			if !strings.Contains(got, "[REDACTED:github-pat:") {
				t.Errorf("no mask on the wire at all:\n%.2000s", got)
			}
		})
	}
}
