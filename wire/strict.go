package wire

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"

	"github.com/scratchpad-mcp/scratchpad-mcp/internal/jsonscan"
)

// Strict decoding. JSON-RPC and MCP name their members exactly, but
// encoding/json matches a key to a field case-insensitively (and folds
// "ſ" to "s" and the Kelvin sign to "k"), and lets the last of two equal
// keys win. A check that reads a member exactly (the Mcp-Name header
// against params.name) and a decoder that takes "Name" after it then see
// two different requests: go-sdk's CVE-2026-27896. Every client message
// is therefore checked here before anything reads it ([CheckMessage]),
// and every struct a handler decodes is decoded by [Unmarshal]: no
// object anywhere in a message may name a member twice, and no key may
// differ only in case (or by folding) from a member its shape declares.
// A key the shape does not know at all is left alone (a later revision's
// field, an extension's).

var (
	// ErrDuplicateKey: an object names the same member twice.
	ErrDuplicateKey = errors.New("duplicate member name")
	// ErrKeyCase: a key differs only in case (or by Unicode folding) from
	// a member the object declares.
	ErrKeyCase = errors.New("member name is a case variant of a declared one")
)

// KeyError is a key [CheckMessage], [CheckKeys] or [Unmarshal] refuses:
// where the object is, the key as decoded, and for [ErrKeyCase] the
// declared member it imitates.
type KeyError struct {
	Path  string // the object's place, "params._meta"; "" for the top level
	Key   string
	Known string
	Err   error // ErrDuplicateKey or ErrKeyCase
}

func (e *KeyError) Error() string {
	at := ""
	if e.Path != "" {
		at = e.Path + ": "
	}
	if errors.Is(e.Err, ErrKeyCase) {
		return fmt.Sprintf("%smember %q is a case variant of %q (member names are exact)", at, e.Key, e.Known)
	}
	return fmt.Sprintf("%smember %q appears twice", at, e.Key)
}

func (e *KeyError) Unwrap() error { return e.Err }

// Unmarshal decodes data into v (a pointer) after [CheckKeys] with v's
// shape: what encoding/json would take case-insensitively or from the
// last of two keys is refused instead.
func Unmarshal(data []byte, v any) error {
	if err := CheckKeys(data, reflect.TypeOf(v)); err != nil {
		return err
	}
	return json.Unmarshal(data, v)
}

// CheckKeys checks the JSON data against the shape of Go type t as
// encoding/json would decode it: member names of structs (their json
// tags, embedded structs flattened), map values and slice items followed
// down, everything else (json.RawMessage, any) checked for duplicates
// only. Invalid JSON is left to the decoder that follows (nil).
func CheckKeys(data []byte, t reflect.Type) error {
	return checkKeys(data, shapeOf(t))
}

func checkKeys(data []byte, sh *shape) error {
	if jsonscan.Check(data) != nil {
		return nil // the decoder says what is wrong
	}
	i := jsonscan.SkipSpace(data, 0)
	_, err := walkKeys(data, i, sh, nil)
	if err != nil {
		return err
	}
	return nil
}

// shape is what a decoder declares of a JSON value: the member names of
// an object decoded into a struct, and the shape of what is inside.
type shape struct {
	fields map[string]*shape // nil: no declared names (a map, raw JSON)
	elem   *shape            // a map's values, an array's items
}

// opaque is the shape of raw JSON: duplicates are still refused inside.
var opaque = &shape{}

var shapes sync.Map // reflect.Type → *shape

func shapeOf(t reflect.Type) *shape {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil {
		return opaque
	}
	if sh, ok := shapes.Load(t); ok {
		return sh.(*shape)
	}
	if sh, ok := declaredShapes[t]; ok {
		return sh
	}
	sh := &shape{}
	// Stored before it is filled in, so that a recursive type ends.
	if prev, loaded := shapes.LoadOrStore(t, sh); loaded {
		return prev.(*shape)
	}
	switch t.Kind() {
	case reflect.Struct:
		sh.fields = map[string]*shape{}
		addFields(sh.fields, t)
	case reflect.Map:
		sh.elem = shapeOf(t.Elem())
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() != reflect.Uint8 { // []byte is a base64 string
			sh.elem = shapeOf(t.Elem())
		}
	}
	return sh
}

