package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/scratchpad-mcp/scratchpad-mcp/internal/jsonscan"
)

const ours = `{"name":"scratchpad-mcp","version":"1.0"}`

func TestStamp(t *testing.T) {
	full := Stamping{ResultType: ResultComplete, ServerInfo: json.RawMessage(ours), Cache: &Cache{TTLMs: 0, Scope: ScopePrivate}}
	for _, tc := range []struct {
		name string
		in   string
		s    Stamping
		want string
	}{
		{"empty object", `{}`, full,
			`{"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":` + ours + `},"ttlMs":0,"cacheScope":"private"}`},
		{"upstream bytes kept", "{ \"tools\" : [ {\"n\":1.50e0, \"s\":\"\\u00e9\"} ] }\n", full,
			"{ \"tools\" : [ {\"n\":1.50e0, \"s\":\"\\u00e9\"} ]," + `"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":` + ours + `},"ttlMs":0,"cacheScope":"private"` + " }\n"},
		{"existing _meta merged, upstream serverInfo replaced", `{"_meta":{"a":1,"io.modelcontextprotocol/serverInfo":{"name":"up"},"b":2},"x":3}`, Stamping{ServerInfo: json.RawMessage(ours)},
			`{"_meta":{"a":1,"b":2,"io.modelcontextprotocol/serverInfo":` + ours + `},"x":3}`},
		{"_meta null replaced", `{"_meta":null,"x":1}`, Stamping{ServerInfo: json.RawMessage(ours)},
			`{"x":1,"_meta":{"io.modelcontextprotocol/serverInfo":` + ours + `}}`},
		{"upstream input_required kept", `{"resultType":"input_required","requestState":"s"}`, Stamping{ResultType: ResultComplete},
			`{"resultType":"input_required","requestState":"s"}`},
		{"escaped resultType key counts", `{"res\u0075ltType":"task"}`, Stamping{ResultType: ResultComplete},
			`{"res\u0075ltType":"task"}`},
		{"upstream cache replaced", `{"ttlMs":60000,"tools":[],"cacheScope":"public"}`, Stamping{Cache: &Cache{TTLMs: 5, Scope: ScopePrivate}},
			`{"tools":[],"ttlMs":5,"cacheScope":"private"}`},
		{"first member dropped", `{ "ttlMs":1 , "a":2}`, Stamping{Cache: &Cache{TTLMs: 5, Scope: ScopePublic}},
			`{"a":2,"ttlMs":5,"cacheScope":"public"}`},
		{"only member dropped", `{"cacheScope":"public"}`, Stamping{Cache: &Cache{TTLMs: 5, Scope: ScopePublic}},
			`{"ttlMs":5,"cacheScope":"public"}`},
		{"nothing to do", `{"a":1}`, Stamping{}, `{"a":1}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Stamp([]byte(tc.in), tc.s)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Fatalf("Stamp =\n%s\nwant\n%s", got, tc.want)
			}
			checkMerge(t, []byte(tc.in), tc.s, got)
		})
	}
}

func TestStampRefuses(t *testing.T) {
	for _, in := range []string{``, `[]`, `"x"`, `{"a":}`, `{"a":1} x`, `null`} {
		if _, err := Stamp([]byte(in), Stamping{ResultType: ResultComplete}); !errors.Is(err, ErrNotObject) {
			t.Errorf("Stamp(%q) err %v, want ErrNotObject", in, err)
		}
	}
	for _, s := range []Stamping{
		{ServerInfo: json.RawMessage(`"me"`)},
		{ServerInfo: json.RawMessage(`{"a":`)},
		{Cache: &Cache{TTLMs: -1, Scope: ScopePublic}},
		{Cache: &Cache{Scope: "shared"}},
	} {
		if _, err := Stamp([]byte(`{}`), s); !errors.Is(err, ErrBadStamp) {
			t.Errorf("Stamp(%+v) err %v, want ErrBadStamp", s, err)
		}
	}
}

// checkMerge: Stamp's output is valid JSON and decodes as the input decoded
// with s merged in.
func checkMerge(t *testing.T, in []byte, s Stamping, out []byte) {
	t.Helper()
	if !json.Valid(out) {
		t.Fatalf("Stamp(%q) = %q: not valid JSON", in, out)
	}
	var want, got map[string]any
	if err := decode(in, &want); err != nil {
		t.Fatalf("input: %v", err)
	}
	if err := decode(out, &got); err != nil {
		t.Fatalf("output %q: %v", out, err)
	}
	if s.ResultType != "" {
		if _, ok := want["resultType"]; !ok {
			want["resultType"] = s.ResultType
		}
	}
	if s.ServerInfo != nil {
		var si any
		_ = decode(s.ServerInfo, &si)
		m, ok := want["_meta"].(map[string]any)
		if !ok {
			m = map[string]any{}
		}
		m[MetaServerInfo] = si
		want["_meta"] = m
	}
	if s.Cache != nil {
		want["ttlMs"] = json.Number(strings.TrimSpace(string(mustJSON(s.Cache.TTLMs))))
		want["cacheScope"] = s.Cache.Scope
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Stamp(%q) = %q\ndecodes %v\nwant    %v", in, out, got, want)
	}
	// What Stamp writes it writes once: no duplicate a reader could take
	// instead (decoding takes the last, other readers the first).
	once := func(obj []byte, keys ...string) {
		ms, _ := jsonscan.Members(obj)
		for _, k := range keys {
			n := 0
			for _, m := range ms {
				if key(obj, m) == k {
					n++
				}
			}
			if n != 1 {
				t.Fatalf("Stamp(%q) = %q: %d members %q", in, out, n, k)
			}
		}
	}
	if s.Cache != nil {
		once(out, "ttlMs", "cacheScope")
	}
	if s.ServerInfo != nil {
		once(out, "_meta")
		meta, _ := jsonscan.Lookup(out, "_meta")
		once(meta, MetaServerInfo)
	}
}

func decode(b []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	return d.Decode(v)
}

func mustJSON(v any) []byte { b, _ := json.Marshal(v); return b }

func FuzzStamp(f *testing.F) {
	for _, s := range []string{`{}`, ` { "a" : 1 } `, `{"_meta":{"x":1},"resultType":"task"}`, `{"_meta":null,"_meta":{"a":1}}`,
		`{"ttlMs":1,"ttlMs":2,"cacheScope":"x","b":[1,{"c":"\u0000"}]}`, `{"_meta":{"io.modelcontextprotocol/serverInfo":1,"io.modelcontextprotocol/serverInfo":2}}`,
		`{"_meta":{},"_meta":3}`, "{\n\"a\":\"\\\"}\"\n}\n"} {
		f.Add([]byte(s), uint8(7))
	}
	f.Fuzz(func(t *testing.T, in []byte, which uint8) {
		var m map[string]any
		if decode(in, &m) != nil || m == nil || !json.Valid(in) {
			return // not one JSON object as encoding/json reads it
		}
		var s Stamping
		if which&1 != 0 {
			s.ResultType = ResultComplete
		}
		if which&2 != 0 {
			s.ServerInfo = json.RawMessage(ours)
		}
		if which&4 != 0 {
			s.Cache = &Cache{TTLMs: int64(which), Scope: ScopePublic}
		}
		out, err := Stamp(in, s)
		if err != nil {
			t.Fatalf("Stamp(%q): %v", in, err)
		}
		checkMerge(t, in, s, out)
	})
}
