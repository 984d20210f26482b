package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// Request ids over the real binary, on each transport (issue 26): the
// answer carries the id's text as sent; a null id is refused as an
// Invalid Request; so is the id of a request still in flight.

// idClient speaks raw JSON-RPC to a server: send hands it one message
// (returning once the server has taken it), next is the next response
// the client gets (server requests and notifications are skipped).
type idClient struct {
	send    func(t *testing.T, msg string)
	answers chan string
}

func (c *idClient) next(t *testing.T) string {
	t.Helper()
	select {
	case s := <-c.answers:
		return s
	case <-time.After(20 * time.Second):
		t.Fatal("no answer")
		return ""
	}
}

// initialize runs the handshake.
func (c *idClient) initialize(t *testing.T) {
	t.Helper()
	c.send(t, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"`+protocolVersion+`","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	if got := c.next(t); !strings.HasPrefix(got, `{"jsonrpc":"2.0","id":0,"result":`) {
		t.Fatalf("initialize: %.200s", got)
	}
	c.send(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
}

// isResponse: a message without a method (answers, not the server's
// requests or notifications).
func isResponse(msg string) bool {
	var probe struct {
		Method *string `json:"method"`
	}
	return json.Unmarshal([]byte(msg), &probe) == nil && probe.Method == nil
}

// dialWire starts the binary with cfg on transport kind (stdio, http or
// sse) and returns a client of it.
func dialWire(t *testing.T, kind, cfg string) *idClient {
	t.Helper()
	c := &idClient{answers: make(chan string, 100)}
	switch kind {
	case "stdio":
		cmd := exec.Command(binary(t), "serve", "--config", cfg, "--log-level", "error")
		in, _ := cmd.StdinPipe()
		out, _ := cmd.StdoutPipe()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { in.Close(); _ = cmd.Wait() })
		go func() {
			sc := bufio.NewScanner(out)
			sc.Buffer(make([]byte, 1<<20), 1<<20)
			for sc.Scan() {
				if isResponse(sc.Text()) {
					c.answers <- sc.Text()
				}
			}
		}()
		c.send = func(t *testing.T, msg string) {
			if _, err := fmt.Fprintln(in, msg); err != nil {
				t.Fatal(err)
			}
		}
	case "http":
		base := startHTTP(t, "http", cfg)
		session := ""
		c.send = func(t *testing.T, msg string) {
			t.Helper()
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			req, _ := http.NewRequestWithContext(ctx, "POST", base+"/mcp", strings.NewReader(msg))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set("Mcp-Protocol-Version", protocolVersion)
			if session != "" {
				req.Header.Set("Mcp-Session-Id", session)
			}
			// Returns with the headers: for a request, once the server
			// has taken it (its stream's priming event).
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				cancel()
				t.Fatal(err)
			}
			if s := resp.Header.Get("Mcp-Session-Id"); s != "" {
				session = s
			}
			if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				cancel()
				if len(b) > 0 && resp.StatusCode != http.StatusAccepted {
					c.answers <- strings.TrimSpace(string(b))
				}
				return
			}
			go func() {
				defer cancel()
				defer resp.Body.Close()
				readEvents(resp.Body, c.answers)
			}()
		}
	case "sse":
		base := startHTTP(t, "sse", cfg)
		ctx, cancel := context.WithCancel(context.Background())
		t.Cleanup(cancel)
		req, _ := http.NewRequestWithContext(ctx, "GET", base+"/sse", nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { resp.Body.Close() })
		br := bufio.NewReader(resp.Body)
		endpoint := ""
		for endpoint == "" {
			line, err := br.ReadString('\n')
			if err != nil {
				t.Fatalf("no endpoint event: %v", err)
			}
			if d, ok := strings.CutPrefix(strings.TrimSpace(line), "data: "); ok {
				endpoint = d
			}
		}
		go readEvents(br, c.answers)
		c.send = func(t *testing.T, msg string) {
			t.Helper()
			resp, err := http.Post(base+endpoint, "application/json", strings.NewReader(msg))
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusAccepted {
				c.answers <- strings.TrimSpace(string(b))
			}
		}
	default:
		t.Fatalf("transport %q", kind)
	}
	return c
}

