package artifacts

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// Tool names.
const (
	ToolWrite = "write_artifact"
	ToolRead  = "read_artifact"
	ToolList  = "list_artifacts"
)

// RoleCoordinator is the role allowed to write artifacts.
const RoleCoordinator = "coordinator"

// DefaultMaxExtractionTokens is the per-call cap when [Env] sets none,
// the same default as the exploration tools'.
const DefaultMaxExtractionTokens = 10000

// DefaultExplorePrefix is where an artifact is found relative to the
// exploration tools' file arguments. Those resolve from the worker's
// stored-outputs directory, {run}/iteration-{n}/scratchpad, inside the
// read root {run}; the artifacts are in {run}/artifacts.
const DefaultExplorePrefix = "../../" + Dir + "/"

// maxBytesPerToken bounds how many bytes one token can stand for. A file
// larger than limit × this is answered with a pointer without reading it;
// the bound is generous, so a file refused this way could not have fit.
const maxBytesPerToken = 32

// Budget is the agent's context budget; *budget.Agent satisfies it.
type Budget interface {
	Remaining() int
	Total() int
	TryCharge(n int) (left int, ok bool)
}

// Env is what one session's artifact tools work with. The server builds
// it from the session's identity; nothing in it comes from the model.
type Env struct {
	// Store is the run's artifacts; nil when the session has no run (no
	// persistence), which makes write_artifact answer written: false.
	Store *Store
	// RunID is the session's run, so that read_artifact's run_id can name
	// it without changing anything.
	RunID string
	// Role is the agent's role; only [RoleCoordinator] may write.
	Role string
	// Budget is the agent's context budget; nil means none. Coordinators
	// without one get any artifact inline; others are still held to
	// MaxExtractionTokens.
	Budget Budget
	// Count counts the tokens of a result for the agent's model; nil
	// estimates 4 bytes per token.
	Count Counter
	// MaxExtractionTokens caps one read_artifact result; 0 means
	// [DefaultMaxExtractionTokens].
	MaxExtractionTokens int
	// MemoryDir is where other runs are found when read_artifact names a
	// run_id; empty refuses other runs.
	MemoryDir string
	// ExplorePrefix is prepended to an artifact name in the in-place
	// pointer; empty means [DefaultExplorePrefix].
	ExplorePrefix string
}

// EnvFunc resolves the calling session's [Env] from the request context.
// An error is a server fault and becomes a protocol error.
type EnvFunc func(ctx context.Context) (*Env, error)

// Tools returns the three artifact tools with their handlers, for
// [server.MCPServer.AddTools] or per-session registration.
func Tools(envFor EnvFunc) []server.ServerTool {
	h := handlers{envFor: envFor}
	return []server.ServerTool{
		{Tool: writeTool(), Handler: h.write},
		{Tool: readTool(), Handler: h.read},
		{Tool: listTool(), Handler: h.list},
	}
}

// Register adds the artifact tools to s. Pair it with
// server.WithToolFilter([ToolFilter](envFor)) when creating s, so that
// workers are not listed write_artifact (the handler refuses them anyway).
func Register(s *server.MCPServer, envFor EnvFunc) {
	s.AddTools(Tools(envFor)...)
}

// ToolFilter hides write_artifact from every session whose role is not
// [RoleCoordinator] (or whose Env cannot be resolved). mcp-go applies
// filters to tools/call too, so a hidden tool cannot be called.
func ToolFilter(envFor EnvFunc) server.ToolFilterFunc {
	return func(ctx context.Context, tools []mcp.Tool) []mcp.Tool {
		env, err := envFor(ctx)
		if err == nil && env != nil && env.Role == RoleCoordinator {
			return tools
		}
		out := make([]mcp.Tool, 0, len(tools))
		for _, t := range tools {
			if t.Name != ToolWrite {
				out = append(out, t)
			}
		}
		return out
	}
}

func writeTool() mcp.Tool {
	return mcp.NewTool(ToolWrite,
		mcp.WithDescription("Save a file for this run's workers to read with read_artifact (coordinators only). "+
			"Stored as coordinator-<name>: any directory part is dropped, and an extension other than "+
			"txt, md, json, jsonl, ndjson, csv, tsv, yaml, yml, toml, log, xml or html gets .txt appended. "+
			"Writing the same name again replaces the file (replaced: true). "+
			"Hand workers the returned filename instead of pasting large content into their task."),
		mcp.WithString("filename", mcp.Required(), mcp.Description("File name, e.g. findings.md")),
		mcp.WithString("content", mcp.Required(), mcp.Description("The whole file content")),
		mcp.WithToolAnnotation(mcp.ToolAnnotation{
			ReadOnlyHint:    mcp.ToBoolPtr(false),
			DestructiveHint: mcp.ToBoolPtr(true), // may replace a file
			IdempotentHint:  mcp.ToBoolPtr(true),
			OpenWorldHint:   mcp.ToBoolPtr(false),
		}),
	)
}

func readTool() mcp.Tool {
	return mcp.NewTool(ToolRead,
		mcp.WithDescription("Read a file of this run's artifacts. It is returned whole when it fits the per-call "+
			"limit and your remaining context budget; otherwise you get its path to explore in place with "+
			"head, slice, grep, schema, get_in, iterate_over. An unknown name lists the available ones."),
		mcp.WithString("filename", mcp.Required(), mcp.Description("Artifact name, as written or as listed by list_artifacts")),
		mcp.WithString("run_id", mcp.Description("Another run's id; omit for this run")),
		readOnly(),
	)
}

func listTool() mcp.Tool {
	return mcp.NewTool(ToolList,
		mcp.WithDescription("List this run's artifacts with their sizes in bytes and tokens."),
		readOnly(),
	)
}

func readOnly() mcp.ToolOption {
	return mcp.WithToolAnnotation(mcp.ToolAnnotation{
		ReadOnlyHint:    mcp.ToBoolPtr(true),
		DestructiveHint: mcp.ToBoolPtr(false),
		IdempotentHint:  mcp.ToBoolPtr(true),
		OpenWorldHint:   mcp.ToBoolPtr(false),
	})
}

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

func (h handlers) write(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	env, err := h.env(ctx)
	if err != nil {
		return nil, err
	}
	filename, content := req.GetString("filename", ""), req.GetString("content", "")
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

func (h handlers) read(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	env, err := h.env(ctx)
	if err != nil {
		return nil, err
	}
	filename, runID := req.GetString("filename", ""), req.GetString("run_id", "")
	store, inPlace := env.Store, true
	if runID != "" && runID != env.RunID {
		if env.MemoryDir == "" {
			return jsonResult(toolError{"run_not_available", "this session can only read its own run's artifacts: omit run_id"})
		}
		if store, err = OpenRun(env.MemoryDir, runID); err != nil {
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
		return nil, err
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
	pointer := func(tokens int) (*mcp.CallToolResult, error) {
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
		return mcp.NewToolResultText(res.Content + footer(res, -1, 0, nil)), nil
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
	return mcp.NewToolResultText(res.Content + foot), nil
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

func (h handlers) list(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	env, err := h.env(ctx)
	if err != nil {
		return nil, err
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
		return nil, err
	}
	if entries == nil {
		entries = []Entry{}
	}
	return jsonResult(listResult{Artifacts: entries, Count: len(entries)})
}

// estimate counts tokens as bytes/4 when the session has no counter.
func estimate(s string) int { return (len(s) + bytesPerToken - 1) / bytesPerToken }

func jsonResult(v any) (*mcp.CallToolResult, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("artifacts: encode result: %w", err)
	}
	return mcp.NewToolResultText(string(b)), nil
}
