package server

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testredis"
	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testwait"
	"github.com/scratchpad-mcp/scratchpad-mcp/state"
	"github.com/scratchpad-mcp/scratchpad-mcp/tool"
)

// sseEvent is one event of a stream as the client reads it.
type sseEvent struct{ id, data string }

// readEvents sends r's events on the channel, closed when r ends.
func readEvents(r io.Reader) <-chan sseEvent {
	out := make(chan sseEvent, 64)
	go func() {
		defer close(out)
		sc := bufio.NewScanner(r)
		var ev sseEvent
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				out <- ev
				ev = sseEvent{}
			case strings.HasPrefix(line, "id: "):
				ev.id = line[len("id: "):]
			case strings.HasPrefix(line, "data: "):
				ev.data += line[len("data: "):]
			}
		}
	}()
	return out
}

// A 2025 client whose POST stream broke after its prime event resumes it
// (GET, Last-Event-ID) on the other replica: it gets the call's progress
// and answer, made on the first replica, under the ids the first replica
// gave them, and the stream ends after the answer, as it would there;
// whether the answer comes after the resumption (relayed as it is made)
// or before (replayed from the first replica's store). A stream no
// replica keeps is answered 400 with the reason.
func TestStreamResumedOnAnotherReplica(t *testing.T) {
	rs := testredis.Start(t)
	mk := func() *state.Redis {
		st, err := state.NewRedis(state.RedisOptions{URL: rs.URL(), Prefix: "resume", Timeout: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		return st
	}
	// The call in progress: its session, and what lets it go on.
	type callOf struct {
		session string
		proceed chan struct{}
	}
	var current atomic.Pointer[callOf]
	var srvA *Server
	slow := tool.Def{Name: "slow", InputSchema: json.RawMessage(`{"type":"object"}`),
		Handler: func(ctx context.Context, _ json.RawMessage) tool.Result {
			c := current.Load()
			var se *session
			for _, l := range srvA.live() {
				if l.id == c.session {
					se = l
				}
			}
			select {
			case <-c.proceed:
			case <-ctx.Done():
				return tool.Text("cancelled")
			}
			if err := se.serverSession().NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: "p-1", Progress: 1}); err != nil {
				t.Errorf("progress: %v", err)
			}
			return tool.Text("late answer")
		}}
	storeA := newMemoryEvents(0)
	hopts := StreamableHTTPOptions{ResumeWindow: time.Minute}
	hoptsA := hopts
	hoptsA.EventStore = storeA
	a, sa := replicaTools(t, mk(), 0, hoptsA, slow)
	srvA = sa
	b, _ := replicaTools(t, mk(), 0, hopts, slow)

	for _, tc := range []struct {
		name     string
		answered bool // the answer is made before the resumption
		back     bool // the client leaves B's resumption and resumes on A
	}{
		{"answer after the resumption", false, false},
		{"answer before the resumption", true, false},
		{"resumed on B, then on A", false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			alice := openRaw(t, a.URL, "alice")
			go_ := make(chan struct{})
			current.Store(&callOf{alice.id, go_})

			// The call on A; the client drops its stream after the prime.
			post := alice.do(http.MethodPost, a.URL, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"slow","arguments":{},"_meta":{"progressToken":"p-1"}}}`)
			prime := <-readEvents(post.Body)
			post.Body.Close()
			stream, last, ok := parseEventID(prime.id)
			if !ok || prime.data != "" {
				t.Fatalf("first event of the POST stream: %+v, want a prime event", prime)
			}

			if tc.answered {
				close(go_)
				testwait.For(t, "the answer kept in A's store", func() bool {
					n := 0
					for _, err := range storeA.After(context.Background(), alice.id, stream, last) {
						if err != nil {
							return false
						}
						n++
					}
					return n == 2
				})
			}

			// The resumption on B. A answers 409 until it has seen the
			// client leave.
			get := resume(t, b.URL, alice.id, prime.id)
			if tc.back {
				get.Body.Close()
				get = resume(t, a.URL, alice.id, prime.id)
			}
			defer get.Body.Close()
			if get.StatusCode != http.StatusOK {
				body, _ := io.ReadAll(get.Body)
				t.Fatalf("resumption: %d %s", get.StatusCode, body)
			}
			sent := time.Now()
			if !tc.answered {
				close(go_) // B carries the stream now: the call goes on
			}
			var got []sseEvent
			events := readEvents(get.Body)
			timeout := time.After(20 * time.Second)
		read:
			for {
				select {
				case ev, open := <-events:
					if !open {
						break read
					}
					got = append(got, ev)
				case <-timeout:
					t.Fatalf("the resumed stream got %+v and did not end", got)
				}
			}
			t.Logf("the answer %s after the call went on", time.Since(sent).Round(10*time.Microsecond))
			if len(got) != 2 {
				t.Fatalf("resumed stream: %+v, want the progress and the answer", got)
			}
			for i, want := range []string{`"notifications/progress"`, `late answer`} {
				if !strings.Contains(got[i].data, want) {
					t.Errorf("event %d: %s, want %s", i, got[i].data, want)
				}
				if id := stream + "_" + string(rune('0'+last+1+i)); got[i].id != id {
					t.Errorf("event %d has id %q, want %q (A's)", i, got[i].id, id)
				}
			}
		})
	}
	testKeptNowhere(t, a.URL, b.URL)
}

// resume is a client's resumption of its stream after lastID on base, once
// the replica holding the stream has seen its previous response go.
func resume(t *testing.T, base, session, lastID string) *http.Response {
	t.Helper()
	var get *http.Response
	testwait.For(t, "the resumption taken", func() bool {
		req, _ := http.NewRequest(http.MethodGet, base, nil)
		req.Header.Set("Accept", "text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		req.Header.Set("X-Test-Owner", "alice")
		req.Header.Set("Mcp-Session-Id", session)
		req.Header.Set("Last-Event-ID", lastID)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode == http.StatusConflict {
			resp.Body.Close()
			return false
		}
		get = resp
		return true
	})
	return get
}

func testKeptNowhere(t *testing.T, a, b string) {
	t.Run("kept nowhere", func(t *testing.T) {
		alice := openRaw(t, a, "alice")
		for _, base := range []string{a, b} {
			req, _ := http.NewRequest(http.MethodGet, base, nil)
			req.Header.Set("Accept", "text/event-stream")
			req.Header.Set("X-Test-Owner", "alice")
			req.Header.Set("Mcp-Session-Id", alice.id)
			req.Header.Set("Last-Event-ID", "NOSUCHSTREAM_3")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), "cannot replay the stream") {
				t.Errorf("resuming a stream kept nowhere on %s: %d %s, want 400 with the reason", base, resp.StatusCode, body)
			}
		}
	})
}

// A client that leaves its resumption on B leaves its call as it would a
// response on A: the replica running it hears so, and the resumption
// window, stopped while B carried the stream, runs again and cancels the
// call.
func TestResumptionLeftOnAnotherReplica(t *testing.T) {
	rs := testredis.Start(t)
	mk := func() *state.Redis {
		st, err := state.NewRedis(state.RedisOptions{URL: rs.URL(), Prefix: "resume-left", Timeout: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		return st
	}
	cancelled := make(chan error, 1)
	block := tool.Def{Name: "block", InputSchema: json.RawMessage(`{"type":"object"}`),
		Handler: func(ctx context.Context, _ json.RawMessage) tool.Result {
			<-ctx.Done()
			cancelled <- context.Cause(ctx)
			return tool.Text("cancelled")
		}}
	hopts := StreamableHTTPOptions{ResumeWindow: 2 * time.Second}
	a, _ := replicaTools(t, mk(), 0, hopts, block)
	b, _ := replicaTools(t, mk(), 0, hopts, block)
	alice := openRaw(t, a.URL, "alice")
	post := alice.do(http.MethodPost, a.URL, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"block","arguments":{}}}`)
	prime := <-readEvents(post.Body)
	post.Body.Close()
	get := resume(t, b.URL, alice.id, prime.id)
	if get.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(get.Body)
		t.Fatalf("resumption on B: %d %s", get.StatusCode, body)
	}
	select {
	case err := <-cancelled:
		t.Fatalf("the call was cancelled while B carried its stream: %v", err)
	default:
	}
	get.Body.Close() // the client leaves B too
	select {
	case err := <-cancelled:
		if !errors.Is(err, ErrClientGone) {
			t.Errorf("the call ended with %v, want %v", err, ErrClientGone)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the call runs on after its client left B's resumption: A never heard it left")
	}
}
