package proxy

import (
	"encoding/json"
	"errors"

	"github.com/scratchpad-mcp/scratchpad-mcp/config"
	"github.com/scratchpad-mcp/scratchpad-mcp/redact"
	"github.com/scratchpad-mcp/scratchpad-mcp/upstream"
)

// The redact stage for everything an upstream sends toward a client
// besides a result (results: redact.go, where the divert needs what was
// found): a JSON-RPC error's message and data, a notification's params
// (progress, log messages, resource updates), a request to the client
// (elicitation, sampling) and the questions of an input-required answer,
// the listed definitions of tools, resources, templates and prompts, a
// completion, a task. Each passes [Proxy.mask] with its server's
// redaction, so no kind of message reaches a client around it.

// mask is raw (JSON) with the secrets its server's redaction finds
// masked (mask mode) or left (flag mode: reported in the log). ok is
// false when raw cannot be scanned in mask mode: the caller drops what
// it would have sent, or says it was withheld.
func (p *Proxy) mask(sc *config.Server, what string, raw json.RawMessage) (_ json.RawMessage, ok bool) {
	red := p.redactor(sc)
	if red == nil || len(raw) == 0 {
		return raw, true
	}
	out, rep, err := red.JSON(nil, raw)
	if err != nil {
		if red.Mode() == redact.Flag {
			return raw, true
		}
		p.log.Warn("withheld from the client: it cannot be scanned for secrets", "server", sc.Name, "what", what, "error", err)
		return nil, false
	}
	if rep.Total > 0 {
		p.log.Info("secrets in an upstream message", "server", sc.Name, "what", what, "mode", string(red.Mode()), "total", rep.Total)
	}
	if red.Mode() != redact.Mask {
		return raw, true
	}
	return out, true
}

// maskText is [Proxy.mask] of a plain string (an error's message).
func (p *Proxy) maskText(sc *config.Server, what, s string) string {
	red := p.redactor(sc)
	if red == nil || s == "" {
		return s
	}
	out, rep, err := red.Text(nil, []byte(s))
	switch {
	case err != nil && red.Mode() != redact.Flag:
		return "(withheld: it cannot be scanned for secrets)"
	case err != nil || red.Mode() != redact.Mask:
		return s
	}
	if rep.Total > 0 {
		p.log.Info("secrets in an upstream message", "server", sc.Name, "what", what, "mode", string(red.Mode()), "total", rep.Total)
	}
	return string(out)
}

// maskError masks an upstream's JSON-RPC error (its message and data)
// and an input-required answer's questions; any other error is the
// proxy's own words, returned as it is.
func (p *Proxy) maskError(sc *config.Server, what string, err error) error {
	if rerr, ok := errors.AsType[*upstream.RPCError](err); ok {
		out := *rerr
		out.Message = p.maskText(sc, what+" error", rerr.Message)
		if len(rerr.Data) > 0 {
			if d, ok := p.mask(sc, what+" error data", rerr.Data); ok {
				out.Data = d
			} else {
				out.Data = nil
			}
		}
		return &out
	}
	if ir, ok := errors.AsType[*upstream.InputRequired](err); ok {
		out := *ir
		out.Requests = make(map[string]json.RawMessage, len(ir.Requests))
		for k, q := range ir.Requests {
			if m, ok := p.mask(sc, what+" input request", q); ok {
				out.Requests[k] = m
			}
		}
		return &out
	}
	return err
}
