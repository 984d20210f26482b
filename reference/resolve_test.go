package reference

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scratchpad-mcp/scratchpad-mcp/explore"
	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testsecrets"
	"github.com/scratchpad-mcp/scratchpad-mcp/redact"
)

// words counts tokens as whitespace-separated words (a stand-in counter).
func words(s string) int { return len(strings.Fields(s)) }

// store is a read root like an agent's: its stored outputs in scratchpad/,
// and beside the root another owner's folder.
type store struct {
	dir  string // the read root
	env  *Env
	file map[string][]byte
}

func newStore(t testing.TB, files map[string]string) *store {
	t.Helper()
	top := t.TempDir()
	dir := filepath.Join(top, "alice", "scratchpad")
	other := filepath.Join(top, "bob", "scratchpad")
	for _, d := range []string{dir, other} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(other, "bob-secret.json"), []byte(`{"x":1}`), 0o600); err != nil {
		t.Fatal(err)
	}
	s := &store{dir: dir, file: map[string][]byte{}}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		s.file[name] = []byte(body)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { root.Close() })
	s.env = &Env{Explore: &explore.Env{Root: root, Count: words}}
	return s
}

const listing = `{
  "kind": "PodList",
  "items": [
    {
      "name": "web-1",
      "phase": "Failed",
      "restarts": 4
    },
    {
      "name": "web-2",
      "phase": "Running",
      "restarts": 0
    },
    {
      "name": "web-3",
      "phase": "Failed",
      "restarts": 7
    }
  ]
}
`

const logText = "line one\nline two <b>&</b>\nline three\n"

// writeFile is server-filesystem's write_file schema, draft-07 as it lists it.
const writeFile = `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"path":{"type":"string"},"content":{"type":"string"}},"required":["path","content"],"additionalProperties":false}`

// open takes any JSON; rows takes an array of objects.
const anySchema = `{"type":"object","properties":{"payload":{},"rows":{"type":"array","items":{"type":"object"}},"note":{"type":["string","null"]},"count":{"type":"integer"},"nested":{"type":"object","properties":{"deep":{"$ref":"#/$defs/text"}}}},"$defs":{"text":{"anyOf":[{"type":"string"},{"type":"null"}]}}}`

