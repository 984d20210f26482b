package tool

import (
	"encoding/json"
	"reflect"
	"slices"
	"testing"
)

// directArgs is declArgs without its raw JSON and any (which only
// encoding/json decodes exactly), plus sized integers: decoded by the
// direct assigner.
type directArgs struct {
	fileArg
	Lines      int      `json:"lines,omitempty" arg:"default=$defLines,minimum=1,maximum=$maxLines"`
	Limit      *int     `json:"limit,omitempty" arg:"minimum=0"`
	IgnoreCase bool     `json:"ignore_case,omitempty"`
	Order      string   `json:"order,omitempty" arg:"enum=asc|desc"`
	Tags       []string `json:"tags,omitempty" arg:"maxItems=3,items.maxLength=4"`
	IDs        []int    `json:"ids,omitempty"`
	Ratio      float64  `json:"ratio,omitempty"`
	Items      []item   `json:"items,omitempty"`
	Small      int8     `json:"small,omitempty"`
	Count      uint     `json:"count,omitempty"`
	Scale      *float32 `json:"scale,omitempty"`
	Skip       string   `json:"-"`
}

// TestAssignerChosen: the direct assigner is used where it decodes as
// encoding/json does, and nowhere else.
func TestAssignerChosen(t *testing.T) {
	type named struct {
		fileArg `json:"f"`
	}
	type withPtr struct {
		*fileArg
	}
	type asText struct {
		N int `json:"n,string"`
	}
	type bytesArg struct {
		B []byte `json:"b"`
	}
	type mapArg struct {
		M map[string]string `json:"m"`
	}
	for _, tc := range []struct {
		t      reflect.Type
		direct bool
	}{
		{reflect.TypeFor[directArgs](), true},
		{reflect.TypeFor[windowArgs](), true},
		{reflect.TypeFor[struct{}](), true},
		{reflect.TypeFor[declArgs](), false}, // raw JSON, any
		{reflect.TypeFor[named](), false},
		{reflect.TypeFor[withPtr](), false},
		{reflect.TypeFor[asText](), false},
		{reflect.TypeFor[bytesArg](), false},
		{reflect.TypeFor[mapArg](), false},
	} {
		if _, ok := newAssigner(tc.t); ok != tc.direct {
			t.Errorf("%s: direct %v, want %v", tc.t, ok, tc.direct)
		}
	}
}

var assignSeeds = []string{
	`{"file":"a.log"}`,
	`{"file":"a","lines":3,"limit":0,"order":"asc","ignore_case":true}`,
	`{"file":"a","lines":null,"limit":null,"tags":null,"items":[null,{"op":"set","ttl":null}]}`,
	`{"file":"a","lines":1.0,"ids":[2.0,3e0,-0,1E1]}`,
	`{"file":"a","lines":1e2,"ratio":0.30000000000000004,"scale":1.5}`,
	`{"file":"a","items":[{"op":"set","content":2,"ttl":59.5},{"op":"delete","key":"k"}]}`,
	`{"file":"toolongname","file":"b"}`,
	`{"file":"a","small":127,"count":3}`,
	`{"file":"a","small":128}`,
	`{"file":"a","small":-129.0}`,
	`{"file":"a","count":-1}`,
	`{"file":"a","ids":[9223372036854775807,-9223372036854775808]}`,
	`{"file":"a","ids":[9223372036854775808]}`,
	`{"file":"a","ids":[1e19]}`,
	`{"file":"a","ratio":1e400}`,
	`{"file":"a","scale":1e39}`,
	`{"file":"a","Skip":"x","-":"y"}`,
	`{"file":"a","tags":["a","b"],"order":"up"}`,
	`{"file":"a\u00e9\ud83d\ude00","order":"desc"}`,
}

// FuzzAssignIsEncodingJSON holds the direct assigner to encoding/json:
// the same arguments, as text and as values, decode to the same T (or are
// refused alike) either way.
func FuzzAssignIsEncodingJSON(f *testing.F) {
	direct := MustArgs[directArgs](declOpts)
	if direct.assign == nil {
		f.Fatal("directArgs is not decoded directly")
	}
	viaJSON := *direct
	viaJSON.assign = nil
	for _, s := range assignSeeds {
		f.Add([]byte(s))
	}
	same := func(t *testing.T, how string, v1, v2 directArgs, p1, p2 []Problem) {
		t.Helper()
		if len(p1) > 0 || len(p2) > 0 {
			k1, k2 := keywords(p1), keywords(p2)
			if !slices.Equal(k1, k2) {
				t.Fatalf("%s: direct refused %q, encoding/json %q", how, Messages(p1), Messages(p2))
			}
			return
		}
		if !reflect.DeepEqual(v1, v2) {
			t.Fatalf("%s: direct %+v, encoding/json %+v", how, v1, v2)
		}
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		v1, p1 := direct.Decode(raw)
		v2, p2 := viaJSON.Decode(raw)
		same(t, "text", v1, v2, p1, p2)
		var m map[string]any
		if json.Unmarshal(raw, &m) != nil || m == nil {
			return
		}
		v1, p1 = direct.DecodeValue(m)
		v2, p2 = viaJSON.DecodeValue(m)
		same(t, "values", v1, v2, p1, p2)
	})
}

func keywords(ps []Problem) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.Keyword)
	}
	return out
}
