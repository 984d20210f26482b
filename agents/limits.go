package agents

import (
	"fmt"
	"strings"

	"github.com/scratchpad-mcp/scratchpad-mcp/budget"
	"github.com/scratchpad-mcp/scratchpad-mcp/config"
)

// DefaultContextWindow is the window assumed when neither a model nor
// context_window is configured: the conservative size of today's common
// models.
const DefaultContextWindow = 128000

// ContextWindow is the context window of an agent of settings ag: its
// context_window, else its model's, else [DefaultContextWindow] when no
// model is named. 0 means a named model of unknown window ([Check] refuses
// such a config before serving).
func ContextWindow(ag config.Agent) int {
	if ag.ContextWindow > 0 {
		return ag.ContextWindow
	}
	if ag.Model == "" {
		return DefaultContextWindow
	}
	w, _ := budget.ContextWindowFor(ag.Model)
	return w
}

// LimitsMeta is the initialize result's _meta["scratchpad/limits"]: the
// effective limits of an agent of settings ag.
func LimitsMeta(ag config.Agent) map[string]any {
	sc := ag.Scratchpad
	return map[string]any{"scratchpad/limits": map[string]any{
		"max_extraction_tokens": sc.MaxExtractionTokens,
		"turn_depth_bonus":      sc.TurnDepthBonus,
		"context_window":        ContextWindow(ag),
		"context_safety_margin": sc.ContextSafetyMargin,
	}}
}

// Instructions is the initialize instructions for an agent of settings
// ag: how the model should treat pointers, and the limits an orchestrator
// may plan with.
func Instructions(ag config.Agent) string {
	sc := ag.Scratchpad
	return strings.TrimSpace(fmt.Sprintf(`scratchpad-mcp keeps your context clean. A tool result at or above its token threshold is saved to a file and you receive a short pointer (file name, size, shape, ready-to-run calls) instead. Explore stored files with head, slice, grep, schema, item_schema, get_in, iterate_over, count_by and read; each returns at most %d tokens per call and every result ends with a footer saying what was returned and how much of your budget is left. A result too large comes back as {"error": "<tool>_too_large", ...} with ready-to-run suggestions: run one of them. To hand a stored output (or a path of it) to another tool unread, that argument = {"$scratchpad":{"file":NAME,"path":P}}; "$scratchpad":{"store":true} in any call's arguments stores its result. Keep working notes with read_scratchpad, update_scratchpad and append_scratchpad.%s
Limits: max_extraction_tokens=%d, context_window=%d, turn_depth_bonus=%d.`,
		sc.MaxExtractionTokens, memoryLine(sc.MemoryTool), sc.MaxExtractionTokens, ContextWindow(ag), sc.TurnDepthBonus))
}

// memoryLine is the instructions' sentence on the memory tool, listed
// under name ("" when the agent is offered none).
func memoryLine(name string) string {
	if name == "" {
		return ""
	}
	return " Files that should outlast this conversation go under /memories with the " + name + " tool (view it first)."
}
