package proxy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/scratchpad-mcp/scratchpad-mcp/config"
	"github.com/scratchpad-mcp/scratchpad-mcp/divert"
	"github.com/scratchpad-mcp/scratchpad-mcp/internal/jsonscan"
	"github.com/scratchpad-mcp/scratchpad-mcp/redact"
	"github.com/scratchpad-mcp/scratchpad-mcp/upstream"
)

// RedactedMetaKey is the _meta key of a result the proxy scanned and found
// secrets in: {"mode": "mask"|"flag", "counts": {kind: n}, "total": n}
// (flag mode adds "findings": [{kind, start, end, fingerprint}], offsets
// in the result as sent), or that it could not scan in flag mode
// ({"mode": "flag", "unscanned": reason}). A result that looked like
// binary content (NUL bytes, invalid UTF-8) was scanned as text all the
// same, and "binary" says what it looked like ("binary: 3 NUL bytes"),
// with or without secrets found.
const RedactedMetaKey = "scratchpad/redacted"

// redacted is what scanning one upstream result did.
type redacted struct {
	mode   redact.Mode
	rep    redact.Report
	reason string // not scanned (flag mode): why
	red    *redact.Redactor
}

// secrets is the divert's view of it: what the pointer says.
func (r redacted) secrets() divert.Secrets {
	s := divert.Secrets{Counts: r.rep.Counts, Total: r.rep.Total, Kept: r.mode == redact.Flag, Unscanned: r.reason}
	if s.Kept && s.Total > 0 && r.red != nil {
		red := r.red
		s.Where = func(stored io.Reader) string { return storedPlaces(red, stored) }
	}
	return s
}

// maxPlaces bounds the places of kept secrets a pointer names.
const maxPlaces = 10

// storedPlaces names where the secrets kept in a stored output are, by
// the stored file's lines ("github-pat on line 3; jwt on line 40; 2
// more"), scanning it again: the findings' offsets are of the result as
// it came, and the file is laid out anew (flag mode only).
func storedPlaces(red *redact.Redactor, stored io.Reader) string {
	data, err := io.ReadAll(stored)
	if err != nil {
		return ""
	}
	_, rep, err := red.Text(nil, data)
	if err != nil || rep.Total == 0 {
		return ""
	}
	return redact.Places(data, rep, maxPlaces, func(l redact.Located) string { return "on line " + strconv.Itoa(l.Line) })
}

// redactor is the redactor of server sc's results, nil when its mode is
// off or the proxy redacts nothing.
func (p *Proxy) redactor(sc *config.Server) *redact.Redactor {
	if p.opts.Redact == nil {
		return nil
	}
	return p.opts.Redact(sc)
}

// redact scans an upstream result (tools/call, resources/read,
// prompts/get) before anything counts, stores or shows it: in mask mode
// the secrets in it are replaced ([redact.Redactor.JSON]), in flag mode
// kept and reported. A result that cannot be scanned is refused in mask
// mode (err says why and what to set instead), kept and reported in flag
// mode. raw may be returned as it is, or a fresh buffer.
func (p *Proxy) redact(sc *config.Server, what string, raw json.RawMessage) (json.RawMessage, redacted, error) {
	red := p.redactor(sc)
	if red == nil {
		return raw, redacted{}, nil
	}
	out, rep, err := red.JSON(nil, raw)
	r := redacted{mode: red.Mode(), rep: rep, red: red}
	if err != nil {
		var ue *redact.UnscannableError
		reason := err.Error()
		if errors.As(err, &ue) {
			reason = ue.Reason
		}
		// Text that went unread (over the scan bound) is refused in mask
		// mode. (Binary-looking content is scanned like any other; a
		// resource's base64 blob is skipped, see redact.)
		if red.Mode() != redact.Flag {
			return nil, r, fmt.Errorf("the %s from upstream %q was not returned: it cannot be scanned for secrets (%s). If it must pass unscanned, set redaction = \"flag\" (kept and reported) or \"off\" in [mcp.servers.%s]", what, sc.Name, reason, sc.Name)
		}
		r.reason = reason
		return raw, r, nil
	}
	// A secret cut across two text items is whole to the model.
	if across, arep, aerr := maskAcross(red, out); aerr == nil && arep.Total > 0 {
		out = across
		if rep.Counts == nil {
			rep.Counts = map[string]int{}
		}
		for k, n := range arep.Counts {
			rep.Counts[k] += n
		}
		rep.Total += arep.Total
	}
	if rep.Total > 0 {
		p.log.Info("secrets in an upstream result", "server", sc.Name, "what", what, "mode", string(r.mode), "total", rep.Total, "kinds", strings.Join(rep.Kinds(), ","), "binary", rep.Binary)
	}
	return out, r, nil
}

