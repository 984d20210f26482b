package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"time"
)

// stdioConn runs an upstream as a child process and speaks newline-delimited
// JSON-RPC over its stdin/stdout. It owns the process, so it knows the moment
// the process exits (and with what status and last stderr lines), which is
// what restart and in-flight errors need. The JSON-RPC itself is [peer]'s;
// how the process and what it spawns are kept together and stopped is the
// operating system's ([procGroup]).
type stdioConn struct {
	*peer
	cmd   *exec.Cmd
	in    io.WriteCloser
	group procGroup

	writeMu sync.Mutex
	stderr  *tailBuffer
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
	// Last, so that no configured env can unset it: an upstream that is
	// scratchpad-mcp again knows it and refuses to serve (see Depth).
	cmd.Env = append(cmd.Env, DepthEnv+"="+strconv.Itoa(Depth()+1))
	var group procGroup
	group.prepare(cmd)
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	c := &stdioConn{
		cmd:    cmd,
		in:     in,
		stderr: &tailBuffer{max: 4096},
		group:  group,
	}
	c.peer = newPeer(name, h, log, c.send)
	c.sendFailed = c.writeFailed
	cmd.Stderr = c.stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("upstream %q: start %s: %w", name, argv[0], err)
	}
	if err := c.group.started(cmd); err != nil {
		log.Warn("the upstream's process could not be tied to the proxy; it may outlive a crash", "server", name, "error", err)
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
	r := newLineReader(out, c.h.maxMessage)
	for {
		// No line-length limit but max_result_bytes: a 100 MB result is
		// one line.
		line, skipped, err := r.next()
		if err != nil && skipped == nil && len(bytes.TrimSpace(line)) > 0 && !json.Valid(line) {
			// The process died mid-write (SIGKILL, a crash): an unfinished
			// line is not an answer. Its call fails with how the process
			// exited, not "invalid response".
			c.log.Debug("upstream's output ended inside a message; the unfinished line is dropped", "server", c.name, "bytes", len(line))
			line = nil
		}
		if skipped != nil {
			c.skipped(skipped)
		} else if len(bytes.TrimSpace(line)) > 0 {
			if sc := r.lastScan(); sc != nil {
				// Validated as it arrived: only the envelope is left.
				c.dispatchScanned(line, sc)
			} else {
				c.dispatch(line)
			}
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

// send writes one message as a line. A pipe write cannot be aborted, so
// ctx is not used.
func (c *stdioConn) send(_ context.Context, msg []byte) error {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	select {
	case <-c.done:
		return c.Err()
	default:
	}
	_, err := c.in.Write(append(msg, '\n'))
	return err
}

// writeFailed is Call's error for a request that could not be written.
func (c *stdioConn) writeFailed(_ context.Context, err error) error {
	// A broken pipe usually means the process is exiting: wait a
	// moment for its exit status and stderr, which say why.
	select {
	case <-c.done:
		return c.Err()
	case <-time.After(time.Second):
	}
	return fmt.Errorf("write to upstream %q: %w", c.name, err)
}

// Close ends the process: stdin closed first (the polite MCP shutdown), then
// a termination request, then a kill, each to everything it spawned too.
func (c *stdioConn) Close() error {
	defer c.group.release()
	_ = c.in.Close()
	select {
	case <-c.done:
		return nil
	case <-time.After(500 * time.Millisecond):
	}
	c.group.stop(c.cmd, false)
	select {
	case <-c.done:
		return nil
	case <-time.After(2 * time.Second):
	}
	c.group.stop(c.cmd, true)
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
