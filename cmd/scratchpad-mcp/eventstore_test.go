package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

func TestEventStoreReplaysOneStreamAndStaysBounded(t *testing.T) {
	ctx := context.Background()
	s := newEventStore(100)
	msg := func(i int) json.RawMessage { return json.RawMessage(fmt.Sprintf(`{"n":%d}`, i)) } // 8 bytes
	var ids []string
	for i := 0; i < 10; i++ {
		stream := "a"
		if i%2 == 1 {
			stream = "b"
		}
		id, err := s.StoreEvent(ctx, "s1", stream, msg(i))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	var got []string
	stream, err := s.ReplayEventsAfter(ctx, "s1", ids[2], func(id string, m json.RawMessage) error {
		got = append(got, string(m))
		return nil
	})
	if err != nil || stream != "a" {
		t.Fatalf("replay: stream %q err %v", stream, err)
	}
	if fmt.Sprint(got) != `[{"n":4} {"n":6} {"n":8}]` {
		t.Errorf("replayed %v, want the later events of stream a only", got)
	}
	// 30 more events of 8 bytes: only the newest 12 fit in 100 bytes.
	for i := 10; i < 40; i++ {
		id, _ := s.StoreEvent(ctx, "s1", "a", msg(i))
		ids = append(ids, id)
	}
	if log := s.sessions["s1"]; log.bytes > 100 || len(log.events) > 12 {
		t.Errorf("store holds %d events, %d bytes; bound is 100 bytes", len(log.events), log.bytes)
	}
	if _, err := s.ReplayEventsAfter(ctx, "s1", "1", func(string, json.RawMessage) error { return nil }); !errors.Is(err, server.ErrUnknownEventID) {
		t.Errorf("dropped event id: err %v, want ErrUnknownEventID", err)
	}
	_ = s.PurgeSession(ctx, "s1")
	if _, err := s.ReplayEventsAfter(ctx, "s1", ids[len(ids)-1], func(string, json.RawMessage) error { return nil }); !errors.Is(err, server.ErrUnknownEventID) {
		t.Errorf("purged session still replays: %v", err)
	}
}

// TestServeHTTPStreamsCarryResumableIDs checks the wiring end to end: SSE
// events from the server carry ids, a GET with a known Last-Event-ID is
// accepted and one with an unknown id is refused.
func TestServeHTTPStreamsCarryResumableIDs(t *testing.T) {
	cfg, _ := writeConfig(t, "")
	base := startHTTP(t, "http", cfg)
	post := func(session, body string) *http.Response {
		req, _ := http.NewRequest("POST", base+"/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
			req.Header.Set("Mcp-Protocol-Version", mcp.LATEST_LEGACY_PROTOCOL_VERSION)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	resp := post("", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"`+mcp.LATEST_LEGACY_PROTOCOL_VERSION+`","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	session := resp.Header.Get("Mcp-Session-Id")
	resp.Body.Close()
	if session == "" {
		t.Fatal("no session id")
	}
	post(session, `{"jsonrpc":"2.0","method":"notifications/initialized"}`).Body.Close()
	// The first tools/list waits for the upstream; then a call that sends
	// progress mid-way makes the server answer on an SSE stream.
	post(session, `{"jsonrpc":"2.0","id":3,"method":"tools/list"}`).Body.Close()
	resp = post(session, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow","arguments":{"steps":2,"ms":10},"_meta":{"progressToken":"p1"}}}`)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	idLine := regexp.MustCompile(`(?m)^id: ?(\S+)`).FindStringSubmatch(string(body))
	if idLine == nil {
		t.Fatalf("a call sending progress was answered without an SSE event id (%s):\n%s", resp.Header.Get("Content-Type"), body)
	}
	get := func(lastID string) int {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, "GET", base+"/mcp", nil)
		req.Header.Set("Accept", "text/event-stream")
		req.Header.Set("Mcp-Session-Id", session)
		req.Header.Set("Mcp-Protocol-Version", mcp.LATEST_LEGACY_PROTOCOL_VERSION)
		req.Header.Set("Last-Event-ID", lastID)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := get(idLine[1]); code != http.StatusOK {
		t.Errorf("resume from a known event id: HTTP %d", code)
	}
	if code := get("999999"); code == http.StatusOK {
		t.Errorf("resume from an unknown event id accepted")
	}
}
