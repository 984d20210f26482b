package tool

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// quickDecls are the declarations the quick check is held to the
// validator on: every keyword the declarations use, nested items, an open
// one.
func quickDecls() map[string]quickDecl {
	type openArgs struct {
		Clear bool `json:"clear,omitempty"`
	}
	return map[string]quickDecl{
		"decl":   quickDeclOf(MustArgs[declArgs](declOpts)),
		"direct": quickDeclOf(MustArgs[directArgs](declOpts)),
		"window": quickDeclOf(MustArgs[windowArgs](declOpts)),
		"open":   quickDeclOf(MustArgs[openArgs](ArgsOptions{Open: true})),
	}
}

type quickDecl struct {
	quick    *quick
	compiled *jsonschema.Schema
}

func quickDeclOf[T any](a *Args[T]) quickDecl { return quickDecl{a.quick, a.compiled} }

// TestQuickTakesTheUsualCall: the quick check proves the calls models
// usually make valid, so the validator's exact arithmetic is skipped for
// them; what it does not know goes to the validator.
func TestQuickTakesTheUsualCall(t *testing.T) {
	d := quickDecls()
	for _, tc := range []struct {
		decl, args string
		quick      bool
	}{
		{"window", `{"file":"app.log","path":"results","fields":"id,title","offset":100000,"limit":50,"order":"asc"}`, true},
		{"window", `{"file":"app.log"}`, true},
		{"direct", `{"file":"a","lines":3,"tags":["a","bé"],"ids":[1,2],"ratio":0.5,"ignore_case":true,"items":[{"op":"set","key":"k"}]}`, true},
		{"decl", `{"file":"a","value":{"any":[1,"x"]},"raw":{"k":1},"format":"md"}`, true},
		{"open", `{"clear":true,"goal":"ship"}`, true},
		// To the validator: a number quick does not compare exactly, a
		// bounded "number", an invalid value (the validator says why).
		{"direct", `{"file":"a","lines":1.0}`, false},
		{"direct", `{"file":"a","items":[{"op":"set","ttl":5}]}`, false},
		{"window", `{"file":"app.log","offset":-1}`, false},
		{"window", `{"file":"app.log","order":"up"}`, false},
		{"window", `{}`, false},
		{"direct", `{"file":"a","tags":["a","b","c","d"]}`, false},
		{"direct", `{"file":"ééééééééé"}`, false},
	} {
		inst, err := jsonschema.UnmarshalJSON(bytes.NewReader([]byte(tc.args)))
		if err != nil {
			t.Fatal(err)
		}
		if got := d[tc.decl].quick.valid(inst); got != tc.quick {
			t.Errorf("%s %s: quick %v, want %v", tc.decl, tc.args, got, tc.quick)
		}
	}
}

// FuzzQuickImpliesValidator: whatever the quick check accepts, the
// validator accepts — as text and as values decoded by encoding/json.
func FuzzQuickImpliesValidator(f *testing.F) {
	d := quickDecls()
	for _, s := range assignSeeds {
		f.Add(s)
	}
	for _, s := range []string{
		`{"file":"app.log","path":"results","fields":"id","offset":0,"limit":100000000}`,
		`{"file":"app.log","offset":100000001}`,
		`{"file":"a","value":null,"raw":[],"format":"xml"}`,
		`{"clear":false,"x":{"y":[1,2]}}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		text, err := jsonschema.UnmarshalJSON(bytes.NewReader([]byte(s)))
		if err != nil {
			return
		}
		var values any
		json.Unmarshal([]byte(s), &values)
		for name, decl := range d {
			for how, inst := range map[string]any{"text": text, "values": values} {
				if decl.quick.valid(inst) {
					if err := decl.compiled.Validate(inst); err != nil {
						t.Fatalf("%s, %s %s: quick accepted, the validator refused: %v", name, how, s, err)
					}
				}
			}
		}
	})
}
