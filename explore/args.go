package explore

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/scratchpad-mcp/scratchpad-mcp/tool"
)

// argSpec is one argument as its tool's input schema declares it.
type argSpec struct {
	def      any // the schema's "default" (numbers as float64), nil if none
	required bool
}

// specs are every tool's arguments by name, read from [definitions] by
// [tool.Params]: the schema is the one declaration of a default and of
// being required, for explore as for the pad and artifact tools.
var specs = func() map[string]map[string]argSpec {
	out := map[string]map[string]argSpec{}
	for _, d := range definitions {
		m := map[string]argSpec{}
		for name, p := range tool.MustParams(d.InputSchema) {
			m[name] = argSpec{def: p.Default, required: p.Required}
		}
		out[d.Name] = m
	}
	return out
}()

// argReader reads tool arguments as JSON decodes them (numbers as float64)
// and as the explore subcommand passes them (strings), with the defaults
// and required arguments of the tool's schema, collecting every problem so
// the model can fix them all in one retry.
type argReader struct {
	args map[string]any
	spec map[string]argSpec
	errs []string
}

func newArgReader(args map[string]any, spec map[string]argSpec) *argReader {
	return &argReader{args: args, spec: spec}
}

// arg is the spec of the argument name, which the tool's schema must
// declare: a handler reading one it does not is a programming error
// (every handler's test finds it; [Call] recovers it as internal_error).
func (a *argReader) arg(name string) argSpec {
	s, ok := a.spec[name]
	if !ok {
		panic(fmt.Sprintf("explore: argument %q is not in the tool's schema", name))
	}
	return s
}

func (a *argReader) str(name string) string {
	required := a.arg(name).required
	v, ok := a.args[name]
	if !ok || v == nil {
		if required {
			a.errs = append(a.errs, fmt.Sprintf("%s is required", name))
		}
		return ""
	}
	switch s := v.(type) {
	case string:
		return s
	case float64, int, int64, json.Number, bool:
		return fmt.Sprint(s)
	}
	a.errs = append(a.errs, fmt.Sprintf("%s must be a string", name))
	return ""
}

// int returns the argument, the schema's default when absent, and whether
// it was given.
func (a *argReader) int(name string) (int, bool) {
	spec := a.arg(name)
	def, required := 0, spec.required
	if f, ok := spec.def.(float64); ok {
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
		a.errs = append(a.errs, fmt.Sprintf("%s must be an integer, got %v", name, v))
		return def, false
	}
	switch n := v.(type) {
	case float64:
		if n != math.Trunc(n) || math.Abs(n) > 1<<53 {
			return bad()
		}
		return int(n), true
	case int:
		return n, true
	case int64:
		return int(n), true
	case json.Number:
		i, err := n.Int64()
		if err != nil {
			return bad()
		}
		return int(i), true
	case string:
		i, err := strconv.Atoi(strings.TrimSpace(n))
		if err != nil {
			return bad()
		}
		return i, true
	}
	return bad()
}

// bool returns the argument, the schema's default when absent.
func (a *argReader) bool(name string) bool {
	def, _ := a.arg(name).def.(bool)
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
	a.errs = append(a.errs, fmt.Sprintf("%s must be true or false, got %v", name, v))
	return def
}

// check reports unknown arguments and collected errors as one message.
func (a *argReader) check() string {
	var unknown []string
	for k := range a.args {
		if _, ok := a.spec[k]; !ok {
			unknown = append(unknown, k)
		}
	}
	sort.Strings(unknown)
	errs := a.errs
	if len(unknown) > 0 {
		known := make([]string, 0, len(a.spec))
		for k := range a.spec {
			known = append(known, k)
		}
		sort.Strings(known)
		errs = append(errs, fmt.Sprintf("unknown argument(s) %s (this tool takes: %s)", strings.Join(unknown, ", "), strings.Join(known, ", ")))
	}
	return strings.Join(errs, "; ")
}
