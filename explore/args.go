package explore

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/scratchpad-mcp/scratchpad-mcp/tool"
)

// Each tool's arguments, declared once: the struct is what its handler
// reads and what its listed schema is generated from ([tool.Args]); the
// arg tags' $names are [vars]. Arguments shared by several tools are
// embedded structs, so their wording is written once too.
type (
	fileArg struct {
		File string `json:"file" arg:"description=$fileDesc,maxLength=$maxPathChars"`
	}
	pathArg struct {
		Path string `json:"path" arg:"description=$pathDesc,maxLength=$maxPathChars"`
	}
	// windowArg is an item window; absent is not the same as 0 (a whole
	// array's answer differs from a window's).
	windowArg struct {
		Offset *int `json:"offset,omitempty" jsonschema:"Window start, 0-based." arg:"minimum=0,maximum=$maxPosition"`
		Limit  *int `json:"limit,omitempty" arg:"minimum=0,maximum=$maxPosition"` // absent: the whole rest
	}
	filterArg struct {
		Filter string `json:"filter,omitempty" arg:"description=$filterDesc,maxLength=$maxPathChars"`
	}

	headArgs struct {
		fileArg
		Lines int `json:"lines,omitempty" arg:"default=50,minimum=1,maximum=$maxWindow"`
	}
	sliceArgs struct {
		fileArg
		Start int `json:"start" arg:"minimum=1,maximum=$maxPosition"`
		End   int `json:"end" arg:"minimum=1,maximum=$maxPosition"`
	}
	grepArgs struct {
		File       string `json:"file,omitempty" arg:"description=$fileDesc,maxLength=$maxPathChars"`
		Pattern    string `json:"pattern" arg:"maxLength=$MaxPatternBytes"`
		Context    *int   `json:"context,omitempty" jsonschema:"Lines around each match." arg:"default=$defaultContext,minimum=0,maximum=$maxContext"`
		IgnoreCase bool   `json:"ignore_case,omitempty" arg:"default=false"`
		MaxMatches *int   `json:"max_matches,omitempty" arg:"default=$defaultMaxMatches,minimum=1,maximum=$maxMatches"`
	}
	schemaArgs struct {
		fileArg
		MaxDepth int `json:"max_depth,omitempty" arg:"default=4,minimum=1,maximum=$maxDepthArg"`
	}
	itemSchemaArgs struct {
		fileArg
		pathArg
		windowArg
	}
	getInArgs struct {
		fileArg
		pathArg
		windowArg
		filterArg
	}
	iterateArgs struct {
		fileArg
		pathArg
		Fields string `json:"fields" jsonschema:"Comma-separated, e.g. \"id,title,meta.author\"; a[*].b gives an array." arg:"maxLength=$maxPathChars"`
		windowArg
		filterArg
		SortBy string `json:"sort_by,omitempty" arg:"maxLength=$maxPathChars"`
		Order  string `json:"order,omitempty" arg:"enum=asc|desc"`
	}
	countByArgs struct {
		fileArg
		Path     string `json:"path,omitempty" arg:"description=$pathDesc,maxLength=$maxPathChars"`
		Pattern  string `json:"pattern,omitempty" jsonschema:"For a text file, instead of path: RE2 regex; lines are counted by its first group, e.g. \"service=(\\w+)\"." arg:"maxLength=$MaxPatternBytes"`
		GroupBy  string `json:"group_by,omitempty" jsonschema:"Comma-separated fields, e.g. \"ns,status.phase\"; a[*] counts each element." arg:"maxLength=$maxPathChars"`
		Distinct string `json:"distinct,omitempty" jsonschema:"Field whose distinct values are counted (per group)." arg:"maxLength=$maxPathChars"`
		filterArg
		Top int `json:"top,omitempty" jsonschema:"Groups shown; the rest are summed as other." arg:"default=$defaultTop,minimum=1,maximum=$maxWindow"`
	}
	readArgs struct {
		fileArg
	}
)

// fileName is the file a call reads ("" for grep over every file).
func (a fileArg) fileName() string  { return a.File }
func (a grepArgs) fileName() string { return a.File }

