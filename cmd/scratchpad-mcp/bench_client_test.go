//go:build bench

package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tidwall/gjson"

	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testwait"
)

// The bench's two clients (WIRE_CLIENT): "raw", a JSON-RPC client that
// reads each answer's bytes off the wire and looks at no more of them than
// its id (as the figures were taken), and "sdk", go-sdk's client,
// which decodes every answer into Go values. The raw one measures what the
// servers and the proxy cost; the sdk one adds a client's decoding, which
// differs between transports (see bench_replay_test.go).

// wireClient calls tools over one session.
type wireClient interface {
	// call calls tool with args and returns the result: for one larger
	// than 1 MiB only its size is known (it cannot be a pointer).
	call(tool string, args map[string]any) (wireResult, error)
	// tools lists the session's tools by name.
	tools() ([]string, error)
	Close() error
}

type wireResult struct {
	size     int
	isError  bool
	diverted bool
	text     string // of a small result
}

// wireKind is the bench's client, "raw" unless WIRE_CLIENT says "sdk".
func wireKind() string { return envOr("WIRE_CLIENT", "raw") }

// wireModern reports whether the raw client speaks MCP 2026-07-28 to the
// proxy (WIRE_ERA=modern: no session, the envelope and headers on every
// request); direct calls stay 2025-11-25.
func wireModern() bool { return envOr("WIRE_ERA", "legacy") == "modern" }

// modernize makes c, before its first request, a 2026-07-28 client of
// the proxy.
func modernize(c wireClient) wireClient {
	if rc, ok := c.(*rawClient); ok && wireModern() {
		rc.modern, rc.version, rc.session = true, "2026-07-28", ""
	}
	return c
}

// dialStdio starts a session over a server's stdout and stdin.
func dialStdio(t *testing.T, r io.Reader, w io.Writer) wireClient {
	t.Helper()
	if wireKind() == "sdk" {
		rc, ok := r.(io.ReadCloser)
		if !ok {
			rc = io.NopCloser(r)
		}
		wc, ok := w.(io.WriteCloser)
		if !ok {
			t.Fatal("a stdio session needs a writer to close")
		}
		return sdkClient{connect(t, &mcp.IOTransport{Reader: rc, Writer: wc, MaxLineLength: -1})}
	}
	c := &rawClient{w: w, r: bufio.NewReaderSize(r, 1<<20)}
	c.initialize(t)
	return c
}

// dialProxyStdio and dialProxyHTTP are dialStdio and dialHTTP for the
// proxy: in the era WIRE_ERA says. (A 2026-07-28 client has no
// initialize: its first request is the listing.)
func dialProxyStdio(t *testing.T, r io.Reader, w io.Writer) wireClient {
	t.Helper()
	if wireModern() && wireKind() == "raw" {
		return modernize(&rawClient{w: w, r: bufio.NewReaderSize(r, 1<<20)})
	}
	return dialStdio(t, r, w)
}

func dialProxyHTTP(t *testing.T, url string) wireClient {
	t.Helper()
	if wireModern() && wireKind() == "raw" {
		return modernize(&rawClient{url: url})
	}
	return dialHTTP(t, url)
}

// dialHTTP starts a session with a streamable HTTP endpoint.
func dialHTTP(t *testing.T, url string) wireClient {
	t.Helper()
	if wireKind() == "sdk" {
		return sdkClient{connect(t, &mcp.StreamableClientTransport{Endpoint: url, MaxEventSize: -1})}
	}
	c := &rawClient{url: url}
	c.initialize(t)
	return c
}

// sdkClient is go-sdk's client.
type sdkClient struct{ s *mcp.ClientSession }

func (c sdkClient) tools() ([]string, error) {
	res, err := c.s.ListTools(context.Background(), nil)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	return names, nil
}

func (c sdkClient) call(tool string, args map[string]any) (wireResult, error) {
	res, err := c.s.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		return wireResult{}, err
	}
	_, diverted := res.Meta["scratchpad/diverted"]
	txt := text(res)
	return wireResult{size: len(txt), isError: res.IsError, diverted: diverted, text: txt[:min(len(txt), 1<<20)]}, nil
}

func (c sdkClient) Close() error { return c.s.Close() }

