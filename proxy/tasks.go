package proxy

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/scratchpad-mcp/scratchpad-mcp/divert"
	"github.com/scratchpad-mcp/scratchpad-mcp/internal/jsonscan"
	"github.com/scratchpad-mcp/scratchpad-mcp/upstream"
	"github.com/scratchpad-mcp/scratchpad-mcp/wire"
)

// Tasks (the io.modelcontextprotocol/tasks extension of 2026-07-28) are
// forwarded as the upstreams declare them: a tools/call answered with a
// task (resultType "task") passes undiverted, its taskId wrapped to name
// the upstream it lives on ([TaskID]); tasks/get, tasks/update and
// tasks/cancel go to that upstream with its own id ([Proxy.Task]), and a
// completed task's inlined result is diverted as the call's result would
// have been.

// TasksExtension is the tasks extension's id in capabilities.extensions.
const TasksExtension = wire.ExtensionTasks

// taskPrefix starts every task id the proxy hands out.
const taskPrefix = "spt."

// TaskID is the id a client is given for task id of upstream server.
func TaskID(server, id string) string {
	return taskPrefix + base64.RawURLEncoding.EncodeToString([]byte(server)) + "." + id
}

// parseTaskID undoes [TaskID].
func parseTaskID(wrapped string) (server, id string, ok bool) {
	rest, ok := strings.CutPrefix(wrapped, taskPrefix)
	if !ok {
		return "", "", false
	}
	enc, id, ok := strings.Cut(rest, ".")
	if !ok || id == "" {
		return "", "", false
	}
	b, err := base64.RawURLEncoding.DecodeString(enc)
	if err != nil {
		return "", "", false
	}
	return string(b), id, true
}

// maxTasks bounds the tasks whose tool the proxy remembers (for
// diverting their results); the oldest is forgotten first.
const maxTasks = 4096

// taskTools remembers which tool made a task.
type taskTools struct {
	mu    sync.Mutex
	tool  map[string]string // wrapped id → upstream's tool name
	order []string
}

func (t *taskTools) remember(wrapped, tool string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.tool == nil {
		t.tool = map[string]string{}
	}
	if _, ok := t.tool[wrapped]; !ok {
		t.order = append(t.order, wrapped)
	}
	t.tool[wrapped] = tool
	for len(t.order) > maxTasks {
		delete(t.tool, t.order[0])
		t.order = t.order[1:]
	}
}

func (t *taskTools) of(wrapped string) (string, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	tool, ok := t.tool[wrapped]
	return tool, ok
}

// taskResult wraps the taskId of a result that created a task, if it
// did (rtype, its resultType, says), and remembers its tool; isTask
// reports whether it did.
func (p *Proxy) taskResult(raw json.RawMessage, rtype, server, tool string) (out json.RawMessage, isTask bool, err error) {
	if rtype != wire.ResultTask {
		return raw, false, nil
	}
	out, wrapped, err := rewriteTaskID(raw, func(id string) string { return TaskID(server, id) })
	if err != nil {
		return nil, true, fmt.Errorf("%w: a task from %q: %v", upstream.ErrInvalidResponse, server, err)
	}
	p.tasks.remember(wrapped, tool)
	return out, true, nil
}

