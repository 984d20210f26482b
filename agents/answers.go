package agents

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path"

	"github.com/scratchpad-mcp/scratchpad-mcp/internal/jsonscan"
	"github.com/scratchpad-mcp/scratchpad-mcp/layout"
	"github.com/scratchpad-mcp/scratchpad-mcp/memdir"
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
		var whole redact.Report
		if red := r.answerRedactor(fileArg(args)); red != nil && red.Mode() == redact.Mask {
			// The file itself first: a window cut through a credential
			// would show a piece of it, which no scan of the window finds.
			whole = r.maskWhole(ctx, red, fileArg(args))
		}
		res := h(ctx, args)
		if whole.Total > 0 {
			res.Text += fmt.Sprintf("\n(scratchpad-mcp: %d credential(s) masked in the stored file before this answer: %s; they read [REDACTED:kind:fingerprint])", whole.Total, redact.CountsText(whole.Counts))
		}
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

// maxWholeKnown bounds the files remembered as scanned whole.
const maxWholeKnown = 10_000

// maskWhole makes sure the stored file an exploration reads holds no
// credential before any window of it is cut (mask mode): a file stored
// before redaction existed, or written into the read root by another
// tool, is scanned whole once and, when it holds any, rewritten masked
// (memdir's atomic write). A file is known clean by its path, size and
// time, so the scan is done once per version of it.
func (r *Registry) maskWhole(ctx context.Context, red *redact.Redactor, file string) (masked redact.Report) {
	if file == "" {
		return
	}
	a, err := r.Resolve(ctx)
	if err != nil {
		return
	}
	d, err := memdir.In(r.opts.Config.MemoryDir, a.ReadRoot)
	if err != nil {
		return
	}
	fi, err := d.Stat(file)
	if err != nil || !fi.Mode().IsRegular() {
		return // the tool says what is wrong with the name
	}
	key := fmt.Sprintf("%s\x00%d\x00%d", d.Join(file), fi.Size(), fi.ModTime().UnixNano())
	r.wholeMu.Lock()
	known := r.wholeClean[key]
	r.wholeMu.Unlock()
	if known {
		return
	}
	data, err := d.ReadFile(file)
	if err != nil {
		return
	}
	scan := red.Text
	if jsonscan.Valid(data) {
		scan = red.JSON // masks inside strings: the file stays JSON
	}
	out, rep, err := scan(nil, data)
	if err != nil {
		return // unscannable (over the bound): each answer is still scanned
	}
	if rep.Total > 0 {
		if err := d.WriteFile(file, out); err != nil {
			r.log.Warn("masking the credentials in a stored file failed", "file", file, "error", err)
			return
		}
		r.log.Info("credentials in a stored file masked before exploring it", "file", file, "total", rep.Total, "kinds", redact.CountsText(rep.Counts))
		a.Budget.AddMasked(rep.Counts)
		masked = rep
		if fi, err = d.Stat(file); err != nil {
			return
		}
		key = fmt.Sprintf("%s\x00%d\x00%d", d.Join(file), fi.Size(), fi.ModTime().UnixNano())
	}
	r.wholeMu.Lock()
	if r.wholeClean == nil || len(r.wholeClean) >= maxWholeKnown {
		r.wholeClean = map[string]bool{}
	}
	r.wholeClean[key] = true
	r.wholeMu.Unlock()
	return masked
}
