package tool

import "encoding/json"

// Property is one argument of an input schema built by [Object].
type Property struct {
	Name     string
	Required bool
	// Schema is the property's JSON Schema, e.g. {"type": "string"}.
	Schema map[string]any
}

// Option adds a keyword to a [Property].
type Option func(*Property)

// Required lists the property in the object's "required".
func Required() Option { return func(p *Property) { p.Required = true } }

// Min sets "minimum".
func Min(n int) Option { return keyword("minimum", n) }

// Max sets "maximum".
func Max(n int) Option { return keyword("maximum", n) }

// MaxLength sets "maxLength".
func MaxLength(n int) Option { return keyword("maxLength", n) }

// MaxItems sets "maxItems".
func MaxItems(n int) Option { return keyword("maxItems", n) }

// Default sets "default".
func Default(v any) Option { return keyword("default", v) }

// Enum sets "enum".
func Enum(values ...string) Option { return keyword("enum", values) }

func keyword(k string, v any) Option {
	return func(p *Property) { p.Schema[k] = v }
}

// String is a string property; desc "" leaves out "description".
func String(name, desc string, opts ...Option) Property {
	return property(name, "string", desc, opts)
}

// Integer is an integer property.
func Integer(name, desc string, opts ...Option) Property {
	return property(name, "integer", desc, opts)
}

// Boolean is a boolean property.
func Boolean(name, desc string, opts ...Option) Property {
	return property(name, "boolean", desc, opts)
}

func property(name, typ, desc string, opts []Option) Property {
	p := Property{Name: name, Schema: map[string]any{"type": typ}}
	if desc != "" {
		p.Schema["description"] = desc
	}
	for _, o := range opts {
		o(&p)
	}
	return p
}

// Object is the input schema {"type": "object", "properties": …,
// "required": […]} of props. "required" keeps the order of props and is
// present even when empty, as the schemas models have seen so far were.
func Object(props ...Property) json.RawMessage {
	properties := map[string]any{}
	required := []string{}
	for _, p := range props {
		properties[p.Name] = p.Schema
		if p.Required {
			required = append(required, p.Name)
		}
	}
	return MustJSON(map[string]any{"type": "object", "properties": properties, "required": required})
}

// MustJSON encodes a schema literal. It panics on values encoding/json
// cannot encode: schemas are built from constants at start-up, where a
// panic is a programming error found by any test.
func MustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic("tool: schema: " + err.Error())
	}
	return b
}
