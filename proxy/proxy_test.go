package proxy

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/scratchpad-mcp/scratchpad-mcp/config"
	"github.com/scratchpad-mcp/scratchpad-mcp/upstream"
)

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// fakeSession is a client session that records nothing and answers
// nothing.
type fakeSession struct{ id string }

func (s *fakeSession) ID() string                       { return s.id }
func (s *fakeSession) Capabilities() ClientCapabilities { return ClientCapabilities{} }
func (s *fakeSession) Request(context.Context, string, json.RawMessage) (json.RawMessage, error) {
	return nil, errors.New("not answering")
}
func (s *fakeSession) Notify(context.Context, string, json.RawMessage) error { return nil }

func TestDivertProgressStages(t *testing.T) {
	for _, tc := range []struct {
		name  string
		delay time.Duration
		size  int
		want  []string
	}{
		{"at once", -1, 100, []string{"a", "b", "c"}},
		{"never due", time.Hour, 100, nil},
		{"big: at once", time.Hour, progressAtOnce, []string{"a", "b", "c"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := New(Options{Logger: quiet(), ProgressDelay: tc.delay})
			pr := &progressRoute{token: "t", last: 7} // the upstream reached 7
			var got []map[string]any
			d := p.newDivertProgress(pr, tc.size)
			d.send = func(n map[string]any) { got = append(got, n) }
			d.stage("a")
			d.stage("b")
			d.stage("c")
			d.stop()
			d.stage("after stop")
			if len(got) != len(tc.want) {
				t.Fatalf("sent %v", got)
			}
			for i, n := range got {
				if n["message"] != "scratchpad-mcp: "+tc.want[i] || n["progress"] != float64(8+i) || n["progressToken"] != "t" {
					t.Errorf("notification %d: %v", i, n)
				}
			}
		})
	}
	var nilReporter *divertProgress // no token
	nilReporter.stage("no token: no-op")
	nilReporter.stop()
}

func TestUpstreamRequestsThatCannotBeServed(t *testing.T) {
	p := New(Options{Logger: quiet()})
	u := upstream.New(upstream.Options{Server: config.Server{Name: "lonely", Timeout: time.Second}, Logger: quiet()})
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // no client will attach: do not wait for one
	for _, tc := range []struct {
		method string
		code   int
		want   string
	}{
		{"sampling/createMessage", -32603, `no client request to "lonely" is in flight`},
		{"roots/list", -32603, "no client request"},
		{"elicitation/create", -32603, "no client request"},
		{"tools/call", -32601, "Method not found: tools/call"},
		{"", -32601, "Method not found"},
	} {
		_, err := p.onRequest(ctx, u, tc.method, json.RawMessage(`{}`))
		var rerr *upstream.RPCError
		if !errors.As(err, &rerr) || rerr.Code != tc.code || !strings.Contains(rerr.Message, tc.want) {
			t.Errorf("%q: got %v, want %d %q", tc.method, err, tc.code, tc.want)
		}
	}
}

// TestOnlyWaitsForTheSessionToInitialize: a request outside any call
// made while the only client is still initializing waits for it to
// attach; with two attached, nothing says which.
func TestOnlyWaitsForTheSessionToInitialize(t *testing.T) {
	p := New(Options{Logger: quiet()})
	ss := &p.sessions
	if s, n := ss.onlyWait(context.Background(), 10*time.Millisecond); s != nil || n != 0 {
		t.Fatalf("no session: %v %d", s, n)
	}
	a := &fakeSession{id: "a"}
	got := make(chan Session, 1)
	go func() {
		s, _ := ss.onlyWait(context.Background(), 20*time.Second)
		got <- s
	}()
	p.Attach(a)
	if s := <-got; s != a {
		t.Errorf("after attaching: %v", s)
	}
	p.Attach(&fakeSession{id: "b"})
	if s, n := ss.onlyWait(context.Background(), 20*time.Second); s != nil || n != 2 {
		t.Errorf("two sessions: %v %d", s, n)
	}
	p.Detach("b")
	if s, n := ss.onlyWait(context.Background(), 0); s != a || n != 1 {
		t.Errorf("after detaching b: %v %d", s, n)
	}
}

// capsSession declares caps and answers every request.
type capsSession struct {
	fakeSession
	caps  ClientCapabilities
	asked []string
}

func (s *capsSession) Capabilities() ClientCapabilities { return s.caps }
func (s *capsSession) Request(_ context.Context, method string, _ json.RawMessage) (json.RawMessage, error) {
	s.asked = append(s.asked, method)
	return json.RawMessage(`{}`), nil
}

// TestClientCapabilityDecides: an upstream's request reaches the calling
// client only if it declared the capability; otherwise the upstream gets
// -32601.
func TestClientCapabilityDecides(t *testing.T) {
	p := New(Options{Logger: quiet()})
	u := upstream.New(upstream.Options{Server: config.Server{Name: "up", Timeout: time.Second}, Logger: quiet()})
	form := `{"mode":"form","message":"name?"}`
	url := `{"mode":"url","message":"go","url":"https://x","elicitationId":"e"}`
	for _, tc := range []struct {
		caps           ClientCapabilities
		method, params string
		asked          bool
	}{
		{ClientCapabilities{}, "sampling/createMessage", `{}`, false},
		{ClientCapabilities{Sampling: true}, "sampling/createMessage", `{}`, true},
		{ClientCapabilities{}, "roots/list", `{}`, false},
		{ClientCapabilities{Roots: true}, "roots/list", `{}`, true},
		{ClientCapabilities{}, "elicitation/create", form, false},
		{ClientCapabilities{Elicitation: true}, "elicitation/create", form, true},
		{ClientCapabilities{Elicitation: true}, "elicitation/create", url, false},
		{ClientCapabilities{Elicitation: true, ElicitationURL: true}, "elicitation/create", url, true},
	} {
		s := &capsSession{fakeSession: fakeSession{id: "s"}, caps: tc.caps}
		end := p.sessions.begin(u, context.Background(), s) // a call in flight
		_, err := p.onRequest(context.Background(), u, tc.method, json.RawMessage(tc.params))
		end()
		var rerr *upstream.RPCError
		switch {
		case tc.asked && (err != nil || len(s.asked) != 1):
			t.Errorf("%s %+v: %v, asked %v", tc.method, tc.caps, err, s.asked)
		case !tc.asked && (!errors.As(err, &rerr) || rerr.Code != -32601 || len(s.asked) != 0):
			t.Errorf("%s %+v: %v, asked %v; want -32601", tc.method, tc.caps, err, s.asked)
		}
	}
}
