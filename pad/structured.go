package pad

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// forbiddenKeys are dropped at every depth of a structured update: they
// are prototype-pollution vectors for any JavaScript client that merges
// the state it reads back.
var forbiddenKeys = map[string]bool{"__proto__": true, "constructor": true, "prototype": true}

// compileSchema compiles a JSON Schema document. Remote references are not
// fetched: the default loader only reads local files.
func compileSchema(schema []byte) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		return nil, fmt.Errorf("%w: schema is not JSON: %v", ErrOptions, err)
	}
	c := jsonschema.NewCompiler()
	const loc = "mem://pad/schema.json"
	if err := c.AddResource(loc, doc); err != nil {
		return nil, fmt.Errorf("%w: schema: %v", ErrOptions, err)
	}
	s, err := c.Compile(loc)
	if err != nil {
		return nil, fmt.Errorf("%w: schema: %v", ErrOptions, err)
	}
	return s, nil
}

// decodeState decodes a JSON object with numbers kept exact.
func decodeState(data []byte) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, fmt.Errorf("trailing data after the JSON value")
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("state must be a JSON object, got %s", jsonKind(v))
	}
	return obj, nil
}

func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case map[string]any:
		return "object"
	case []any:
		return "array"
	case string:
		return "string"
	case bool:
		return "boolean"
	default:
		return "number"
	}
}

// sanitize drops forbidden keys at every depth and enforces the depth cap.
// It returns the keys it dropped (as paths) so the caller can warn.
func sanitize(v any, depth, maxDepth int, path string, dropped *[]string) (any, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("%w: nested deeper than %d levels at %s", ErrBadState, maxDepth, path)
	}
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, val := range t {
			if forbiddenKeys[k] {
				*dropped = append(*dropped, path+"/"+k)
				continue
			}
			s, err := sanitize(val, depth+1, maxDepth, path+"/"+k, dropped)
			if err != nil {
				return nil, err
			}
			out[k] = s
		}
		return out, nil
	case []any:
		out := make([]any, len(t))
		for i, val := range t {
			s, err := sanitize(val, depth+1, maxDepth, fmt.Sprintf("%s/%d", path, i), dropped)
			if err != nil {
				return nil, err
			}
			out[i] = s
		}
		return out, nil
	default:
		return v, nil
	}
}

// deepMerge merges patch into base and returns the result; base is not
// modified. Objects merge recursively, arrays and scalars replace, and a
// null removes the key (as in JSON Merge Patch, RFC 7396).
func deepMerge(base, patch map[string]any) map[string]any {
	out := make(map[string]any, len(base)+len(patch))
	for k, v := range base {
		out[k] = v
	}
	for k, pv := range patch {
		if pv == nil {
			delete(out, k)
			continue
		}
		pm, pIsObj := pv.(map[string]any)
		bm, bIsObj := out[k].(map[string]any)
		if pIsObj && bIsObj {
			out[k] = deepMerge(bm, pm)
			continue
		}
		if pIsObj {
			out[k] = deepMerge(nil, pm) // drops nulls inside a new object too
			continue
		}
		out[k] = pv
	}
	return out
}

// encodeState writes the canonical file form: indented, keys sorted (by
// encoding/json), final newline, so diffs are line-based and stable.
func encodeState(state map[string]any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(state); err != nil {
		return nil, fmt.Errorf("pad: encode state: %w", err)
	}
	return buf.Bytes(), nil
}

// validateState checks state against the schema, if one is configured.
func validateState(s *jsonschema.Schema, state map[string]any) error {
	if s == nil {
		return nil
	}
	// The validator wants the types jsonschema.UnmarshalJSON produces;
	// round-tripping through it guarantees that.
	data, err := json.Marshal(state)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrBadState, err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return fmt.Errorf("%w: %v", ErrBadState, err)
	}
	if err := s.Validate(doc); err != nil {
		return fmt.Errorf("%w: %v", ErrSchema, err)
	}
	return nil
}
