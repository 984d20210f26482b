package telemetry

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/scratchpad-mcp/scratchpad-mcp/config"
)

// Record is one audit line: one finished call. It holds who called, what
// ran and what it cost, never argument or result values.
type Record struct {
	Time      time.Time `json:"time"`
	Owner     string    `json:"owner,omitempty"`
	Agent     string    `json:"agent,omitempty"`
	Run       string    `json:"run,omitempty"`
	Role      string    `json:"role,omitempty"`
	Server    string    `json:"server,omitempty"` // the upstream; "" for the own tools
	Tool      string    `json:"tool"`
	Outcome   string    `json:"outcome"`         // "ok", "tool_error", or error.type
	TokensIn  int       `json:"tokens_in"`       // the result's tokens as counted
	TokensOut int       `json:"tokens_out"`      // tokens that reached the context
	Diverted  int       `json:"tokens_diverted"` // TokensIn kept out of the context
	File      string    `json:"diverted_file,omitempty"`
	// ByReference are the tokens of stored outputs the call's arguments
	// took by reference (never in the context), and Referenced the
	// files they named: names, never content.
	ByReference int      `json:"tokens_by_reference,omitempty"`
	Referenced  []string `json:"referenced_files,omitempty"`
	BudgetLeft  int      `json:"budget_left,omitempty"`  // the agent's budget after the call
	BudgetSize  int      `json:"budget_total,omitempty"` // the agent's whole budget, for the dashboard's bar
	DurationMS  float64  `json:"duration_ms"`
	TraceID     string   `json:"trace_id,omitempty"`
}

// OutcomeText is Record.Outcome of o.
func OutcomeText(o Outcome) string {
	if et := o.errorType(); et != "" {
		return et
	}
	return "ok"
}

// Audit writes r as one line of the audit log (when configured) and keeps
// it for the dashboard ([Provider.Calls]). It never blocks: a line the
// writer cannot take now is dropped and counted.
func (p *Provider) Audit(r Record) {
	if p == nil {
		return
	}
	if r.Time.IsZero() {
		r.Time = time.Now()
	}
	r.Time = r.Time.UTC()
	p.recent.add(r)
	if p.audit == nil {
		return
	}
	line, err := json.Marshal(r)
	if err != nil {
		return // a Record of strings and numbers always marshals
	}
	p.audit.write(append(line, '\n'))
}

// auditLog is the bounded writer behind [Provider.Audit].
type auditLog struct {
	ch      chan []byte
	w       io.Writer
	file    *os.File // nil for stderr
	path    string
	max     int64 // rotate past this size; 0: never
	size    int64
	done    chan struct{}
	once    sync.Once
	dropped atomic.Int64
}

func openAudit(dest string, size int, maxBytes int64, stderr io.Writer) (*auditLog, error) {
	a := &auditLog{ch: make(chan []byte, size), done: make(chan struct{}), path: dest, max: maxBytes}
	if dest == config.AuditStderr {
		a.w = stderr
		if a.w == nil {
			a.w = os.Stderr
		}
	} else {
		if err := os.MkdirAll(filepath.Dir(dest), 0o700); err != nil {
			return nil, fmt.Errorf("telemetry: [telemetry] audit_log: %w", err)
		}
		if err := a.open(); err != nil {
			return nil, fmt.Errorf("telemetry: [telemetry] audit_log: %w", err)
		}
	}
	go a.run()
	return a, nil
}

func (a *auditLog) write(line []byte) {
	select {
	case a.ch <- line:
	default:
		a.dropped.Add(1)
	}
}

// open opens (appends to) the audit file, 0600.
func (a *auditLog) open() error {
	f, err := os.OpenFile(a.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return err
	}
	a.file, a.w, a.size = f, f, st.Size()
	return nil
}

// rotate renames the full file to {path}.1 and starts a new one; on
// failure it goes on appending (a line lost is worse than a big file).
func (a *auditLog) rotate() {
	if a.file.Close() != nil || os.Rename(a.path, a.path+".1") != nil {
		_ = a.open()
		return
	}
	if a.open() != nil {
		a.file, a.w = nil, io.Discard
	}
}

func (a *auditLog) run() {
	defer close(a.done)
	for line := range a.ch {
		if a.file != nil && a.max > 0 && a.size > 0 && a.size+int64(len(line)) > a.max {
			a.rotate()
		}
		n, err := a.w.Write(line)
		a.size += int64(n)
		if err != nil {
			// A full disk: the line is lost, counted like a drop.
			a.dropped.Add(1)
		}
	}
}

func (a *auditLog) close(ctx context.Context) error {
	a.once.Do(func() { close(a.ch) })
	select {
	case <-a.done:
	case <-ctx.Done():
		return ctx.Err()
	}
	if a.file != nil {
		return a.file.Close()
	}
	return nil
}

// maxAuditTail bounds how much of an audit log [ReadAudit] reads: its
// last bytes, the recent calls.
const maxAuditTail = 8 << 20

// ReadAudit reads the records of an audit log file, oldest first, from
// its last 8 MiB; lines that are not a record are skipped. For the
// dashboard command, which runs beside a server it cannot ask.
func ReadAudit(path string) ([]Record, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("telemetry: read audit log: %w", err)
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Size() > maxAuditTail {
		if _, err := f.Seek(st.Size()-maxAuditTail, io.SeekStart); err != nil {
			return nil, fmt.Errorf("telemetry: read audit log: %w", err)
		}
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	var out []Record
	for sc.Scan() {
		var r Record
		if b := sc.Bytes(); bytes.HasPrefix(b, []byte("{")) && json.Unmarshal(b, &r) == nil && r.Tool != "" {
			out = append(out, r)
		}
	}
	if err := sc.Err(); err != nil {
		return out, fmt.Errorf("telemetry: read audit log: %w", err)
	}
	return out, nil
}
