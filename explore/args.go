package explore

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

// argReader reads tool arguments as JSON decodes them (numbers as float64)
// and as the explore subcommand passes them (strings), collecting every
// problem so the model can fix them all in one retry.
type argReader struct {
	args map[string]any
	seen map[string]bool
	errs []string
}

func newArgReader(args map[string]any) *argReader {
	return &argReader{args: args, seen: map[string]bool{}}
}

func (a *argReader) str(name string, required bool) string {
	a.seen[name] = true
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

// int returns the argument, def when absent, and whether it was given.
func (a *argReader) int(name string, def int, required bool) (int, bool) {
	a.seen[name] = true
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

func (a *argReader) bool(name string, def bool) bool {
	a.seen[name] = true
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
		if !a.seen[k] {
			unknown = append(unknown, k)
		}
	}
	sort.Strings(unknown)
	errs := a.errs
	if len(unknown) > 0 {
		known := make([]string, 0, len(a.seen))
		for k := range a.seen {
			known = append(known, k)
		}
		sort.Strings(known)
		errs = append(errs, fmt.Sprintf("unknown argument(s) %s (this tool takes: %s)", strings.Join(unknown, ", "), strings.Join(known, ", ")))
	}
	return strings.Join(errs, "; ")
}
