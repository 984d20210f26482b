package agents

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path"

	"github.com/scratchpad-mcp/scratchpad-mcp/layout"
	"github.com/scratchpad-mcp/scratchpad-mcp/redact"
	"github.com/scratchpad-mcp/scratchpad-mcp/tool"
)

// maxWhere bounds the places an answer's footer names in flag mode.
const maxWhere = 10

// scanning wraps an exploration tool's handler so that its answer is
// scanned for credentials before the model sees it (and before it is
// charged): outputs diverted since redaction exist are stored masked,
// but a file stored before it, or in flag mode, or written by another
// tool into the read root, is not. The mode is that of the server whose
// output the file is ([layout.OutputServer]; its own redaction key, else
// [redaction] mode), or [redaction] mode for an answer over several
// files. Mask mode masks and says so; flag mode keeps the answer and its
// footer says where the credentials are: the stored file's line where
// the answer's line names one ("  12: …", as head, slice and grep
// write them), else the answer's own line.
func (r *Registry) scanning(name string, h tool.Handler) tool.Handler {
	if r.opts.Redactor == nil {
		return h
	}
	return func(ctx context.Context, args json.RawMessage) tool.Result {
		res := h(ctx, args)
		red := r.answerRedactor(fileArg(args))
		if red == nil || res.Text == "" {
			return res
		}
		text := []byte(res.Text)
		scan := red.Text
		if json.Valid(text) {
			scan = red.JSON // masks stay inside strings: the answer stays JSON
		}
		out, rep, err := scan(nil, text)
		if err != nil || rep.Total == 0 {
			return res // binary text passes, as results do (proxy/redact.go)
		}
		kinds := redact.CountsText(rep.Counts)
		r.log.Info("credentials in an exploration answer", "tool", name, "mode", string(red.Mode()), "total", rep.Total, "kinds", kinds)
		if red.Mode() == redact.Flag {
			res.Text += fmt.Sprintf("\n(scratchpad-mcp: this answer shows %d credential(s) as they are ([redaction] mode = \"flag\"): %s)", rep.Total, where(text, rep))
			return res
		}
		res.Text = string(out) + fmt.Sprintf("\n(scratchpad-mcp: %d credential(s) masked in this answer: %s; they read [REDACTED:kind:fingerprint])", rep.Total, kinds)
		if ag, err := r.Resolve(ctx); err == nil {
			ag.Budget.AddMasked(rep.Counts)
		}
		return res
	}
}

// answerRedactor is the redactor of an answer over file ("": several),
// nil when its mode is off.
func (r *Registry) answerRedactor(file string) *redact.Redactor {
	mode := r.opts.Redactor.Mode()
	if file != "" {
		if m, ok := r.serverModes[layout.OutputServer(path.Base(file), r.servers)]; ok {
			mode = m
		}
	}
	if mode == redact.Off {
		return nil
	}
	return r.opts.Redactor.With(mode)
}

// outputModes fills the registry's server names and own redaction
// modes from the configuration, once.
func (r *Registry) outputModes() {
	r.serverModes = map[string]redact.Mode{}
	for i := range r.opts.Config.Servers {
		sc := &r.opts.Config.Servers[i]
		r.servers = append(r.servers, sc.Name)
		if sc.Redaction != "" {
			r.serverModes[sc.Name] = redact.Mode(sc.Redaction)
		}
	}
}

// where names the places of rep's findings in text: "github-pat on line
// 1,204 of the file" when the answer's line starts with the file's line
// number, else "on line 3 of this answer".
func where(text []byte, rep redact.Report) string {
	return redact.Places(text, rep, maxWhere, func(l redact.Located) string {
		if n, ok := fileLine(l.Text); ok {
			return "on line " + n + " of the file"
		}
		return fmt.Sprintf("on line %d of this answer", l.Line)
	})
}

// fileLine is the line number an answer's line starts with ("  12: …"
// as head and slice write them, "> 17: …" as grep marks a match).
func fileLine(line []byte) (string, bool) {
	t := bytes.TrimLeft(line, "> ")
	n := 0
	for n < len(t) && t[n] >= '0' && t[n] <= '9' {
		n++
	}
	if n == 0 || n == len(t) || t[n] != ':' {
		return "", false
	}
	return string(t[:n]), true
}
