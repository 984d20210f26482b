package server

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The raw wire (stdio): a forwarded tools/call result is written to the
// client as the upstream's bytes, not through encoding/json. go-sdk
// marshals a handler's result once into the response (encoding/json
// validates and copies what MarshalJSON returns) and the response again
// when sending it (validated and copied again): for a 100 MB result, two
// full scans and three copies of bytes the proxy only relays, and already
// validated when they were read from the upstream. So over stdio the
// transport's connection is wrapped: the result marshals as a small
// placeholder naming an entry in a table of the connection's, and the
// connection, seeing that placeholder in a response, writes the response
// around the entry's bytes itself, under the same lock as every other
// message it sends.
//
// Over streamable HTTP the connection is our own (httpconn.go), which
// frames the same bytes as a server-sent event.

// rawPrefix starts a placeholder result: {"scratchpad/raw":<n>}.
const rawPrefix = `{"scratchpad/raw":`

// rawWire is one stdio connection's table of results to write raw.
type rawWire struct {
	next    atomic.Int64
	mu      sync.Mutex
	pending map[int64]json.RawMessage
}

// put registers raw and returns its placeholder.
func (w *rawWire) put(raw json.RawMessage) []byte {
	n := w.next.Add(1)
	w.mu.Lock()
	if w.pending == nil {
		w.pending = map[int64]json.RawMessage{}
	}
	w.pending[n] = raw
	w.mu.Unlock()
	return []byte(rawPrefix + strconv.FormatInt(n, 10) + "}")
}

// take returns and forgets the bytes a placeholder names.
func (w *rawWire) take(placeholder []byte) (json.RawMessage, bool) {
	if !bytes.HasPrefix(placeholder, []byte(rawPrefix)) || !bytes.HasSuffix(placeholder, []byte("}")) {
		return nil, false
	}
	n, err := strconv.ParseInt(string(placeholder[len(rawPrefix):len(placeholder)-1]), 10, 64)
	if err != nil {
		return nil, false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	raw, ok := w.pending[n]
	delete(w.pending, n)
	return raw, ok
}

// rawStdio is the stdio transport with the raw wire: every message goes
// to out under one lock, go-sdk's as a whole line, raw results in pieces.
// Responses carry the ids the client sent (ids.go); those to a batch
// line are written as one array.
type rawStdio struct {
	in   io.ReadCloser
	out  io.Writer
	wire *rawWire
	ids  callIDs // the client's request ids (ids.go)
	mu   sync.Mutex
}

func (t *rawStdio) Connect(ctx context.Context) (mcp.Connection, error) {
	inner, err := (&mcp.IOTransport{Reader: t.in, Writer: wireWriter{t}, MaxLineLength: -1}).Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &rawConn{Connection: inner, t: t}, nil
}

// wireWriter writes one whole message under the transport's lock.
type wireWriter struct{ t *rawStdio }

func (w wireWriter) Write(p []byte) (int, error) {
	w.t.mu.Lock()
	defer w.t.mu.Unlock()
	return w.t.out.Write(p)
}

func (w wireWriter) Close() error { return nil }

// stdioReading, when set (tests), is called each time go-sdk asks a
// stdio connection for its next message: when it is called the (n+1)th
// time, go-sdk's reader has taken in n messages.
var stdioReading atomic.Pointer[func()]

type rawConn struct {
	mcp.Connection
	t *rawStdio
}

// Read is go-sdk's, each request noted by the client's ids (ids.go).
func (c *rawConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	if h := stdioReading.Load(); h != nil {
		(*h)()
	}
	msg, err := c.Connection.Read(ctx)
	if err == nil {
		c.t.ids.read(msg)
	}
	return msg, err
}

func (c *rawConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	msg = coded(msg)
	resp, ok := msg.(*jsonrpc.Response)
	if !ok {
		return c.Connection.Write(ctx, msg)
	}
	sent, batch := c.t.ids.answered(resp.ID)
	var raw json.RawMessage
	isRaw := false
	if resp.Error == nil {
		raw, isRaw = c.t.wire.take(resp.Result)
	}
	if !isRaw && sent == nil && batch == nil {
		return c.Connection.Write(ctx, msg)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	var parts [][]byte
	if isRaw {
		head, err := rawHead(resp.ID, sent)
		if err != nil {
			return err
		}
		if raw, err = oneLine(raw); err != nil {
			return err
		}
		parts = [][]byte{head, raw, []byte("}")}
	} else {
		data, err := encodeResponse(resp, sent)
		if err != nil {
			return err
		}
		parts = [][]byte{data}
	}
	if batch != nil {
		whole := batch.add(join(parts))
		if whole == nil {
			return nil // the batch's last response writes it
		}
		parts = [][]byte{whole}
	}
	parts = append(parts, []byte("\n"))
	c.t.mu.Lock()
	defer c.t.mu.Unlock()
	for _, p := range parts {
		if _, err := c.t.out.Write(p); err != nil {
			return err
		}
	}
	return nil
}

// oneLine is raw as one line of a stdio stream (one message, one line):
// bytes from an HTTP upstream may hold line breaks between tokens, which
// are compacted away; raw itself when it has none.
func oneLine(raw json.RawMessage) (json.RawMessage, error) {
	if bytes.IndexByte(raw, '\n') < 0 && bytes.IndexByte(raw, '\r') < 0 {
		return raw, nil
	}
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// rawHead is a response's bytes before its result: under sent, the id
// the client sent, when not nil (ids.go), else id.
func rawHead(id jsonrpc.ID, sent json.RawMessage) ([]byte, error) {
	b := []byte(sent)
	if b == nil {
		var err error
		if b, err = json.Marshal(id.Raw()); err != nil {
			return nil, err
		}
	}
	return append(append([]byte(responseHead), b...), `,"result":`...), nil
}
