package agents

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/scratchpad-mcp/scratchpad-mcp/artifacts"
	"github.com/scratchpad-mcp/scratchpad-mcp/pad"
	"github.com/scratchpad-mcp/scratchpad-mcp/redact"
	"github.com/scratchpad-mcp/scratchpad-mcp/tool"
)

// writes are the own tools that store what the model gives them: the
// pad's updates and appends (sections, ledger notes, keyed values), an
// artifact's content and, under whichever name it has
// ([Registry.isMemoryTool]), the memory tool's files (its old_str is
// masked as the stored text was, so it still matches). Their arguments
// pass [Registry.scrubbing].
var writes = map[string]bool{pad.ToolUpdate: true, pad.ToolAppend: true, artifacts.ToolWrite: true}

// scrubbing wraps a writing tool's handler so that no credential in its
// arguments is stored ([redaction] mode): in mask mode every string of
// the arguments is scanned and the secrets masked before the handler
// decodes them, so the pad, its history and ledger, and the artifact
// (files or Redis) hold the mask; the answer says how many of which
// kinds. In flag mode the arguments are kept and the answer says what is
// in them. Arguments that cannot be scanned are refused in mask mode.
func (r *Registry) scrubbing(name string, h tool.Handler) tool.Handler {
	red := r.opts.Redactor
	if red == nil || red.Mode() == redact.Off || !writes[name] && !r.isMemoryTool(name) {
		return h
	}
	return func(ctx context.Context, args json.RawMessage) tool.Result {
		out, rep, err := red.JSON(nil, args)
		if err != nil {
			var ue *redact.UnscannableError
			if errors.As(err, &ue) && red.Mode() == redact.Mask {
				b, _ := json.Marshal(map[string]string{"error": "invalid_arguments",
					"message": fmt.Sprintf("%s was not written: its arguments cannot be scanned for credentials (%s).", name, ue.Reason)})
				return tool.Error(string(b))
			}
			return h(ctx, args)
		}
		if rep.Total == 0 {
			return h(ctx, args)
		}
		kinds := redact.CountsText(rep.Counts)
		r.log.Info("credentials in a write", "tool", name, "mode", string(red.Mode()), "total", rep.Total, "kinds", kinds)
		if red.Mode() == redact.Flag {
			res := h(ctx, args)
			res.Text += fmt.Sprintf("\n(scratchpad-mcp: %d credential(s) written as they are: %s; [redaction] mode = \"flag\")", rep.Total, kinds)
			return res
		}
		res := h(ctx, out)
		if ag, err := r.Resolve(ctx); err == nil {
			ag.Budget.AddMasked(rep.Counts)
		}
		if !res.IsError {
			res.Text += fmt.Sprintf("\n(scratchpad-mcp: %d credential(s) masked before writing: %s; they are stored as [REDACTED:kind:fingerprint])", rep.Total, kinds)
		}
		return res
	}
}
