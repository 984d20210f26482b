package artifacts

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/scratchpad-mcp/scratchpad-mcp/tool"
)

type handlers struct{ envFor EnvFunc }

func (h handlers) env(ctx context.Context) (*Env, error) {
	env, err := h.envFor(ctx)
	if err != nil {
		return nil, fmt.Errorf("artifacts: session environment: %w", err)
	}
	if env == nil {
		env = &Env{}
	}
	return env, nil
}

// msgNoRun is what a coordinator without a run is told.
const msgNoRun = "this session belongs to no run, so nothing persists between agents: embed the content in the task instead"

func (h handlers) write(ctx context.Context, args writeArgs, _ json.RawMessage) tool.Result {
	env, err := h.env(ctx)
	if err != nil {
		return tool.Error(err.Error())
	}
	filename, content := args.Filename, args.Content
	switch {
	case env.Role != RoleCoordinator:
		return jsonResult(WriteResult{Error: "write_artifact is for coordinators; this session's role is " + strconv.Quote(env.Role)})
	case env.Store == nil:
		return jsonResult(WriteResult{Error: msgNoRun})
	}
	res, _ := env.Store.Write(filename, content) // the result carries the error for the model
	return jsonResult(res)
}

// notFound is read_artifact's answer for an unknown name.
type notFound struct {
	Found            bool     `json:"found"`
	Filename         string   `json:"filename"`
	Available        []string `json:"available"`
	AvailableOmitted int      `json:"available_omitted"`
	Message          string   `json:"message"`
}

// toolError is the structured error object of DESIGN.md.
type toolError struct {
	Error   string `json:"error"`
	Message string `json:"message"`
}

// tooLarge is read_artifact's in-place pointer.
type tooLarge struct {
	Error           string       `json:"error"`
	Found           bool         `json:"found"`
	Filename        string       `json:"filename"`
	Path            string       `json:"path,omitempty"`
	SizeBytes       int64        `json:"size_bytes"`
	EstimatedTokens int          `json:"estimated_tokens"`
	PerCallLimit    *int         `json:"per_call_limit,omitempty"`
	RemainingBudget *int         `json:"remaining_budget_tokens,omitempty"`
	Message         string       `json:"message"`
	Suggestions     []suggestion `json:"suggestions,omitempty"`
}

type suggestion struct {
	Tool      string         `json:"tool"`
	Arguments map[string]any `json:"arguments"`
}

