package tool

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// ErrSchema is matched by [CompileSchema]'s error: the schema is not one
// the validator can judge with (not JSON, an unknown draft, a reference
// outside it, a pattern that does not compile).
var ErrSchema = errors.New("tool: input schema")

// Schema is an input schema declared elsewhere (an upstream server's
// tool), compiled so that arguments can be checked against it before they
// are sent, with the validator and the [Problem]s of [Args].
type Schema struct {
	compiled *jsonschema.Schema
}

// CompileSchema compiles raw, a JSON Schema (its $schema's draft, else
// 2020-12). Nothing is fetched: a $ref outside raw is an error, not a
// download.
func CompileSchema(raw json.RawMessage) (*Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrSchema, err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(jsonschema.SchemeURLLoader{}) // no file, no network
	const url = "mem:///input.json"
	if err := c.AddResource(url, doc); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrSchema, err)
	}
	s, err := c.Compile(url)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrSchema, err)
	}
	return &Schema{compiled: s}, nil
}

// Validate checks args, a call's arguments (one JSON object; absent or
// null is no arguments), against s and says every problem at once, as
// [Args.Decode] says them.
func (s *Schema) Validate(args json.RawMessage) []Problem {
	t := bytes.TrimSpace(args)
	if len(t) == 0 || bytes.Equal(t, []byte("null")) {
		t = []byte("{}")
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(t))
	if err != nil {
		return []Problem{{Keyword: "json", Message: "the arguments must be one JSON object: " + err.Error()}}
	}
	if huge := hugeNumbers(inst, nil, nil); len(huge) > 0 {
		return huge // the validator would read each one exactly, slowly
	}
	err = s.compiled.Validate(inst)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return []Problem{{Keyword: "json", Message: err.Error()}}
	}
	return collect(ve, inst)
}
