package tool

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"
)

// Param is one argument as a tool's input schema declares it: the
// schema is the one declaration of an argument's type, default and
// whether it is required, which every handler's decoding reads
// ([Params], [Checked]).
type Param struct {
	Type     string // "string", "integer", "number", "boolean", "array", "object"; "" for any
	Default  any    // the schema's default as JSON decodes it (numbers as float64); nil if none
	Required bool
	Enum     []any // allowed values; nil for any

	// The schema's bounds, nil where it sets none: "minimum" and
	// "maximum" of a number, "maxLength" of a string (in characters),
	// "maxItems" of an array.
	Minimum, Maximum *float64
	MaxLength        *int
	MaxItems         *int
}

// Params reads the arguments an object schema declares (its top-level
// properties and required list).
func Params(schema json.RawMessage) (map[string]Param, error) {
	var s struct {
		Properties map[string]struct {
			Type      any      `json:"type"`
			Default   any      `json:"default"`
			Enum      []any    `json:"enum"`
			Minimum   *float64 `json:"minimum"`
			Maximum   *float64 `json:"maximum"`
			MaxLength *int     `json:"maxLength"`
			MaxItems  *int     `json:"maxItems"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	if err := json.Unmarshal(schema, &s); err != nil {
		return nil, fmt.Errorf("tool: input schema: %w", err)
	}
	out := make(map[string]Param, len(s.Properties))
	for name, p := range s.Properties {
		t, _ := p.Type.(string) // a list of types is not checked
		out[name] = Param{Type: t, Default: p.Default, Enum: p.Enum,
			Minimum: p.Minimum, Maximum: p.Maximum, MaxLength: p.MaxLength, MaxItems: p.MaxItems}
	}
	for _, name := range s.Required {
		p := out[name]
		p.Required = true
		out[name] = p
	}
	return out, nil
}

// MustParams is [Params] for a schema written in the code: a schema
// that does not parse is a programming error.
func MustParams(schema json.RawMessage) map[string]Param {
	p, err := Params(schema)
	if err != nil {
		panic(err)
	}
	return p
}

// CheckArgs checks raw arguments against params: they must be one JSON
// object (or absent); every required argument present and not null;
// every declared one given of its type and, with an enum, one of its
// values. Arguments the schema does not declare pass untouched. Missing
// arguments with a default get it. It returns the completed arguments as
// one JSON object, or every problem found, so the model can fix them all
// in one retry.
func CheckArgs(params map[string]Param, raw json.RawMessage) (json.RawMessage, []string) {
	args := map[string]json.RawMessage{}
	if t := bytes.TrimSpace(raw); len(t) > 0 && !bytes.Equal(t, []byte("null")) {
		if t[0] != '{' {
			return nil, []string{"the arguments must be one JSON object"}
		}
		if err := json.Unmarshal(t, &args); err != nil {
			return nil, []string{"the arguments must be one JSON object: " + err.Error()}
		}
	}
	names := make([]string, 0, len(params))
	for n := range params {
		names = append(names, n)
	}
	sort.Strings(names)
	var problems []string
	filled := false
	for _, name := range names {
		p := params[name]
		v, given := args[name]
		if !given || bytes.Equal(bytes.TrimSpace(v), []byte("null")) {
			switch {
			case p.Required:
				problems = append(problems, name+" is required")
			case p.Default != nil:
				b, _ := json.Marshal(p.Default)
				args[name] = b
				filled = true
			}
			continue
		}
		if msg := p.check(v); msg != "" {
			problems = append(problems, name+" "+msg)
		}
	}
	if len(problems) > 0 {
		return nil, problems
	}
	if !filled && len(bytes.TrimSpace(raw)) > 0 {
		return raw, nil
	}
	b, err := json.Marshal(args)
	if err != nil {
		return nil, []string{err.Error()}
	}
	return b, nil
}

// check says what is wrong with a given value, or "".
func (p Param) check(v json.RawMessage) string {
	var x any
	if err := json.Unmarshal(v, &x); err != nil {
		return "is not valid JSON"
	}
	ok := true
	switch p.Type {
	case "string":
		_, ok = x.(string)
	case "boolean":
		_, ok = x.(bool)
	case "number":
		_, ok = x.(float64)
	case "integer":
		f, isNum := x.(float64)
		ok = isNum && f == math.Trunc(f)
	case "array":
		_, ok = x.([]any)
	case "object":
		_, ok = x.(map[string]any)
	}
	if !ok {
		return fmt.Sprintf("must be %s %s, not %s", article(p.Type), p.Type, kindOf(x))
	}
	if len(p.Enum) > 0 {
		for _, e := range p.Enum {
			if fmt.Sprint(e) == fmt.Sprint(x) {
				return ""
			}
		}
		vals := make([]string, len(p.Enum))
		for i, e := range p.Enum {
			b, _ := json.Marshal(e)
			vals[i] = string(b)
		}
		return "must be one of " + strings.Join(vals, ", ")
	}
	return ""
}

func article(t string) string {
	if t == "integer" || t == "array" || t == "object" {
		return "an"
	}
	return "a"
}

func kindOf(x any) string {
	switch v := x.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case float64:
		if v == math.Trunc(v) {
			return "an integer"
		}
		return "a number"
	case []any:
		return "an array"
	}
	return "an object"
}

// Checked wraps h so that its arguments are checked against schema and
// completed with its defaults ([CheckArgs]) before h runs: h decodes
// arguments the schema has vouched for, and declares no defaults of its
// own. Problems are answered with fail, without running h.
func Checked(schema json.RawMessage, fail func(problems []string) Result, h Handler) Handler {
	params := MustParams(schema)
	return func(ctx context.Context, raw json.RawMessage) Result {
		args, problems := CheckArgs(params, raw)
		if len(problems) > 0 {
			return fail(problems)
		}
		return h(ctx, args)
	}
}
