package memory

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/scratchpad-mcp/scratchpad-mcp/tool"
)

// ToolName is the memory tool's name, as models know it: the default of
// [Options].Name.
const ToolName = "memory"

// StoreFunc picks the calling session's scope (its agent's, or its run's,
// always its owner's); the model never names one.
type StoreFunc func(ctx context.Context) (Store, error)

// description is the tool's description: what a model that does not
// know the tool needs, in few words (one that knows it needs none: the
// schema's argument names are the tool's); shared says the scope is a
// run's.
func description(shared bool) string {
	whose := "files that outlive this conversation. "
	if shared {
		whose = "files that outlive this conversation, shared with the other agents of your run. "
	}
	return "Your memory directory /memories: " + whose +
		"View it before a task; record progress, decisions and lessons as you work. Commands: view (path, view_range), " +
		"create (path, file_text), str_replace (path, old_str, new_str), insert (path, insert_line, insert_text), delete (path), " +
		"rename (old_path, new_path)."
}

// Tools returns the memory tool over the scopes storeFor gives, with o's
// bounds (see [Options]): one tool named o.Name (memory) whose command and
// arguments are the memory tool's (memory_20250818). Its answers are the
// documented ones; a refusal is an error result (isError) whose text says
// why and what to do, as the tool's clients answer. Invalid options are
// an error wrapping [ErrOptions].
func Tools(storeFor StoreFunc, o Options) ([]tool.Def, error) {
	o, ro, err := o.normalize()
	if err != nil {
		return nil, err
	}
	args, err := tool.NewArgs[Command](tool.ArgsOptions{Vars: map[string]any{
		"commands": Commands, "maxPath": maxArgBytes, "maxText": o.MaxFileBytes, "maxLines": MaxLines, "maxRev": int64(maxRev),
	}})
	if err != nil {
		return nil, err
	}
	h := func(ctx context.Context, c Command, _ json.RawMessage) tool.Result {
		st, err := storeFor(ctx)
		if err != nil {
			return tool.Error("Error: no memory directory for this session: " + err.Error())
		}
		m := &Memory{st: st, o: o, ro: ro}
		text, err := m.Do(c)
		if err != nil {
			return answerError(err)
		}
		return tool.Text(text)
	}
	return []tool.Def{{
		Name:        o.Name,
		Description: description(o.Shared),
		InputSchema: args.Schema(),
		Annotations: tool.Annotations{ReadOnly: tool.Bool(false), Destructive: tool.Bool(true), OpenWorld: tool.Bool(false)},
		Handler:     tool.Handle(args, func(ps []tool.Problem) tool.Result { return argProblems(ps, o.MaxFileBytes) }, h),
	}}, nil
}

// answerError is the result of a command that failed: a refusal's own
// message, or the store's error.
func answerError(err error) tool.Result {
	var e *Error
	if errors.As(err, &e) {
		return tool.Error(e.Message)
	}
	return tool.Error("Error: " + err.Error())
}

// argProblems answers arguments the schema refuses, in the tool's words
// where it has some: an unknown command, a text past the per-file bound.
func argProblems(ps []tool.Problem, maxFile int64) tool.Result {
	var msgs []string
	for _, p := range ps {
		name := ""
		if len(p.Path) > 0 {
			name = p.Path[0]
		}
		switch {
		case name == "command" && p.Keyword == "enum":
			v, _ := p.Value.(string)
			return answerError(unknownCommand(v))
		case p.Keyword == "maxLength" && (name == "file_text" || name == "new_str" || name == "insert_text" || name == "old_str"):
			v, _ := p.Value.(string)
			msgs = append(msgs, fmt.Sprintf("Error: %s is %s characters, over the limit of %s bytes per file (max_file_bytes); nothing was written.", name, group(int64(len([]rune(v)))), group(maxFile)))
		default:
			msgs = append(msgs, "Error: "+p.Message)
		}
	}
	return tool.Error(strings.Join(msgs, "\n"))
}