func TestResolve(t *testing.T) {
	s := newStore(t, map[string]string{
		"fs-read_text_file-1a2b3c4d.txt": logText,
		"k8s-list_pods-cfe25379.json":    listing,
		"events.ndjson":                  "{\"a\":1}\n{\"a\":2}\n",
		"odd name é \"q\".json":          `{"v":[1,2]}`,
		"nested-ref.json":                `{"$scratchpad":{"file":"k8s-list_pods-cfe25379.json"}}`,
	})
	var compactListing bytes.Buffer
	_ = json.Compact(&compactListing, []byte(listing))
	cases := []struct {
		name, schema, args string
		want               string // the resolved arguments
		store              bool
		refs, tokens       int
	}{
		{"no reference: the bytes themselves", writeFile, `{"path":"/x","content":"hello"}`, `{"path":"/x","content":"hello"}`, false, 0, 0},
		{"a stored text into a string", writeFile,
			`{"path":"/x","content":{"$scratchpad":{"file":"fs-read_text_file-1a2b3c4d.txt"}}}`,
			`{"path":"/x","content":"line one\nline two <b>&</b>\nline three\n"}`, false, 1, 7},
		{"a stored JSON into a string: its text as stored", writeFile,
			`{"path":"/x","content":{"$scratchpad":{"file":"k8s-list_pods-cfe25379.json"}}}`,
			`{"path":"/x","content":` + string(quote([]byte(listing))) + `}`, false, 1, words(listing)},
		{"a stored JSON as a value", anySchema,
			`{"payload":{"$scratchpad":{"file":"k8s-list_pods-cfe25379.json"}}}`,
			`{"payload":` + compactListing.String() + `}`, false, 1, 1},
		{"a path's node list into an array", anySchema,
			`{"rows":{"$scratchpad":{"file":"k8s-list_pods-cfe25379.json","path":"$.items[?@.phase == 'Failed']"}}}`,
			`{"rows":[{"name":"web-1","phase":"Failed","restarts":4},{"name":"web-3","phase":"Failed","restarts":7}]}`, false, 1, 1},
		{"a string value into a string", anySchema,
			`{"note":{"$scratchpad":{"file":"k8s-list_pods-cfe25379.json","path":"items[1].name"}}}`,
			`{"note":"web-2"}`, false, 1, 1},
		{"an object into a string: indented JSON", writeFile,
			`{"path":"/x","content":{"$scratchpad":{"file":"k8s-list_pods-cfe25379.json","path":"$.items[0]"}}}`,
			`{"path":"/x","content":"{\n  \"name\": \"web-1\",\n  \"phase\": \"Failed\",\n  \"restarts\": 4\n}"}`, false, 1, 8},
		{"as json overrides a string parameter's text", anySchema,
			`{"payload":{"$scratchpad":{"file":"k8s-list_pods-cfe25379.json","path":"$.items[0].name","as":"json"}}}`,
			`{"payload":"web-1"}`, false, 1, 1},
		{"as text of a value", anySchema,
			`{"payload":{"$scratchpad":{"file":"k8s-list_pods-cfe25379.json","path":"$.items[0].restarts","as":"text"}}}`,
			`{"payload":"4"}`, false, 1, 1},
		{"lines", writeFile,
			`{"path":"/x","content":{"$scratchpad":{"file":"fs-read_text_file-1a2b3c4d.txt","lines":"2-3"}}}`,
			`{"path":"/x","content":"line two <b>&</b>\nline three\n"}`, false, 1, 5},
		{"lines of JSON as json", anySchema,
			`{"payload":{"$scratchpad":{"file":"events.ndjson","lines":"2","as":"json"}}}`,
			`{"payload":{"a":2}}`, false, 1, 1},
		{"NDJSON as its records", anySchema,
			`{"payload":{"$scratchpad":{"file":"events.ndjson"}}}`,
			`{"payload":[{"a":1},{"a":2}]}`, false, 1, 1},
		{"a text file where any value goes: its text", anySchema,
			`{"payload":{"$scratchpad":{"file":"fs-read_text_file-1a2b3c4d.txt"}}}`,
			`{"payload":"line one\nline two <b>&</b>\nline three\n"}`, false, 1, 7},
		{"two references, in an array and a nested object, through $ref and anyOf", anySchema,
			`{"rows":[{"a":{"$scratchpad":{"file":"events.ndjson","path":"$[0]"}}},{"$scratchpad":{"file":"odd name é \"q\".json"}}],"nested":{"deep":{"$scratchpad":{"file":"k8s-list_pods-cfe25379.json","path":"kind"}}}}`,
			`{"rows":[{"a":{"a":1}},{"v":[1,2]}],"nested":{"deep":"PodList"}}`, false, 3, 3},
		{"an escaped key is the same key", anySchema,
			`{"payload":{"\u0024scratchpad":{"file":"events.ndjson","path":"$[1].a"}}}`,
			`{"payload":2}`, false, 1, 1},
		{"what a reference names is data, not a reference", anySchema,
			`{"payload":{"$scratchpad":{"file":"nested-ref.json"}}}`,
			`{"payload":{"$scratchpad":{"file":"k8s-list_pods-cfe25379.json"}}}`, false, 1, 1},
		{"the options are taken out", writeFile,
			`{"$scratchpad":{"store":true},"path":"/x","content":"c"}`, `{"path":"/x","content":"c"}`, true, 0, 0},
		{"options last", writeFile,
			`{"path":"/x","content":"c", "$scratchpad" : {"store":true} }`, `{"path":"/x","content":"c" }`, true, 0, 0},
		{"options alone", anySchema, `{"$scratchpad":{"store":false}}`, `{}`, false, 0, 0},
		{"no schema: the value", "",
			`{"x":{"$scratchpad":{"file":"events.ndjson","path":"$[*].a"}}}`, `{"x":[1,2]}`, false, 1, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			call := Call{Args: json.RawMessage(c.args)}
			if c.schema != "" {
				call.Schema = NewSchema(json.RawMessage(c.schema))
			}
			got, err := Resolve(context.Background(), s.env, call)
			if err != nil {
				t.Fatalf("%v\n%s", err, errJSON(err))
			}
			if string(got.Args) != c.want {
				t.Errorf("args\n%s\nwant\n%s", got.Args, c.want)
			}
			if !json.Valid(got.Args) {
				t.Errorf("not JSON: %s", got.Args)
			}
			if got.Options.Store != c.store || len(got.Refs) != c.refs {
				t.Errorf("store %v refs %d, want %v %d", got.Options.Store, len(got.Refs), c.store, c.refs)
			}
			if c.tokens > 1 && got.Tokens != c.tokens {
				t.Errorf("tokens %d, want %d", got.Tokens, c.tokens)
			}
			if c.refs > 0 && (got.Bytes <= 0 || got.Tokens <= 0 || len(got.Files()) == 0) {
				t.Errorf("bytes %d tokens %d files %v: nothing counted", got.Bytes, got.Tokens, got.Files())
			}
		})
	}
}