// window is the item window: offset and limit, and whether each was
// given.
func (w windowArg) window() (off, lim int, hasOff, hasLim bool) {
	if w.Offset != nil {
		off, hasOff = *w.Offset, true
	}
	if w.Limit != nil {
		lim, hasLim = *w.Limit, true
	}
	return
}

// vars are the values the declarations name.
var vars = map[string]any{
	"fileDesc": fileDesc, "pathDesc": pathDesc, "filterDesc": filterDesc,
	"maxPathChars": maxPathChars, "maxPosition": maxPosition, "maxWindow": maxWindow, "maxContext": maxContext,
	"maxMatches": maxMatches, "maxDepthArg": maxDepthArg, "MaxPatternBytes": MaxPatternBytes, "defaultTop": defaultTop,
	"defaultContext": defaultContext, "defaultMaxMatches": defaultMaxMatches,
}

// explorer is one exploration tool: its definition, and its arguments'
// decoding into the run of its handler.
type explorer struct {
	def tool.Def
	// decode validates and decodes raw arguments into a run of the
	// handler with them, and the file it reads.
	decode func(raw json.RawMessage) (run func(*call) *tool.Result, file string, problems []tool.Problem)
	// decodeValue is decode for arguments as [Call] takes them.
	decodeValue func(args map[string]any) (run func(*call) *tool.Result, file string, problems []tool.Problem)
	// types are the declared arguments' JSON types, for [coerce].
	types map[string]string
}

// declare is the explorer of a tool whose arguments T declares.
func declare[T interface{ fileName() string }](name, desc string, run func(*call, T) *tool.Result) explorer {
	a := tool.MustArgs[T](tool.ArgsOptions{Vars: vars})
	var s struct {
		Properties map[string]struct {
			Type string `json:"type"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(a.Schema(), &s); err != nil {
		panic(err)
	}
	types := map[string]string{}
	for n, p := range s.Properties {
		types[n] = p.Type
	}
	bind := func(v T, problems []tool.Problem) (func(*call) *tool.Result, string, []tool.Problem) {
		if len(problems) > 0 {
			return nil, "", problems
		}
		return func(c *call) *tool.Result { return run(c, v) }, v.fileName(), nil
	}
	return explorer{
		def:   tool.Def{Name: name, Description: desc, InputSchema: a.Schema()},
		types: types,
		decode: func(raw json.RawMessage) (func(*call) *tool.Result, string, []tool.Problem) {
			return bind(a.Decode(raw))
		},
		decodeValue: func(args map[string]any) (func(*call) *tool.Result, string, []tool.Problem) {
			return bind(a.DecodeValue(args))
		},
	}
}

// refused is the answer to arguments a tool's schema refuses:
// invalid_arguments naming every problem, except a pattern past its
// length, which grep and count_by answer pattern_too_long with the sizes.
func refused(name string, problems []tool.Problem) *tool.Result {
	for _, p := range problems {
		if len(p.Path) == 1 && p.Path[0] == "pattern" && p.Keyword == "maxLength" {
			s, _ := p.Value.(string)
			return patternTooLong(name, len(s))
		}
	}
	return errorResult("invalid_arguments", strings.Join(tool.Messages(problems), "; ")+".")
}

// coerce is the explore subcommand's shim: its key=value arguments are
// strings, which are read as the integers and booleans the tool declares
// before the same validation as a model's call. A string that does not
// read as one is left for the validator to refuse.
func coerce(types map[string]string, args map[string]any) map[string]any {
	needed := false
	for k, v := range args {
		if _, isText := v.(string); isText && (types[k] == "integer" || types[k] == "boolean") {
			needed = true
			break
		}
	}
	if !needed {
		return args // arguments from Go code: nothing to read, nothing to copy
	}
	out := make(map[string]any, len(args))
	for k, v := range args {
		s, ok := v.(string)
		if !ok {
			out[k] = v
			continue
		}
		switch types[k] {
		case "integer":
			if n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64); err == nil {
				v = n
			}
		case "boolean":
			if b, err := strconv.ParseBool(s); err == nil {
				v = b
			}
		}
		out[k] = v
	}
	return out
}