// forwardMasked forwards one request to u and passes its answer through
// the redaction stage: masked (what names the answer in an error) and
// counted for the calling agent. The caller adds withRedactedMeta where
// the answer reaches the client as it is.
func (p *Proxy) forwardMasked(ctx context.Context, r *Request, u *upstream.Upstream, method, what string, params any) (json.RawMessage, redacted, error) {
	raw, err := p.forward(ctx, r, u, method, method, params)
	if err != nil {
		return nil, redacted{}, err
	}
	raw, sec, err := p.redact(u.Config(), what, raw)
	if err != nil {
		return nil, redacted{}, err
	}
	p.tellMasked(r, sec)
	return raw, sec, nil
}

// tellMasked counts what sec masked for req's agent (its usage record's
// secrets_masked).
func (p *Proxy) tellMasked(req *Request, sec redacted) {
	if sec.mode != redact.Mask || sec.rep.Total == 0 {
		return
	}
	req.agent().Masked(sec.rep.Counts)
}

// withRedactedMeta returns res (a JSON object) with _meta[RedactedMetaKey]
// saying what r found, or res itself when there is nothing to say.
func withRedactedMeta(res json.RawMessage, r redacted) json.RawMessage {
	if r.rep.Total == 0 && r.reason == "" && r.rep.Binary == "" {
		return res
	}
	m := map[string]any{"mode": string(r.mode)}
	if r.rep.Binary != "" {
		// Scanned as text all the same: said, so a client (or its
		// operator) knows the result was not what it looked like.
		m["binary"] = r.rep.Binary
	}
	if r.reason != "" {
		m["unscanned"] = r.reason
	} else if r.rep.Total > 0 {
		m["counts"], m["total"] = r.rep.Counts, r.rep.Total
		if r.mode == redact.Flag {
			type finding struct {
				Kind        string `json:"kind"`
				Start       int    `json:"start"`
				End         int    `json:"end"`
				Fingerprint string `json:"fingerprint"`
			}
			fs := make([]finding, len(r.rep.Findings))
			for i, f := range r.rep.Findings {
				fs[i] = finding{f.Kind, f.Start, f.End, f.Fingerprint}
			}
			m["findings"] = fs
			if r.rep.More > 0 {
				m["more"] = r.rep.More
			}
		}
	}
	out, err := withMeta(res, RedactedMetaKey, m)
	if err != nil {
		return res
	}
	return out
}

// withMeta returns the JSON object res with _meta[key] = v: res's own
// _meta gains the key (or gets it replaced); without one, a _meta member
// is added at the end, so offsets into res before it stay true.
func withMeta(res json.RawMessage, key string, v any) (json.RawMessage, error) {
	if old, ok := jsonscan.Lookup(res, "_meta"); ok {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(old, &m); err != nil || m == nil {
			return nil, fmt.Errorf("result _meta is not an object")
		}
		b, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		m[key] = b
		nm, err := json.Marshal(m)
		if err != nil {
			return nil, err
		}
		at := cap(res) - cap(old) // old is a subslice of res
		out := make([]byte, 0, len(res)-len(old)+len(nm))
		out = append(append(append(out, res[:at]...), nm...), res[at+len(old):]...)
		return out, nil
	}
	end := len(res) - 1
	for end >= 0 && res[end] != '}' {
		end--
	}
	if end < 0 {
		return nil, fmt.Errorf("result is not an object")
	}
	meta, err := json.Marshal(map[string]any{key: v})
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, len(res)+len(meta)+10)
	out = append(out, res[:end]...)
	if i := jsonscan.SkipSpace(res, jsonscan.SkipSpace(res, 0)+1); i < end {
		out = append(out, ',')
	}
	out = append(append(out, `"_meta":`...), meta...)
	return append(out, res[end:]...), nil
}