// errJSON is the answer of err, if it is an *Error.
func errJSON(err error) string {
	if e, ok := errors.AsType[*Error](err); ok {
		return string(e.JSON())
	}
	return ""
}

func TestResolveRefused(t *testing.T) {
	s := newStore(t, map[string]string{
		"fs-read_text_file-1a2b3c4d.txt": logText,
		"k8s-list_pods-cfe25379.json":    listing,
		"k8s-list_pods-00000000.json":    listing,
	})
	s.env.MaxBytes = 150
	cases := []struct {
		name, schema, args string
		sentinel           error
		code               string
		says               []string // in the answer
	}{
		{"a missing file names what there is", writeFile,
			`{"path":"/x","content":{"$scratchpad":{"file":"k8s-list_pods-cfe2537.json"}}}`,
			ErrNotFound, "file_not_found", []string{`"at":"/content"`, `"stored_outputs":["k8s-list_pods-cfe25379.json","k8s-list_pods-00000000.json","fs-read_text_file-1a2b3c4d.txt"]`, `"stored_outputs_total":3`, `"reference":{"$scratchpad":{"file":"k8s-list_pods-cfe2537.json"}}`, "Nothing was sent"}},
		{"another owner's file", writeFile,
			`{"path":"/x","content":{"$scratchpad":{"file":"../../bob/scratchpad/bob-secret.json"}}}`,
			ErrOutside, "file_outside_root", []string{"not one of your stored outputs", `"stored_outputs":[`}},
		{"an absolute path", writeFile,
			`{"path":"/x","content":{"$scratchpad":{"file":"` + filepath.ToSlash(filepath.Join(s.dir, "k8s-list_pods-cfe25379.json")) + `"}}}`,
			ErrOutside, "file_outside_root", nil},
		{"a key that is not there", anySchema,
			`{"payload":{"$scratchpad":{"file":"k8s-list_pods-cfe25379.json","path":"$.items[0].phse"}}}`,
			ErrNothingSelected, "key_path_not_found", []string{`"available_keys":["name","phase","restarts"]`, `"suggestions":[`, `"path":"$.items[0].phase"`,
				`"corrected_reference":{"$scratchpad":{"file":"k8s-list_pods-cfe25379.json","path":"$.items[0].phase"}}`}},
		{"a filter that matches nothing", anySchema,
			`{"payload":{"$scratchpad":{"file":"k8s-list_pods-cfe25379.json","path":"$.items[?@.phase == 'Pending']"}}}`,
			ErrNothingSelected, "nothing_selected", []string{"selects no value"}},
		{"a path that does not parse", anySchema,
			`{"payload":{"$scratchpad":{"file":"k8s-list_pods-cfe25379.json","path":"$.items[?"}}}`,
			ErrUnresolved, "invalid_path", []string{"column"}},
		{"a file over the bound", anySchema,
			`{"payload":{"$scratchpad":{"file":"k8s-list_pods-cfe25379.json"}}}`,
			ErrTooLarge, "too_large", []string{"max_reference_bytes", `"max_bytes":150`}},
		{"two references over the bound together", anySchema,
			`{"payload":[{"$scratchpad":{"file":"k8s-list_pods-cfe25379.json","path":"$.items[0:2]"}},{"$scratchpad":{"file":"k8s-list_pods-cfe25379.json","path":"$.items[1:3]"}}]}`,
			ErrTooLarge, "too_large", []string{`"at":"/payload/1"`}},
		{"text lines as json", anySchema,
			`{"payload":{"$scratchpad":{"file":"fs-read_text_file-1a2b3c4d.txt","lines":"1-2","as":"json"}}}`,
			ErrUnresolved, "not_json", []string{`"as": "text"`}},
		{"lines past the end", writeFile,
			`{"path":"/x","content":{"$scratchpad":{"file":"fs-read_text_file-1a2b3c4d.txt","lines":"9-10"}}}`,
			ErrUnresolved, "invalid_range", []string{"3 lines"}},
		{"a value where a string goes", writeFile,
			`{"path":"/x","content":{"$scratchpad":{"file":"k8s-list_pods-cfe25379.json","path":"$.items[0]","as":"json"}}}`,
			ErrDoesNotFit, "reference_does_not_fit", []string{"content must be a string, not an object", `add "as": "text"`, `"at":"/content"`}},
		{"text where an array goes", anySchema,
			`{"rows":{"$scratchpad":{"file":"k8s-list_pods-cfe25379.json","path":"$.items[0:1]","as":"text"}}}`,
			ErrDoesNotFit, "reference_does_not_fit", []string{"rows must be an array, not a string", `add "as": "json"`}},
		{"a reference with another member", anySchema, `{"payload":{"$scratchpad":{"file":"a"},"x":1}}`, ErrInvalid, "invalid_reference", []string{"one member"}},
		{"no file", anySchema, `{"payload":{"$scratchpad":{"path":"$.a"}}}`, ErrInvalid, "invalid_reference", []string{"file is required"}},
		{"an unknown member", anySchema, `{"payload":{"$scratchpad":{"file":"a","pth":"$.a"}}}`, ErrInvalid, "invalid_reference", []string{`not "pth"`}},
		{"a case variant", anySchema, `{"payload":{"$scratchpad":{"File":"a"}}}`, ErrInvalid, "invalid_reference", []string{`not "File"`}},
		{"a member twice", anySchema, `{"payload":{"$scratchpad":{"file":"a","file":"b"}}}`, ErrInvalid, "invalid_reference", nil},
		{"as neither", anySchema, `{"payload":{"$scratchpad":{"file":"a","as":"xml"}}}`, ErrInvalid, "invalid_reference", []string{`"text" or "json"`}},
		{"bad lines", anySchema, `{"payload":{"$scratchpad":{"file":"a","lines":"3-1"}}}`, ErrInvalid, "invalid_reference", []string{`"A-B"`}},
		{"path and lines", anySchema, `{"payload":{"$scratchpad":{"file":"a","lines":"1","path":"$"}}}`, ErrInvalid, "invalid_reference", []string{"not both"}},
		{"not a string", anySchema, `{"payload":{"$scratchpad":{"file":3}}}`, ErrInvalid, "invalid_reference", []string{"file must be a string"}},
		{"not an object", anySchema, `{"payload":{"$scratchpad":"a"}}`, ErrInvalid, "invalid_reference", nil},
		{"a reference as the options", anySchema, `{"$scratchpad":{"file":"a"}}`, ErrInvalid, "invalid_reference", []string{"in an argument's place"}},
		{"an unknown option", anySchema, `{"$scratchpad":{"stor":true}}`, ErrInvalid, "invalid_reference", []string{`not "stor"`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			call := Call{Args: json.RawMessage(c.args), Schema: NewSchema(json.RawMessage(c.schema))}
			got, err := Resolve(context.Background(), s.env, call)
			if !errors.Is(err, c.sentinel) {
				t.Fatalf("err %v, want %v", err, c.sentinel)
			}
			if string(got.Args) != c.args {
				t.Errorf("refused, yet the arguments changed: %s", got.Args)
			}
			e, ok := errors.AsType[*Error](err)
			if !ok {
				t.Fatalf("%T is not an *Error", err)
			}
			ans := e.JSON()
			var m map[string]any
			if err := json.Unmarshal(ans, &m); err != nil || m["error"] != c.code {
				t.Errorf("answer %s, want error %q", ans, c.code)
			}
			for _, w := range c.says {
				if !strings.Contains(string(ans), w) && !strings.Contains(e.Message, w) {
					t.Errorf("answer %s\ndoes not say %s", ans, w)
				}
			}
		})
	}
}