// rawClient speaks JSON-RPC over a stdio pair (w, r) or to a streamable
// HTTP url.
type rawClient struct {
	w io.Writer
	r *bufio.Reader

	url, session, version string

	// modern: 2026-07-28 (modernize): method and name are the headers of
	// the request being posted.
	modern       bool
	method, name string

	id   int
	line []byte // reused: a big answer is read into the same buffer each time
}

func (c *rawClient) initialize(t *testing.T) {
	t.Helper()
	res, err := c.roundTrip("initialize", map[string]any{"protocolVersion": protocolVersion, "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "raw-bench", "version": "1"}})
	if err != nil {
		t.Fatalf("initialize: %v", err)
	}
	c.version = gjson.GetBytes(res, "protocolVersion").String()
	if err := c.send(nil, "notifications/initialized", map[string]any{}); err != nil {
		t.Fatalf("initialized: %v", err)
	}
}

func (c *rawClient) tools() ([]string, error) {
	res, err := c.roundTrip("tools/list", map[string]any{})
	if err != nil {
		return nil, err
	}
	var names []string
	for _, n := range gjson.GetBytes(res, "tools.#.name").Array() {
		names = append(names, n.String())
	}
	return names, nil
}

func (c *rawClient) call(tool string, args map[string]any) (wireResult, error) {
	res, err := c.roundTrip("tools/call", map[string]any{"name": tool, "arguments": args})
	if err != nil {
		return wireResult{}, err
	}
	out := wireResult{size: len(res)}
	if len(res) < 1<<20 {
		var r mcp.CallToolResult
		if err := json.Unmarshal(res, &r); err != nil {
			return out, err
		}
		_, out.diverted = r.Meta["scratchpad/diverted"]
		out.isError, out.text = r.IsError, text(&r)
	}
	return out, nil
}

// roundTrip sends a request and returns its answer's result: the bytes,
// not decoded (valid only until the next call).
func (c *rawClient) roundTrip(method string, params any) (json.RawMessage, error) {
	c.id++
	id := c.id
	if c.modern {
		params = withEnvelope(params)
		c.method, c.name = method, ""
		if m, ok := params.(map[string]any); ok {
			c.name, _ = m["name"].(string)
		}
	}
	if c.url != "" {
		return c.postHTTP(id, method, params)
	}
	if err := c.send(&id, method, params); err != nil {
		return nil, err
	}
	for {
		line, err := c.readLine()
		if err != nil {
			return nil, err
		}
		if msg, ok := c.answer(line, id); ok {
			return msg, nil
		}
		// A notification, or a request from the server: the bench's
		// client has no capabilities to answer with.
		if req := gjson.GetBytes(line, "id"); req.Exists() && gjson.GetBytes(line, "method").Exists() {
			_, _ = fmt.Fprintf(c.w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"not supported"}}`+"\n", req.Raw)
		}
	}
}

// answer returns the result of msg if it answers id: an error answer is
// returned as an error. It reads the id, not the result.
func (c *rawClient) answer(msg []byte, id int) (json.RawMessage, bool) {
	got := gjson.GetBytes(msg, "id")
	if got.Type != gjson.Number || int(got.Int()) != id || gjson.GetBytes(msg, "method").Exists() {
		return nil, false
	}
	// The result is the rest of the message after "result": (go-sdk and
	// scratchpad-mcp write it last).
	i := bytes.Index(msg, []byte(`"result":`))
	if i < 0 {
		return json.RawMessage(`{"isError":true,"content":[{"type":"text","text":` + gjson.GetBytes(msg, "error").Raw + `}]}`), true
	}
	body := bytes.TrimRight(msg[i+len(`"result":`):], " \r\n")
	return body[:len(body)-1], true
}

// readLine reads one line into the reused buffer.
func (c *rawClient) readLine() ([]byte, error) {
	c.line = c.line[:0]
	for {
		part, err := c.r.ReadSlice('\n')
		c.line = append(c.line, part...)
		if err == bufio.ErrBufferFull {
			continue
		}
		if err != nil {
			return nil, err
		}
		return c.line, nil
	}
}

func (c *rawClient) send(id *int, method string, params any) error {
	msg := map[string]any{"jsonrpc": "2.0", "method": method, "params": params}
	if id != nil {
		msg["id"] = *id
	}
	b, err := json.Marshal(msg)
	if err != nil {
		return err
	}
	if c.url != "" {
		resp, err := c.post(b)
		if err != nil {
			return err
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		return resp.Body.Close()
	}
	_, err = c.w.Write(append(b, '\n'))
	return err
}

func (c *rawClient) post(body []byte) (*http.Response, error) {
	req, err := http.NewRequest(http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if c.session != "" {
		req.Header.Set("Mcp-Session-Id", c.session)
	}
	if c.version != "" {
		req.Header.Set("Mcp-Protocol-Version", c.version)
	}
	if c.modern {
		req.Header.Set("Mcp-Method", c.method)
		if c.name != "" {
			req.Header.Set("Mcp-Name", c.name)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	if s := resp.Header.Get("Mcp-Session-Id"); s != "" {
		c.session = s
	}
	if resp.StatusCode/100 != 2 {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<10))
		resp.Body.Close()
		return nil, fmt.Errorf("%s: %s", resp.Status, b)
	}
	return resp, nil
}

// postHTTP sends a request and reads its answer from the response: a JSON
// body, or the SSE event that carries it (one data line, as go-sdk and
// scratchpad-mcp write it; others are joined with newlines).
func (c *rawClient) postHTTP(id int, method string, params any) (json.RawMessage, error) {
	b, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	if err != nil {
		return nil, err
	}
	resp, err := c.post(b)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		c.line, err = readAllInto(c.line[:0], resp.Body)
		if err != nil {
			return nil, err
		}
		if msg, ok := c.answer(c.line, id); ok {
			return msg, nil
		}
		return nil, fmt.Errorf("%s: no answer in %.200s", method, c.line)
	}
	c.r = bufio.NewReaderSize(resp.Body, 1<<20)
	var data []byte
	for {
		line, err := c.readLine()
		if err != nil {
			return nil, fmt.Errorf("%s: stream ended without the answer: %w", method, err)
		}
		line = bytes.TrimRight(line, "\r\n")
		switch {
		case bytes.HasPrefix(line, []byte("data:")):
			if data != nil {
				data = append(data, '\n')
			}
			data = append(data, bytes.TrimPrefix(line[len("data:"):], []byte(" "))...)
		case len(line) == 0 && data != nil:
			if msg, ok := c.answer(data, id); ok {
				return msg, nil
			}
			data = nil
		}
	}
}

// withEnvelope is params (a map) with the 2026-07-28 _meta envelope.
func withEnvelope(params any) any {
	m, ok := params.(map[string]any)
	if !ok {
		return params
	}
	out := make(map[string]any, len(m)+1)
	for k, v := range m {
		out[k] = v
	}
	out["_meta"] = map[string]any{
		"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
		"io.modelcontextprotocol/clientCapabilities": map[string]any{},
		"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "raw-bench", "version": "1"},
	}
	return out
}

// readAllInto reads r to its end into buf.
func readAllInto(buf []byte, r io.Reader) ([]byte, error) {
	w := bytes.NewBuffer(buf)
	_, err := w.ReadFrom(r)
	return w.Bytes(), err
}

func (c *rawClient) Close() error {
	if cl, ok := c.w.(io.Closer); ok {
		return cl.Close()
	}
	if c.url != "" && c.session != "" {
		req, _ := http.NewRequest(http.MethodDelete, c.url, nil)
		req.Header.Set("Mcp-Session-Id", c.session)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
	}
	return nil
}

// waitForWireTool waits until the session lists tool.
func waitForWireTool(t *testing.T, c wireClient, tool string) {
	t.Helper()
	var err error
	if !testwait.Until(testwait.Timeout, func() bool {
		var names []string
		names, err = c.tools()
		for _, n := range names {
			if n == tool {
				return true
			}
		}
		return false
	}) {
		t.Fatalf("tool %q never listed (last error %v)", tool, err)
	}
}

// stdioUpstream starts bin as a stdio MCP server with env and returns a
// session to it; the process ends when the session closes.
func stdioUpstream(t *testing.T, env []string, bin string, args ...string) wireClient {
	t.Helper()
	stdout, stdin := startPiped(t, env, bin, args...)
	return dialStdio(t, stdout, stdin)
}