// Task forwards tasks/get, tasks/update or tasks/cancel (params as the
// client sent them) to the upstream the task lives on, with its own id;
// the answer names the task as the client knows it.
func (p *Proxy) Task(ctx context.Context, r *Request, method string, params json.RawMessage) (json.RawMessage, error) {
	var m map[string]any
	d := json.NewDecoder(bytes.NewReader(params))
	d.UseNumber()
	if err := d.Decode(&m); err != nil {
		return nil, fmt.Errorf("%w: %s params: %v", ErrNotFound, method, err)
	}
	wrapped, _ := m["taskId"].(string)
	server, id, ok := parseTaskID(wrapped)
	var u *upstream.Upstream
	for _, x := range p.ups {
		if ok && x.Name() == server {
			u = x
		}
	}
	if u == nil {
		return nil, fmt.Errorf("%w: task %q (not one this proxy gave)", ErrNotFound, wrapped)
	}
	m["taskId"] = id
	delete(m, "_meta") // the envelope is the upstream client's to send
	// A task's answer may carry its tool's result: scanned as one.
	raw, sec, err := p.forwardMasked(ctx, r, u, method, method+" answer", m)
	if err != nil {
		return nil, err
	}
	raw, _, err = rewriteTaskID(raw, func(string) string { return wrapped })
	if err != nil {
		return nil, fmt.Errorf("%w: %s from %q: %v", upstream.ErrInvalidResponse, method, server, err)
	}
	diverted := false
	if method == "tasks/get" {
		if raw, diverted, err = p.taskOutcome(r, raw, u, wrapped, sec); err != nil {
			return nil, err
		}
	}
	if !diverted {
		raw = withRedactedMeta(raw, sec)
	}
	// What the model reads costs its context, as a tool's result does.
	r.charge(ctx, raw)
	return raw, nil
}

// taskOutcome diverts a completed task's inlined result as its tool's
// result would have been (r is told when divert charged the answer, or
// it costs nothing: an app-only result, apps.go).
func (p *Proxy) taskOutcome(r *Request, raw json.RawMessage, u *upstream.Upstream, wrapped string, sec redacted) (_ json.RawMessage, diverted bool, _ error) {
	status, _ := jsonscan.Lookup(raw, "status")
	inner, ok := jsonscan.Lookup(raw, "result")
	tool, known := p.tasks.of(wrapped)
	if jsonscan.Unquote(status) != "completed" || !ok || !known {
		return raw, false, nil
	}
	cfg := u.Config()
	threshold, divertable := cfg.Threshold(tool)
	// Decide owns the bytes it is given (it may write in them): a copy,
	// not a piece of raw.
	dc := divert.Call{Server: cfg.Name, Tool: tool, Threshold: threshold, Valid: true, Secrets: sec.secrets()}
	if rt := p.cat.toolOn(u, tool); rt != nil {
		appDivert(&dc, rt.app, cfg, r)
		dc.SchemaListed = hasMember(rt.raw, "outputSchema") // as listed (catalogue.go)
	}
	if !divertable && !dc.AppOnly {
		return raw, false, nil
	}
	dc.Result, dc.Owned = bytes.Clone(inner), true
	out, err := divert.Decide(dc, r.agent(), divert.Options{ExactCountLimit: p.opts.ExactCountLimit, Logger: p.log})
	if err != nil {
		return raw, false, nil
	}
	r.chargedBy(out)
	if !out.Diverted {
		return raw, false, nil
	}
	res, err := setMember(raw, "result", out.Result)
	return res, true, err
}

// rewriteTaskID replaces the string member taskId of the object raw with
// to(its value), and returns the new id too; raw is returned as it is
// when it has no taskId.
func rewriteTaskID(raw json.RawMessage, to func(string) string) (json.RawMessage, string, error) {
	v, ok := jsonscan.Lookup(raw, "taskId")
	if !ok {
		return raw, "", nil
	}
	if len(v) == 0 || v[0] != '"' {
		return nil, "", fmt.Errorf("taskId is not a string")
	}
	id := to(jsonscan.Unquote(v))
	q, _ := json.Marshal(id)
	out, err := setMember(raw, "taskId", q)
	return out, id, err
}

// setMember returns the object raw with its top-level member key's value
// replaced by val; every other byte is kept.
func setMember(raw json.RawMessage, key string, val []byte) (json.RawMessage, error) {
	ms, err := jsonscan.Members(raw)
	if err != nil {
		return nil, err
	}
	for _, m := range ms {
		if jsonscan.Unquote(raw[m.KeyStart-1:m.KeyEnd+1]) != key {
			continue
		}
		out := make([]byte, 0, len(raw)-(m.ValueEnd-m.ValueStart)+len(val))
		out = append(out, raw[:m.ValueStart]...)
		out = append(out, val...)
		return append(out, raw[m.ValueEnd:]...), nil
	}
	return raw, nil
}