func TestResolveMasksUnlessKept(t *testing.T) {
	r := rand.New(rand.NewPCG(56, 1))
	p := testsecrets.Plant(r, "github-pat")
	s := newStore(t, map[string]string{"config.txt": "region=eu\n" + p.Text + "\n"})
	red, err := redact.New(redact.Options{Mode: redact.Mask})
	if err != nil {
		t.Fatal(err)
	}
	s.env.Redactor = red
	args := json.RawMessage(`{"path":"/x","content":{"$scratchpad":{"file":"config.txt"}}}`)
	schema := NewSchema(json.RawMessage(writeFile))
	got, err := Resolve(context.Background(), s.env, Call{Args: args, Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(got.Args), p.Secret) || got.Masked["github-pat"] != 1 || !strings.Contains(string(got.Args), "[REDACTED:github-pat:") {
		t.Errorf("masked %v: %s", got.Masked, got.Args)
	}
	kept, err := Resolve(context.Background(), s.env, Call{Args: args, Schema: schema, KeepSecrets: true})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(kept.Args), p.Secret) || kept.Masked != nil {
		t.Errorf("kept: masked %v: %s", kept.Masked, kept.Args)
	}
}

func TestResolveBigTextByteForByte(t *testing.T) {
	// 2 MB of text with every byte value a JSON string escapes, and
	// multi-byte characters cut nowhere.
	var b strings.Builder
	for i := 0; b.Len() < 2<<20; i++ {
		b.WriteString("row ")
		b.WriteString(strings.Repeat("é\"\\\t<>&/", i%5))
		b.WriteByte(byte(i % 32))
		b.WriteString(" ✓\n")
	}
	text := b.String()
	s := newStore(t, map[string]string{"big.txt": text})
	got, err := Resolve(context.Background(), s.env, Call{
		Args:   json.RawMessage(`{"path":"/x","content":{"$scratchpad":{"file":"big.txt"}}}`),
		Schema: NewSchema(json.RawMessage(writeFile)),
	})
	if err != nil {
		t.Fatal(err)
	}
	var out struct{ Content string }
	if err := json.Unmarshal(got.Args, &out); err != nil {
		t.Fatal(err)
	}
	if out.Content != text || got.Bytes != int64(len(text)) {
		t.Errorf("content differs (%d bytes, want %d)", len(out.Content), len(text))
	}
}
