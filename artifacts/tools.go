package artifacts

import (
	"context"

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