// readEvents passes on the responses among the server-sent events of r.
func readEvents(r io.Reader, to chan<- string) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	var data []string
	for sc.Scan() {
		line := sc.Text()
		if d, ok := strings.CutPrefix(line, "data: "); ok {
			data = append(data, d)
			continue
		}
		if line == "" && len(data) > 0 {
			if msg := strings.Join(data, "\n"); isResponse(msg) && msg != "" {
				to <- msg
			}
			data = nil
		}
	}
}

var wireTransports = []string{"stdio", "http", "sse"}

// The answer's id is the request's, byte for byte: go-sdk alone answers
// 1.5 as 1 and 2^53+1 as 2^53.
func TestIDsAnsweredAsSent(t *testing.T) {
	cfg, _ := writeConfig(t, "")
	for _, kind := range wireTransports {
		t.Run(kind, func(t *testing.T) {
			c := dialWire(t, kind, cfg)
			c.initialize(t)
			for _, id := range []string{`1.5`, `9007199254740993`, `1e2`, `-0`, `"\u0041"`, `"a\/b"`, `7`, `"x"`} {
				c.send(t, `{"jsonrpc":"2.0","id":`+id+`,"method":"ping"}`)
				if got, want := c.next(t), `{"jsonrpc":"2.0","id":`+id+`,"result":{}}`; got != want {
					t.Errorf("answered %s, want %s", got, want)
				}
			}
		})
	}
}

// "id": null is a request MCP forbids: answered Invalid Request with a
// null id (go-sdk alone takes it for a notification and says nothing),
// and the session goes on.
func TestNullIDRefused(t *testing.T) {
	cfg, _ := writeConfig(t, "")
	for _, kind := range wireTransports {
		t.Run(kind, func(t *testing.T) {
			c := dialWire(t, kind, cfg)
			c.initialize(t)
			// The ping after it is answered after it: no waiting for
			// an answer that may never come.
			c.send(t, `{"jsonrpc":"2.0","id":null,"method":"ping"}`)
			c.send(t, `{"jsonrpc":"2.0","id":2,"method":"ping"}`)
			if got := c.next(t); !strings.HasPrefix(got, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,`) {
				t.Fatalf("a null id was answered %s, want an Invalid Request with id null", got)
			}
			if got := c.next(t); got != `{"jsonrpc":"2.0","id":2,"result":{}}` {
				t.Errorf("after the null id, ping answered %s", got)
			}
		})
	}
}

// A request with the id of one still unanswered is refused with -32600
// under that id, on every transport (go-sdk alone drops it silently
// over stdio and SSE), and the one in flight is untouched.
func TestDuplicateInFlightIDRefused(t *testing.T) {
	cfg, _ := writeConfig(t, "")
	for _, kind := range wireTransports {
		t.Run(kind, func(t *testing.T) {
			c := dialWire(t, kind, cfg)
			c.initialize(t)
			c.send(t, `{"jsonrpc":"2.0","id":9,"method":"tools/list"}`) // upstreams are up
			if got := c.next(t); !strings.Contains(got, `"name":"block"`) {
				t.Fatalf("tools/list: %.300s", got)
			}
			// "block" answers once cancelled.
			c.send(t, `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"block","arguments":{}}}`)
			c.send(t, `{"jsonrpc":"2.0","id":5,"method":"ping"}`)
			c.send(t, `{"jsonrpc":"2.0","id":6,"method":"ping"}`)
			if got := c.next(t); !strings.HasPrefix(got, `{"jsonrpc":"2.0","id":5,"error":{"code":-32600,`) {
				t.Fatalf("the duplicate was answered %s, want an Invalid Request under id 5", got)
			}
			if got := c.next(t); got != `{"jsonrpc":"2.0","id":6,"result":{}}` {
				t.Errorf("ping 6 answered %s", got)
			}
			c.send(t, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":5}}`)
			if got := c.next(t); !strings.HasPrefix(got, `{"jsonrpc":"2.0","id":5,`) {
				t.Errorf("the cancelled call answered %s", got)
			}
			// Answered, its id is free again.
			c.send(t, `{"jsonrpc":"2.0","id":5,"method":"ping"}`)
			if got := c.next(t); got != `{"jsonrpc":"2.0","id":5,"result":{}}` {
				t.Errorf("ping 5 after the call's answer: %s", got)
			}
		})
	}
}
