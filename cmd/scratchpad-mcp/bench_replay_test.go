//go:build bench

package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
)

// The floor of a transport: how long the bench's client takes to call a
// tool whose answer a peer holds ready, encoded, on that transport. Over
// stdio the client's reader scans the line with encoding/json's Decoder,
// over streamable HTTP it splits SSE events, and then both decode the
// result: for a 100 MB result that is seconds, on the client, before any
// server's or proxy's work. The raw client's floor is reading the bytes. TestBenchWire prints it beside the direct and
// proxied times, so that a ratio shows what is the proxy's and what is the
// serving transport's.

// replayPeer answers initialize, tools/list (one tool, "blob") and
// tools/call with answer, a tools/call result already encoded, as raw
// JSON-RPC: no encoding at call time.
type replayPeer struct{ answer []byte }

// reply is the JSON-RPC message answering req, or nil for a notification.
func (p *replayPeer) reply(req []byte) ([]byte, error) {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			ProtocolVersion string `json:"protocolVersion"`
		} `json:"params"`
	}
	if err := json.Unmarshal(req, &m); err != nil {
		return nil, err
	}
	if m.ID == nil {
		return nil, nil
	}
	var result []byte
	switch m.Method {
	case "initialize":
		result = fmt.Appendf(nil, `{"protocolVersion":%q,"capabilities":{"tools":{}},"serverInfo":{"name":"replay","version":"1"}}`, m.Params.ProtocolVersion)
	case "tools/list":
		result = []byte(`{"tools":[{"name":"blob","inputSchema":{"type":"object"}}]}`)
	case "tools/call":
		result = p.answer
	default:
		return fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"no"}}`, m.ID), nil
	}
	msg := fmt.Appendf(make([]byte, 0, len(result)+64), `{"jsonrpc":"2.0","id":%s,"result":`, m.ID)
	return append(append(msg, result...), '}'), nil
}

// serveStdio answers the requests read from r on w, one line each, until r ends.
func (p *replayPeer) serveStdio(r io.Reader, w io.Writer) {
	br := bufio.NewReaderSize(r, 1<<20)
	for {
		line, err := br.ReadBytes('\n')
		if err != nil {
			return
		}
		out, err := p.reply(line)
		if err != nil || out == nil {
			continue
		}
		if _, err := w.Write(append(out, '\n')); err != nil {
			return
		}
	}
}

// ServeHTTP is a stateless streamable HTTP server: JSON answers, the
// tools/call answer as one SSE event, as go-sdk's own server sends it.
func (p *replayPeer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	req, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	out, err := p.reply(req)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if out == nil {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	w.Header().Set("Mcp-Session-Id", "replay")
	if len(out) < 1<<20 {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(out)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	for _, b := range [][]byte{[]byte("event: message\ndata: "), out, []byte("\n\n")} {
		if _, err := w.Write(b); err != nil {
			return
		}
	}
}

// replaySession connects the bench's client, over transport kind ("stdio"
// on OS pipes, "http"), to a replay peer answering tools/call with answer.
func replaySession(t *testing.T, kind string, answer []byte) wireClient {
	t.Helper()
	p := &replayPeer{answer: answer}
	if kind == "http" {
		ts := httptest.NewServer(p)
		t.Cleanup(ts.Close)
		return dialHTTP(t, ts.URL)
	}
	toPeer, fromClient, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	fromPeer, toClient, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		p.serveStdio(toPeer, toClient)
		toClient.Close()
	}()
	t.Cleanup(func() { toPeer.Close(); fromPeer.Close() })
	return dialStdio(t, fromPeer, fromClient)
}
