package explore

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/scratchpad-mcp/scratchpad-mcp/tool"
)

// specs are every tool's arguments by name, read from [definitions] by
// [tool.Params]: the schema is the one declaration of a default, of a
// bound and of being required, for explore as for the pad and artifact
// tools.
var specs = func() map[string]map[string]tool.Param {
	out := map[string]map[string]tool.Param{}
	for _, d := range definitions {
		out[d.Name] = tool.MustParams(d.InputSchema)
	}
	return out
}()

// argReader reads tool arguments as JSON decodes them (numbers as float64)
// and as the explore subcommand passes them (strings), with the defaults,
// bounds and required arguments of the tool's schema, collecting every
// problem so the model can fix them all in one retry.
type argReader struct {
	args map[string]any
	spec map[string]tool.Param
	errs []string
}

func newArgReader(args map[string]any, spec map[string]tool.Param) *argReader {
	return &argReader{args: args, spec: spec}
}

// arg is the spec of the argument name, which the tool's schema must
// declare: a handler reading one it does not is a programming error
// (every handler's test finds it; [Call] recovers it as internal_error).
func (a *argReader) arg(name string) tool.Param {
	s, ok := a.spec[name]
	if !ok {
		panic(fmt.Sprintf("explore: argument %q is not in the tool's schema", name))
	}
	return s
}

// bound records a problem when v is past a bound of the argument's
// schema, and reports whether v is within them.
func (a *argReader) bound(name string, spec tool.Param, v any) bool {
	if msg := spec.Bounds(v); msg != "" {
		a.errs = append(a.errs, name+" "+msg)
		return false
	}
	return true
}

// echo is a value as a problem repeats it: cut short, since it may be
// megabytes.
func echo(v any) string { return tool.Clip(fmt.Sprint(v), 40) }

// str returns the argument ("" when absent or out of its bounds).
func (a *argReader) str(name string) string {
	return a.string(name, true)
}

// pattern returns the regex argument name without its schema's length
// bound: grep and count_by check it in bytes (a bound at least as tight)
// and answer pattern_too_long with the sizes.
func (a *argReader) pattern(name string) string {
	return a.string(name, false)
}

func (a *argReader) string(name string, bounded bool) string {
	spec := a.arg(name)
	v, ok := a.args[name]
	if !ok || v == nil {
		if spec.Required {
			a.errs = append(a.errs, fmt.Sprintf("%s is required", name))
		}
		return ""
	}
	var s string
	switch x := v.(type) {
	case string:
		s = x
	case float64, int, int64, json.Number, bool:
		s = fmt.Sprint(x)
	default:
		a.errs = append(a.errs, fmt.Sprintf("%s must be a string", name))
		return ""
	}
	if bounded && !a.bound(name, spec, s) {
		return ""
	}
	return s
}

// int returns the argument, the schema's default when absent or out of
// its bounds, and whether it was given.
func (a *argReader) int(name string) (int, bool) {
	spec := a.arg(name)
	def, required := 0, spec.Required
	if f, ok := spec.Default.(float64); ok {
		def = int(f)
	}
	v, ok := a.args[name]
	if !ok || v == nil {
		if required {
			a.errs = append(a.errs, fmt.Sprintf("%s is required", name))
		}
		return def, false
	}
	bad := func() (int, bool) {
		a.errs = append(a.errs, fmt.Sprintf("%s must be an integer, got %s", name, echo(v)))
		return def, false
	}
	var n int
	switch x := v.(type) {
	case float64:
		if x != math.Trunc(x) || math.Abs(x) > tool.MaxSafeInteger {
			return bad()
		}
		n = int(x)
	case int:
		n = x
	case int64:
		n = int(x)
	case json.Number:
		i, err := x.Int64()
		if err != nil {
			return bad()
		}
		n = int(i)
	case string:
		i, err := strconv.Atoi(strings.TrimSpace(x))
		if err != nil {
			return bad()
		}
		n = i
	default:
		return bad()
	}
	if !a.bound(name, spec, float64(n)) {
		return def, false
	}
	return n, true
}

// bool returns the argument, the schema's default when absent.
func (a *argReader) bool(name string) bool {
	def, _ := a.arg(name).Default.(bool)
	v, ok := a.args[name]
	if !ok || v == nil {
		return def
	}
	switch b := v.(type) {
	case bool:
		return b
	case string:
		if p, err := strconv.ParseBool(b); err == nil {
			return p
		}
	}
	a.errs = append(a.errs, fmt.Sprintf("%s must be true or false, got %s", name, echo(v)))
	return def
}

// precheck answers invalid_arguments for arguments the schema of tool
// name refuses whatever the handler reads (undeclared, or past a bound),
// or nil. The handler's own reading checks the same and more; this runs
// before a call slot is taken. pattern is left to the handler, which
// answers pattern_too_long with the sizes.
func precheck(name string, args map[string]any) *tool.Result {
	spec, ok := specs[name]
	if !ok {
		return nil // unknown tool: Call answers
	}
	a := newArgReader(args, spec)
	for k, v := range args {
		if p, ok := spec[k]; ok && v != nil && k != "pattern" {
			a.bound(k, p, v)
		}
	}
	if msg := a.check(); msg != "" {
		return errorResult("invalid_arguments", msg+".")
	}
	return nil
}

// check reports unknown arguments and collected errors as one message.
func (a *argReader) check() string {
	var unknown []string
	for k := range a.args {
		if _, ok := a.spec[k]; !ok {
			unknown = append(unknown, k)
		}
	}
	errs := a.errs
	if len(unknown) > 0 {
		errs = append(errs, tool.Undeclared(unknown, a.spec))
	}
	return strings.Join(errs, "; ")
}
