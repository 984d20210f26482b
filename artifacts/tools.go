package artifacts

import (
	"context"
	"strings"

	"github.com/scratchpad-mcp/scratchpad-mcp/layout"
	"github.com/scratchpad-mcp/scratchpad-mcp/tool"
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
const DefaultExplorePrefix = layout.ArtifactsFromScratchpad

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

// The bounds of the tools' string arguments, in their schemas (checked
// by tool.Args before a handler runs): a filename is a path, as long
// as Linux's PATH_MAX at most (only its last element is kept, cut to
// maxBaseBytes); a run id is 1-64 characters (agents' identity rules).
// An artifact's content has none: a call's size is bounded by the
// transport (4 MiB over HTTP, 16 MiB a line over stdio), and a file
// written by a coordinator is read back through the per-call cap.
const (
	maxFilenameChars = 4096
	maxRunIDChars    = 64
)

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
	// OpenRun opens another run's store (of the same owner) for
	// read_artifact's run_id; nil refuses other runs. It must refuse a run
	// id that is not a plain name with an error wrapping [ErrInvalidRunID].
	OpenRun func(runID string) (*Store, error)
	// ExplorePrefix is prepended to an artifact name in the in-place
	// pointer; empty means [DefaultExplorePrefix].
	ExplorePrefix string
}

// EnvFunc resolves the calling session's [Env] from the request context.
// An error is a server fault: the call fails with an IsError result.
type EnvFunc func(ctx context.Context) (*Env, error)

// Tools returns the three artifact tools with their handlers. Register
// them per session filtered by [Visible], so that workers are not listed
// write_artifact (its handler refuses them anyway).
func Tools(envFor EnvFunc) []tool.Def {
	h := handlers{envFor: envFor}
	defs := []tool.Def{
		{Name: ToolWrite,
			Description: "Save a file for this run's workers to read with read_artifact; hand them the returned " +
				"filename instead of pasting large content into their task. Stored with the prefix " +
				"coordinator- (an unusual extension gets .txt); the same name again replaces it.",
			InputSchema: writeDecl.Schema(),
			Annotations: tool.Annotations{
				ReadOnly:    tool.Bool(false),
				Destructive: tool.Bool(true), // may replace a file
				Idempotent:  tool.Bool(true),
				OpenWorld:   tool.Bool(false),
			},
			Handler: tool.Handle(writeDecl, badArguments, h.write)},
		{Name: ToolRead,
			Description: "Read one of this run's artifacts: whole if it fits the per-call cap and your " +
				"context budget, else its path for the exploration tools. An unknown name lists the available ones.",
			InputSchema: readDecl.Schema(),
			Annotations: tool.ReadOnly(),
			Handler:     tool.Handle(readDecl, badArguments, h.read)},
		{Name: ToolList,
			Description: "List this run's artifacts with their sizes in bytes and tokens.",
			InputSchema: listDecl.Schema(),
			Annotations: tool.ReadOnly(),
			Handler:     tool.Handle(listDecl, badArguments, h.list)},
	}
	return defs
}

// The tools' arguments, each declared once: the struct is what the
// handler reads and what the listed schema is generated from
// ([tool.Args]); the bounds are the constants above.
type (
	writeArgs struct {
		Filename string `json:"filename" jsonschema:"e.g. findings.md" arg:"maxLength=$maxFilenameChars"`
		Content  string `json:"content"`
	}
	readArgs struct {
		Filename string `json:"filename" jsonschema:"As written or listed by list_artifacts." arg:"maxLength=$maxFilenameChars"`
		RunID    string `json:"run_id,omitempty" jsonschema:"Another run's id; omit for this run." arg:"maxLength=$maxRunIDChars"`
	}
	listArgs struct{}
)

var (
	bounds    = tool.ArgsOptions{Vars: map[string]any{"maxFilenameChars": maxFilenameChars, "maxRunIDChars": maxRunIDChars}}
	writeDecl = tool.MustArgs[writeArgs](bounds)
	readDecl  = tool.MustArgs[readArgs](bounds)
	listDecl  = tool.MustArgs[listArgs](bounds)
)

// badArguments is the answer to arguments the tool's schema refuses.
func badArguments(problems []tool.Problem) tool.Result {
	return jsonResult(toolError{Error: "invalid_arguments", Message: strings.Join(tool.Messages(problems), "; ") + "."})
}

// Visible reports whether a session with env may see the tool name:
// write_artifact only when its role is [RoleCoordinator]; a nil env (the
// session's Env could not be resolved) does not see it either. Any other
// name is visible, so a server can filter its whole tool list with it.
func Visible(env *Env, name string) bool {
	return name != ToolWrite || (env != nil && env.Role == RoleCoordinator)
}