// addFields adds the members struct t declares, as encoding/json names
// them.
func addFields(into map[string]*shape, t reflect.Type) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				addFields(into, ft)
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		into[name] = shapeOf(f.Type)
	}
}

// declaredShapes are the types whose shape is not their Go type's: a
// request's _meta is a map (every member goes on), but the envelope's
// keys in it are exact.
var declaredShapes = func() map[reflect.Type]*shape {
	caps := obj(map[string]*shape{
		"sampling": opaque, "roots": opaque, "experimental": opaque, "extensions": opaque, "tasks": opaque,
		"elicitation": obj(map[string]*shape{"form": opaque, "url": opaque}),
	})
	impl := obj(map[string]*shape{"name": opaque, "version": opaque, "title": opaque, "icons": opaque, "websiteUrl": opaque, "description": opaque})
	return map[reflect.Type]*shape{
		reflect.TypeFor[Meta](): obj(map[string]*shape{
			MetaProgressToken:      opaque,
			MetaProtocolVersion:    opaque,
			MetaClientCapabilities: caps,
			MetaClientInfo:         impl,
			MetaLogLevel:           opaque,
			MetaSubscriptionID:     opaque,
		}),
		reflect.TypeFor[ClientCapabilities](): caps,
		reflect.TypeFor[Implementation]():     impl,
	}
}()

func obj(fields map[string]*shape) *shape { return &shape{fields: fields} }

// pathNode is a place in the message, built into a string only for an
// error.
type pathNode struct {
	up    *pathNode
	key   string
	index int // for an array item (key == "")
}

func (p *pathNode) String() string {
	if p == nil {
		return ""
	}
	up := p.up.String()
	if p.key == "" {
		return fmt.Sprintf("%s[%d]", up, p.index)
	}
	if up == "" {
		return p.key
	}
	return up + "." + p.key
}

// maxKeysLinear is how many members an object may have before its
// duplicates are found with a map rather than by comparing each pair.
const maxKeysLinear = 16

// walkKeys checks the value at data[i] against sh and returns the offset
// past it. The input is valid JSON nested at most jsonscan.MaxDepth deep
// (checkKeys), which bounds the recursion.
func walkKeys(data []byte, i int, sh *shape, at *pathNode) (int, error) {
	if sh == nil {
		sh = opaque
	}
	switch data[i] {
	case '{':
		var keys []string
		var set map[string]bool
		var err error
		end := jsonscan.Object(data, i, func(ks, ke, vat int) int {
			raw := data[ks:ke]
			key := string(raw[1 : len(raw)-1])
			if strings.IndexByte(key, '\\') >= 0 {
				key = jsonscan.Unquote(raw)
			}
			// Duplicates.
			dup := false
			if set != nil {
				dup = set[key]
				set[key] = true
			} else {
				for _, k := range keys {
					if k == key {
						dup = true
						break
					}
				}
				keys = append(keys, key)
				if len(keys) > maxKeysLinear {
					set = make(map[string]bool, 2*len(keys))
					for _, k := range keys {
						set[k] = true
					}
				}
			}
			if dup {
				err = &KeyError{Path: at.String(), Key: key, Err: ErrDuplicateKey}
				return -1
			}
			next := sh.elem
			if sh.fields != nil {
				f, declared := sh.fields[key]
				if !declared {
					for name := range sh.fields {
						if strings.EqualFold(name, key) {
							err = &KeyError{Path: at.String(), Key: key, Known: name, Err: ErrKeyCase}
							return -1
						}
					}
				}
				next = f
			}
			var vend int
			vend, err = walkKeys(data, vat, next, &pathNode{up: at, key: key})
			if err != nil {
				return -1
			}
			return vend
		})
		return end, err
	case '[':
		var err error
		n := 0
		end := jsonscan.Array(data, i, func(iat int) int {
			var vend int
			vend, err = walkKeys(data, iat, sh.elem, &pathNode{up: at, index: n})
			n++
			if err != nil {
				return -1
			}
			return vend
		})
		return end, err
	}
	return jsonscan.ValueEnd(data, i), nil
}
