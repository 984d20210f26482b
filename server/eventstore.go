package server

import (
	"context"
	"fmt"
	"iter"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// memoryEvents is the default event store of the streamable HTTP
// transport: what was sent on each stream, in memory, for clients that
// resume with Last-Event-ID. go-sdk's MemoryEventStore bounds the bytes
// of events but not the rest: it keeps an entry for every stream a
// session ever had (one per POST with a request) until the session ends,
// so a session making a million calls holds tens of megabytes of empty
// lists; and it purges before it appends, so an event larger than the
// whole bound (a 100 MB result) is kept until the next append, and
// evicts every other session's events on its way out. Here:
//   - events are evicted oldest first, across sessions, to stay within
//     maxBytes; an event larger than maxBytes is not kept at all (its
//     place is, so indexes stay right and a replay that needs it fails);
//   - a session keeps its last maxDoneStreams finished streams (see
//     [memoryEvents.streamDone]); older ones are forgotten.
//
// A replay that would need an event no longer kept fails with
// [mcp.ErrEventsPurged], as the [mcp.EventStore] contract says.
type memoryEvents struct {
	mu       sync.Mutex
	maxBytes int
	n        int // bytes kept
	count    int // events kept
	sessions map[string]*sessionEvents
	queue    []eventRef // kept events, oldest first
	head     int        // queue[:head] are gone
}

// maxDoneStreams bounds the finished streams a session keeps for replay.
const maxDoneStreams = 256

type sessionEvents struct {
	streams map[string]*streamEvents
	done    []string // finished streams, oldest first
}

type streamEvents struct {
	first int      // index of data[0]; events before it are gone
	data  [][]byte // kept events from first on
	gone  bool     // forgotten: queued references to it are stale
}

type eventRef struct {
	s     *streamEvents
	index int
}

func newMemoryEvents(maxBytes int) *memoryEvents {
	if maxBytes <= 0 {
		maxBytes = 10 << 20 // go-sdk's default
	}
	return &memoryEvents{maxBytes: maxBytes, sessions: map[string]*sessionEvents{}}
}

func (m *memoryEvents) stream(session, stream string) *streamEvents {
	se := m.sessions[session]
	if se == nil {
		se = &sessionEvents{streams: map[string]*streamEvents{}}
		m.sessions[session] = se
	}
	s := se.streams[stream]
	if s == nil {
		s = &streamEvents{}
		se.streams[stream] = s
	}
	return s
}

// Open implements [mcp.EventStore].
func (m *memoryEvents) Open(_ context.Context, session, stream string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.stream(session, stream)
	return nil
}

// Append implements [mcp.EventStore].
func (m *memoryEvents) Append(_ context.Context, session, stream string, data []byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.stream(session, stream)
	if len(data) > m.maxBytes {
		m.skipLocked(s)
		return nil
	}
	s.data = append(s.data, data)
	m.n += len(data)
	m.count++
	m.queue = append(m.queue, eventRef{s, s.first + len(s.data) - 1})
	for m.head < len(m.queue) && (m.n > m.maxBytes || m.stale(m.queue[m.head])) {
		m.dropLocked(m.queue[m.head])
		m.queue[m.head] = eventRef{}
		m.head++
	}
	// References to events forgotten otherwise (their session ended, a
	// big event took their place) are compacted away once they outnumber
	// the events kept.
	if len(m.queue)-m.head > 2*m.count+1024 {
		live := m.queue[:0]
		for _, r := range m.queue[m.head:] {
			if !m.stale(r) {
				live = append(live, r)
			}
		}
		clear(m.queue[len(live):])
		m.queue, m.head = live, 0
	} else if m.head > len(m.queue)/2 && m.head > 1024 {
		n := copy(m.queue, m.queue[m.head:])
		clear(m.queue[n:])
		m.queue, m.head = m.queue[:n], 0
	}
	return nil
}

// stale reports a reference to an event no longer kept.
func (m *memoryEvents) stale(r eventRef) bool {
	return r.s == nil || r.s.gone || r.index < r.s.first
}

// fits reports whether an event of n bytes would be kept: a larger one
// need not even be put together (see [memoryEvents.skip]). maxBytes
// never changes: no lock.
func (m *memoryEvents) fits(n int) bool { return n <= m.maxBytes }

// skip takes the place of an event that is not kept.
func (m *memoryEvents) skip(session, stream string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.skipLocked(m.stream(session, stream))
}

// skipLocked forgets s's events up to and including its next one.
func (m *memoryEvents) skipLocked(s *streamEvents) {
	for _, d := range s.data {
		m.n -= len(d)
	}
	m.count -= len(s.data)
	s.first += len(s.data) + 1
	s.data = nil
}

// dropLocked forgets the events of r's stream up to r's, if still kept.
func (m *memoryEvents) dropLocked(r eventRef) {
	s := r.s
	if s == nil || s.gone {
		return
	}
	for s.first <= r.index && len(s.data) > 0 {
		m.n -= len(s.data[0])
		m.count--
		s.data[0] = nil
		s.data = s.data[1:]
		s.first++
	}
}

// streamDone says a stream is finished: it can still be replayed, but
// only the session's last [maxDoneStreams] finished streams are kept.
func (m *memoryEvents) streamDone(session, stream string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	se := m.sessions[session]
	if se == nil || se.streams[stream] == nil {
		return
	}
	se.done = append(se.done, stream)
	for len(se.done) > maxDoneStreams {
		m.forgetLocked(se, se.done[0])
		se.done[0] = ""
		se.done = se.done[1:]
	}
}

func (m *memoryEvents) forgetLocked(se *sessionEvents, stream string) {
	s := se.streams[stream]
	if s == nil {
		return
	}
	for _, d := range s.data {
		m.n -= len(d)
	}
	m.count -= len(s.data)
	s.data, s.gone = nil, true
	delete(se.streams, stream)
}

// After implements [mcp.EventStore].
func (m *memoryEvents) After(_ context.Context, session, stream string, index int) iter.Seq2[[]byte, error] {
	m.mu.Lock()
	var out [][]byte
	var err error
	var s *streamEvents
	if se := m.sessions[session]; se == nil {
		err = fmt.Errorf("unknown session %q", session)
	} else if s = se.streams[stream]; s == nil {
		err = fmt.Errorf("stream %q of session %q: %w", stream, session, mcp.ErrEventsPurged)
	} else if start := index + 1 - s.first; start < 0 {
		err = fmt.Errorf("stream %q of session %q, after event %d: %w", stream, session, index, mcp.ErrEventsPurged)
	} else if start < len(s.data) {
		out = append(out, s.data[start:]...)
	}
	m.mu.Unlock()
	return func(yield func([]byte, error) bool) {
		if err != nil {
			yield(nil, err)
			return
		}
		for _, d := range out {
			if !yield(d, nil) {
				return
			}
		}
	}
}

// SessionClosed implements [mcp.EventStore].
func (m *memoryEvents) SessionClosed(_ context.Context, session string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	se := m.sessions[session]
	if se == nil {
		return nil
	}
	for id := range se.streams {
		m.forgetLocked(se, id)
	}
	delete(m.sessions, session)
	return nil
}
