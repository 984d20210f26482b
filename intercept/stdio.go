package intercept

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// stdioConn runs an upstream as a child process and speaks newline-delimited
// JSON-RPC over its stdin/stdout. It owns the process, so it knows the moment
// the process exits (and with what status and last stderr lines), which is
// what restart and in-flight errors need.
type stdioConn struct {
	name string
	cmd  *exec.Cmd
	in   io.WriteCloser
	h    handlers
	log  *slog.Logger

	writeMu sync.Mutex
	nextID  atomic.Int64

	mu      sync.Mutex
	pending map[string]chan rpcMessage
	inbound map[string]context.CancelFunc // requests from the upstream being served

	*lifetime

	stderr *tailBuffer
	events chan func() // unprompted messages, delivered in order off the read loop
}

// rpcMessage is any JSON-RPC message; which fields are set says which kind.
type rpcMessage struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *RPCError       `json:"error,omitempty"`
}

// startStdio spawns argv with env (added to ours) in dir.
func startStdio(name string, argv []string, env map[string]string, dir string, h handlers, log *slog.Logger) (*stdioConn, error) {
	if len(argv) == 0 {
		return nil, fmt.Errorf("upstream %q: empty command", name)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = os.Environ()
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	// Own process group: stopping the upstream also stops what it spawned
	// (npx → node, uv → python).
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	c := &stdioConn{
		name:     name,
		cmd:      cmd,
		in:       in,
		h:        h,
		log:      log,
		pending:  map[string]chan rpcMessage{},
		inbound:  map[string]context.CancelFunc{},
		lifetime: newLifetime(),
		stderr:   &tailBuffer{max: 4096},
		events:   make(chan func(), 256),
	}
	cmd.Stderr = c.stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("upstream %q: start %s: %w", name, argv[0], err)
	}
	go c.readLoop(out)
	go c.deliver()
	go func() {
		werr := cmd.Wait()
		msg := "exited"
		if werr != nil {
			msg = werr.Error()
		}
		if tail := c.stderr.String(); tail != "" {
			msg += "; last stderr: " + tail
		}
		c.fail(fmt.Errorf("%w: %s", ErrUpstreamExited, msg))
	}()
	return c, nil
}

func (c *stdioConn) readLoop(out io.Reader) {
	r := bufio.NewReaderSize(out, 64<<10)
	for {
		// ReadBytes has no line-length limit: a 100 MB result is one line.
		line, err := r.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			c.dispatch(line)
		}
		if err != nil {
			// EOF on stdout: the process is exiting; Wait reports how.
			// Give Wait a moment to supply the exit status before failing.
			select {
			case <-c.done:
			case <-time.After(2 * time.Second):
				c.fail(fmt.Errorf("%w: stdout closed", ErrUpstreamExited))
			}
			return
		}
	}
}

func (c *stdioConn) dispatch(line []byte) {
	var m rpcMessage
	if err := json.Unmarshal(line, &m); err != nil {
		// JSON-RPC answers a message it cannot parse with a parse error
		// and a null id; the upstream may log it, we carry on.
		c.log.Warn("upstream sent invalid JSON-RPC; answered with a parse error", "server", c.name, "error", err, "line", truncate(string(line), 200))
		_ = c.write(rpcError{JSONRPC: "2.0", ID: json.RawMessage("null"), Error: &RPCError{Code: -32700, Message: "Parse error: " + err.Error()}})
		return
	}
	switch {
	case m.Method == "notifications/cancelled" && len(m.ID) == 0:
		// The upstream gave up on a request it sent us (sampling,
		// elicitation): stop forwarding it.
		var p struct {
			RequestID json.RawMessage `json:"requestId"`
		}
		if json.Unmarshal(m.Params, &p) == nil {
			c.mu.Lock()
			cancel := c.inbound[string(p.RequestID)]
			c.mu.Unlock()
			if cancel != nil {
				cancel()
			}
		}
	case m.Method != "" && len(m.ID) == 0:
		if c.h.notify != nil {
			c.queue(func() { c.h.notify(m.Method, m.Params) })
		}
	case m.Method != "":
		// Requests from the upstream (sampling, elicitation, roots, ping)
		// may take as long as a human does: one goroutine each.
		go c.serveRequest(m)
	case len(m.ID) == 0:
		// A response without id cannot be matched; one with an id but
		// neither result nor error fails its call (see Call).
		c.log.Warn("upstream sent a JSON-RPC message that is neither request, notification nor response; ignored", "server", c.name, "line", truncate(string(line), 200))
	default:
		// Responses go through the same ordered queue as notifications,
		// so progress sent before a result reaches the caller before it.
		c.queue(func() {
			key := string(m.ID)
			c.mu.Lock()
			ch := c.pending[key]
			delete(c.pending, key)
			c.mu.Unlock()
			if ch != nil {
				ch <- m
			}
		})
	}
}

