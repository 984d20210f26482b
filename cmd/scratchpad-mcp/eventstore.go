package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"

	"github.com/mark3labs/mcp-go/server"
)

// eventStore makes streamable HTTP streams resumable (a client that lost
// its SSE stream reconnects with Last-Event-ID and is sent what it
// missed) while bounding memory: each session keeps only its most recent
// events up to maxBytes. mcp-go's in-memory store keeps every event of a
// session until the session ends, which a long agent session would turn
// into a second copy of its whole transcript.
type eventStore struct {
	maxBytes int

	mu       sync.Mutex
	seq      int64
	sessions map[string]*eventLog
}

type eventLog struct {
	events []storedEvent // oldest first, all streams of the session
	bytes  int
}

type storedEvent struct {
	id, stream string
	msg        json.RawMessage
}

var _ server.EventStore = (*eventStore)(nil)

func newEventStore(maxBytes int) *eventStore {
	return &eventStore{maxBytes: maxBytes, sessions: map[string]*eventLog{}}
}

func (s *eventStore) StoreEvent(_ context.Context, sessionID, streamID string, msg json.RawMessage) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	log := s.sessions[sessionID]
	if log == nil {
		log = &eventLog{}
		s.sessions[sessionID] = log
	}
	s.seq++
	id := strconv.FormatInt(s.seq, 10)
	log.events = append(log.events, storedEvent{id: id, stream: streamID, msg: append(json.RawMessage(nil), msg...)})
	log.bytes += len(msg)
	// Drop the oldest events past the bound, always keeping the newest.
	drop := 0
	for log.bytes > s.maxBytes && drop < len(log.events)-1 {
		log.bytes -= len(log.events[drop].msg)
		drop++
	}
	if drop > 0 {
		log.events = append(log.events[:0], log.events[drop:]...)
	}
	return id, nil
}

func (s *eventStore) ReplayEventsAfter(_ context.Context, sessionID, lastEventID string, send func(eventID string, msg json.RawMessage) error) (string, error) {
	s.mu.Lock()
	log := s.sessions[sessionID]
	var stream string
	var replay []storedEvent
	found := false
	if log != nil {
		for i, e := range log.events {
			if e.id == lastEventID {
				found, stream = true, e.stream
				for _, later := range log.events[i+1:] {
					if later.stream == stream {
						replay = append(replay, later)
					}
				}
				break
			}
		}
	}
	s.mu.Unlock()
	if !found {
		// Unknown, or already dropped by the bound: the client must start
		// a fresh stream.
		return "", fmt.Errorf("event %q: %w", lastEventID, server.ErrUnknownEventID)
	}
	for _, e := range replay {
		if err := send(e.id, e.msg); err != nil {
			return stream, err
		}
	}
	return stream, nil
}

func (s *eventStore) PurgeSession(_ context.Context, sessionID string) error {
	s.mu.Lock()
	delete(s.sessions, sessionID)
	s.mu.Unlock()
	return nil
}