func (h handlers) read(ctx context.Context, args readArgs, _ json.RawMessage) tool.Result {
	env, err := h.env(ctx)
	if err != nil {
		return tool.Error(err.Error())
	}
	filename, runID := args.Filename, args.RunID
	store, inPlace := env.Store, true
	if runID != "" && runID != env.RunID {
		if env.OpenRun == nil {
			return jsonResult(toolError{"run_not_available", "this session can only read its own run's artifacts: omit run_id"})
		}
		if store, err = env.OpenRun(runID); err != nil {
			return jsonResult(toolError{"invalid_run_id", "run_id must be a plain run id such as the one in a pointer"})
		}
		inPlace = false // outside this session's read root
	}
	if store == nil {
		return jsonResult(toolError{"no_run", "this session belongs to no run, so it has no artifacts"})
	}

	unlimited := env.Budget == nil && env.Role == RoleCoordinator
	perCall := env.MaxExtractionTokens
	if perCall <= 0 {
		perCall = DefaultMaxExtractionTokens
	}
	limit, remaining := perCall, math.MaxInt
	if env.Budget != nil {
		remaining = env.Budget.Remaining()
		limit = min(limit, remaining)
	}
	var maxBytes int64
	if !unlimited {
		maxBytes = int64(limit) * maxBytesPerToken
		if maxBytes == 0 {
			maxBytes = 1 // nothing fits; still find the file, read nothing
		}
	}

	res, err := store.Read(filename, maxBytes)
	switch {
	case errors.Is(err, ErrOutsideArtifacts):
		return jsonResult(toolError{"outside_artifacts", ErrOutsideArtifacts.Error() + ": use list_artifacts for the names"})
	case errors.Is(err, ErrInvalidName), errors.Is(err, ErrNotFile):
		return jsonResult(toolError{"invalid_artifact_name", fmt.Sprintf("%q is not an artifact file: use list_artifacts for the names", filename)})
	case err != nil:
		return tool.Error(err.Error())
	case !res.Found:
		avail := res.Available
		if avail == nil {
			avail = []string{}
		}
		return jsonResult(notFound{Filename: filename, Available: avail, AvailableOmitted: res.AvailableOmitted,
			Message: "no artifact named " + strconv.Quote(filename)})
	}

	count := env.Count
	if count == nil {
		count = estimate
	}
	pointer := func(tokens int) tool.Result {
		p := tooLarge{Error: "read_artifact_too_large", Found: true, Filename: res.Filename, SizeBytes: res.Size, EstimatedTokens: tokens}
		if remaining < perCall {
			p.RemainingBudget = &remaining
		} else {
			p.PerCallLimit = &perCall
		}
		if inPlace {
			prefix := env.ExplorePrefix
			if prefix == "" {
				prefix = DefaultExplorePrefix
			}
			p.Path = prefix + res.Filename
			if err := store.Local(res.Filename); err != nil {
				return tool.Error(err.Error())
			}
			p.Message = fmt.Sprintf("%s is too large to return whole (~%d tokens). It is not copied: explore it in place at %q "+
				"with head, slice, grep, schema, get_in or iterate_over.", res.Filename, tokens, p.Path)
			p.Suggestions = []suggestion{
				{"schema", map[string]any{"file": p.Path}},
				{"head", map[string]any{"file": p.Path, "lines": 50}},
			}
		} else {
			p.Message = fmt.Sprintf("%s of run %s is too large to return whole (~%d tokens) and lies outside this session's files.",
				res.Filename, runID, tokens)
		}
		return jsonResult(p)
	}
	if res.TooLarge {
		return pointer(int((res.Size + bytesPerToken - 1) / bytesPerToken))
	}

	if unlimited {
		return tool.Text(res.Content + footer(res, -1, 0, nil))
	}
	body := count(res.Content)
	foot := footer(res, body, remaining, env.Budget)
	n := body + count(foot) // the footer is charged too
	if n > limit {
		return pointer(n)
	}
	if env.Budget != nil {
		if _, ok := env.Budget.TryCharge(n); !ok {
			// A parallel call spent the budget since Remaining.
			remaining = env.Budget.Remaining()
			return pointer(n)
		}
	}
	return tool.Result{Text: res.Content + foot, Charged: n}
}

// footer ends an inline artifact the way exploration results end.
// A negative tokens means "not counted" (no budget, no cap).
func footer(res ReadResult, tokens, remaining int, b Budget) string {
	s := "\n--- read_artifact: " + res.Filename + " (" + strconv.FormatInt(res.Size, 10) + " bytes)"
	if tokens >= 0 {
		s += " | ~" + strconv.Itoa(tokens) + " tokens"
	}
	if b != nil {
		s += ", ~" + strconv.Itoa(max(remaining-tokens, 0)) + " left of " + strconv.Itoa(b.Total())
	}
	return s + " ---"
}

// listResult is list_artifacts' answer.
type listResult struct {
	Artifacts []Entry `json:"artifacts"`
	Count     int     `json:"count"`
	Message   string  `json:"message,omitempty"`
}

func (h handlers) list(ctx context.Context, _ listArgs, _ json.RawMessage) tool.Result {
	env, err := h.env(ctx)
	if err != nil {
		return tool.Error(err.Error())
	}
	if env.Store == nil {
		return jsonResult(listResult{Artifacts: []Entry{}, Message: "this session belongs to no run, so it has no artifacts"})
	}
	count := env.Count
	if count == nil {
		count = estimate
	}
	entries, err := env.Store.List(count)
	if err != nil {
		return tool.Error(err.Error())
	}
	if entries == nil {
		entries = []Entry{}
	}
	return jsonResult(listResult{Artifacts: entries, Count: len(entries)})
}

// estimate counts tokens as bytes/4 when the session has no counter.
func estimate(s string) int { return (len(s) + bytesPerToken - 1) / bytesPerToken }

// jsonResult is v encoded as the result's text.
func jsonResult(v any) tool.Result {
	b, err := json.Marshal(v)
	if err != nil {
		return tool.Error("artifacts: encode result: " + err.Error())
	}
	return tool.Text(string(b))
}