func (c *stdioConn) queue(f func()) {
	select {
	case c.events <- f:
	case <-c.done:
	}
}

func (c *stdioConn) deliver() {
	for {
		select {
		case f := <-c.events:
			f()
		case <-c.done:
			return
		}
	}
}

func (c *stdioConn) serveRequest(m rpcMessage) {
	resp := rpcMessage{JSONRPC: "2.0", ID: m.ID}
	if m.Method == "ping" {
		resp.Result = json.RawMessage(`{}`)
	} else if c.h.request == nil {
		resp.Error = &RPCError{Code: -32601, Message: "method not found: " + m.Method}
	} else {
		ctx, cancel := context.WithCancel(context.Background())
		key := string(m.ID)
		c.mu.Lock()
		c.inbound[key] = cancel
		c.mu.Unlock()
		go func() {
			select {
			case <-c.done:
				cancel()
			case <-ctx.Done():
			}
		}()
		res, err := c.h.request(ctx, m.Method, m.Params)
		cancelled := ctx.Err() != nil
		cancel()
		c.mu.Lock()
		delete(c.inbound, key)
		c.mu.Unlock()
		if cancelled {
			// Cancelled by the upstream (or it exited): it expects no answer.
			return
		}
		var rerr *RPCError
		switch {
		case errors.As(err, &rerr):
			resp.Error = rerr
		case err != nil:
			resp.Error = &RPCError{Code: -32603, Message: err.Error()}
		default:
			resp.Result = res
		}
	}
	if err := c.write(resp); err != nil {
		c.log.Debug("reply to upstream request failed", "server", c.name, "error", err)
	}
}

// rpcError is an error response; unlike rpcMessage it always carries its
// id, even when that id is null.
type rpcError struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Error   *RPCError       `json:"error"`
}

func (c *stdioConn) write(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	b = append(b, '\n')
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	select {
	case <-c.done:
		return c.Err()
	default:
	}
	_, err = c.in.Write(b)
	return err
}

func (c *stdioConn) Call(ctx context.Context, method string, params any) (json.RawMessage, error) {
	id := strconv.FormatInt(c.nextID.Add(1), 10)
	ch := make(chan rpcMessage, 1)
	c.mu.Lock()
	c.pending[id] = ch
	c.mu.Unlock()
	forget := func() {
		c.mu.Lock()
		delete(c.pending, id)
		c.mu.Unlock()
	}
	req := struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Method  string          `json:"method"`
		Params  any             `json:"params,omitempty"`
	}{"2.0", json.RawMessage(id), method, params}
	if err := c.write(req); err != nil {
		forget()
		// A broken pipe usually means the process is exiting: wait a
		// moment for its exit status and stderr, which say why.
		select {
		case <-c.done:
			return nil, c.Err()
		case <-time.After(time.Second):
		}
		return nil, fmt.Errorf("write to upstream %q: %w", c.name, err)
	}
	select {
	case m := <-ch:
		if m.Error != nil {
			return nil, m.Error
		}
		if m.Result == nil {
			return nil, fmt.Errorf("%w: response to %s has neither result nor error", ErrInvalidResponse, method)
		}
		return m.Result, nil
	case <-ctx.Done():
		forget()
		// Tell the upstream to stop working on it.
		_ = c.Notify(context.Background(), "notifications/cancelled", map[string]any{
			"requestId": json.RawMessage(id), "reason": ctx.Err().Error(),
		})
		return nil, ctx.Err()
	case <-c.done:
		forget()
		return nil, c.Err()
	}
}

func (c *stdioConn) Notify(_ context.Context, method string, params any) error {
	return c.write(struct {
		JSONRPC string `json:"jsonrpc"`
		Method  string `json:"method"`
		Params  any    `json:"params,omitempty"`
	}{"2.0", method, params})
}

// Close ends the process: stdin closed first (the polite MCP shutdown), then
// SIGTERM, then SIGKILL to the whole process group.
func (c *stdioConn) Close() error {
	_ = c.in.Close()
	select {
	case <-c.done:
		return nil
	case <-time.After(500 * time.Millisecond):
	}
	pid := c.cmd.Process.Pid
	_ = syscall.Kill(-pid, syscall.SIGTERM)
	select {
	case <-c.done:
		return nil
	case <-time.After(2 * time.Second):
	}
	_ = syscall.Kill(-pid, syscall.SIGKILL)
	<-c.done
	return nil
}

// tailBuffer keeps the last max bytes written to it: an upstream's stderr,
// quoted when it dies.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > t.max {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-t.max:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(bytes.TrimSpace(t.buf))
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
