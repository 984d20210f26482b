package server

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// replay is what After yields, as strings, or its error.
func replay(m *memoryEvents, session, stream string, index int) ([]string, error) {
	var out []string
	for d, err := range m.After(context.Background(), session, stream, index) {
		if err != nil {
			return out, err
		}
		out = append(out, string(d))
	}
	return out, nil
}

func appendAll(t *testing.T, m *memoryEvents, session, stream string, events ...string) {
	t.Helper()
	for _, e := range events {
		if err := m.Append(context.Background(), session, stream, []byte(e)); err != nil {
			t.Fatal(err)
		}
	}
}

func TestMemoryEvents(t *testing.T) {
	ctx := context.Background()
	type check struct {
		session, stream string
		after           int
		want            string // events joined with ","; "purged" or "unknown" for the error
	}
	for _, c := range []struct {
		name   string
		max    int
		do     func(m *memoryEvents)
		checks []check
	}{
		{name: "replays after an index", max: 100,
			do: func(m *memoryEvents) { appendAll(t, m, "a", "s", "e0", "e1", "e2") },
			checks: []check{{"a", "s", -1, "e0,e1,e2"}, {"a", "s", 0, "e1,e2"}, {"a", "s", 2, ""}, {"a", "s", 5, ""},
				{"a", "other", -1, "purged"}, {"b", "s", -1, "unknown"}}},
		{name: "evicts oldest first across sessions", max: 8,
			do: func(m *memoryEvents) {
				appendAll(t, m, "a", "s", "a0", "a1")
				appendAll(t, m, "b", "s", "b0", "b1", "b2")
			},
			// 10 bytes for a bound of 8: a0 goes, a1 stays.
			checks: []check{{"a", "s", -1, "purged"}, {"a", "s", 0, "a1"}, {"a", "s", 1, ""},
				{"b", "s", -1, "b0,b1,b2"}}},
		{name: "an event over the bound takes its place only", max: 8,
			do: func(m *memoryEvents) {
				appendAll(t, m, "a", "s", "e0", "e1", "way too big", "e3")
			},
			checks: []check{{"a", "s", -1, "purged"}, {"a", "s", 1, "purged"}, {"a", "s", 2, "e3"}, {"a", "s", 3, ""}}},
		{name: "skip keeps indexes", max: 100,
			do: func(m *memoryEvents) {
				appendAll(t, m, "a", "s", "e0")
				m.skip("a", "s")
				appendAll(t, m, "a", "s", "e2")
			},
			checks: []check{{"a", "s", 0, "purged"}, {"a", "s", 1, "e2"}}},
		{name: "a prime event is kept, empty", max: 100,
			do: func(m *memoryEvents) {
				_ = m.Append(ctx, "a", "s", nil)
				appendAll(t, m, "a", "s", "e1")
			},
			checks: []check{{"a", "s", -1, ",e1"}}},
		{name: "a closed session is forgotten", max: 100,
			do: func(m *memoryEvents) {
				appendAll(t, m, "a", "s", "e0")
				appendAll(t, m, "b", "s", "f0")
				_ = m.SessionClosed(ctx, "a")
			},
			checks: []check{{"a", "s", -1, "unknown"}, {"b", "s", -1, "f0"}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := newMemoryEvents(c.max)
			c.do(m)
			for _, k := range c.checks {
				got, err := replay(m, k.session, k.stream, k.after)
				var g string
				switch {
				case errors.Is(err, mcp.ErrEventsPurged):
					g = "purged"
				case err != nil && strings.Contains(err.Error(), "unknown session"):
					g = "unknown"
				case err != nil:
					g = err.Error()
				default:
					g = strings.Join(got, ",")
				}
				if g != k.want {
					t.Errorf("After(%s, %s, %d) = %q, want %q", k.session, k.stream, k.after, g, k.want)
				}
			}
			if m.n > m.maxBytes {
				t.Errorf("%d bytes kept, bound %d", m.n, m.maxBytes)
			}
		})
	}
}

// TestMemoryEventsBoundsStreams: a long session keeps its last finished
// streams, not all of them, and what it holds does not grow with the
// number of calls it made.
func TestMemoryEventsBoundsStreams(t *testing.T) {
	m := newMemoryEvents(1 << 20)
	const calls = 10 * maxDoneStreams
	for i := range calls {
		id := fmt.Sprint("s", i)
		appendAll(t, m, "a", id, "", "answer")
		m.streamDone("a", id)
	}
	if n := len(m.sessions["a"].streams); n != maxDoneStreams {
		t.Errorf("%d streams kept, want %d", n, maxDoneStreams)
	}
	if _, err := replay(m, "a", "s0", 0); !errors.Is(err, mcp.ErrEventsPurged) {
		t.Errorf("the first stream: %v, want purged", err)
	}
	if got, err := replay(m, "a", fmt.Sprint("s", calls-1), 0); err != nil || len(got) != 1 || got[0] != "answer" {
		t.Errorf("the last stream: %v %v", got, err)
	}
	if m.count != 2*maxDoneStreams || m.n != len("answer")*maxDoneStreams {
		t.Errorf("kept %d events, %d bytes", m.count, m.n)
	}
	if q := len(m.queue) - m.head; q > 2*m.count+1024+1 {
		t.Errorf("%d queued references for %d events", q, m.count)
	}
}

// TestMemoryEventsQueueStaysSmall: sessions that come and go leave no
// references behind, even when one old event stays kept at the head.
func TestMemoryEventsQueueStaysSmall(t *testing.T) {
	m := newMemoryEvents(1 << 20)
	appendAll(t, m, "old", "s", "kept at the head")
	for i := range 20000 {
		s := fmt.Sprint("short", i)
		appendAll(t, m, s, "x", "e")
		_ = m.SessionClosed(context.Background(), s)
	}
	if q := len(m.queue) - m.head; q > 2*m.count+1024+1 {
		t.Errorf("%d queued references for %d events", q, m.count)
	}
	if got, err := replay(m, "old", "s", -1); err != nil || len(got) != 1 {
		t.Errorf("the old event: %v %v", got, err)
	}
}
