package jsonscan

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

var cases = []string{
	`{}`, `[]`, `1`, `-0`, `0.5e+7`, `"s"`, `null`, `true`, `false`, ` {"a" : [1, 2.5e-3, -0, true, false, null]} `,
	`{"a":{"b":[{"c":"d"}]},"e":[]}`, `"\u00e9\n\"\\\/"`, `[[[[]]]]`, `{"":""}`, `{"a\"b":1}`, "[\n\t1,\r\n 2\n]",
	`"` + strings.Repeat("x", 100) + `"`, `"é€😀"`, "\"\xff\xfe\"",
	// invalid
	``, ` `, `{`, `}`, `[1,]`, `{"a":1,}`, `{"a"}`, `{"a":}`, `{1:2}`, `[1 2]`, `01`, `-`, `1.`, `1e`, `.5`, `+1`, `tru`, `nul`,
	`"abc`, `"\x"`, `"\u12"`, `"\u12g4"`, "\"a\x01b\"", "\"" + strings.Repeat("a", 20) + "\x1f\"", `[1]]`, `{}x`, `"\`,
	`{"a":1}{"b":2}`, `[}`, `{]`, `{"a":[}`, `truex`, `1x`,
}

func TestValidIsGjsonValid(t *testing.T) {
	for _, c := range cases {
		if got, want := Valid([]byte(c)), gjson.ValidBytes([]byte(c)); got != want {
			t.Errorf("%q: Valid %v, gjson %v", c, got, want)
		}
	}
}

func TestTooDeep(t *testing.T) {
	deep := func(n int) []byte {
		return append(bytes.Repeat([]byte("["), n), bytes.Repeat([]byte("]"), n)...)
	}
	if err := Check(deep(MaxDepth)); err != nil {
		t.Fatalf("%d levels: %v", MaxDepth, err)
	}
	if err := Check(deep(MaxDepth + 1)); !errors.Is(err, ErrTooDeep) {
		t.Fatalf("%d levels: %v", MaxDepth+1, err)
	}
	// What ends gjson's validator with a fatal stack overflow.
	if err := Check(bytes.Repeat([]byte("["), 20<<20)); !errors.Is(err, ErrTooDeep) {
		t.Fatalf("20 MB of [: %v", err)
	}
	if err := Check([]byte(`[1,`)); !errors.Is(err, ErrInvalid) {
		t.Fatalf("truncated: %v", err)
	}
}

func TestScanMembers(t *testing.T) {
	msg := ` {"jsonrpc":"2.0", "id" : 7,"result":{"content":[{"type":"text","text":"a"}],"x":{}},"a\"b":[1,{"id":2}],"e":{}} `
	var got []string
	if err := Scan([]byte(msg), func(k, v []byte) { got = append(got, string(k)+"="+string(v)) }); err != nil {
		t.Fatal(err)
	}
	want := []string{`jsonrpc="2.0"`, `id=7`, `result={"content":[{"type":"text","text":"a"}],"x":{}}`, `a\"b=[1,{"id":2}]`, `e={}`}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("got  %q\nwant %q", got, want)
	}
	got = nil
	if err := Scan([]byte(`[{"a":1}]`), func(k, v []byte) { got = append(got, string(k)) }); err != nil || got != nil {
		t.Fatalf("array: %v %q", err, got)
	}
}

// FuzzValidIsGjsonValid: the same verdict as gjson's validator on
// anything nested shallowly enough for it not to crash, and members that
// are the object's own.
func FuzzValidIsGjsonValid(f *testing.F) {
	for _, c := range cases {
		f.Add(c)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if strings.Count(s, "[")+strings.Count(s, "{") > MaxDepth {
			return
		}
		b := []byte(s)
		var keys, values []string
		err := Scan(b, func(k, v []byte) { keys, values = append(keys, string(k)), append(values, string(v)) })
		if want := gjson.ValidBytes(b); (err == nil) != want {
			t.Fatalf("%q: Scan %v, gjson valid %v", s, err, want)
		}
		if err != nil {
			return
		}
		var wantKeys, wantValues []string
		if r := gjson.ParseBytes(b); r.IsObject() {
			r.ForEach(func(k, v gjson.Result) bool {
				wantKeys, wantValues = append(wantKeys, k.Raw[1:len(k.Raw)-1]), append(wantValues, v.Raw)
				return true
			})
		}
		if strings.Join(keys, "\x00") != strings.Join(wantKeys, "\x00") || strings.Join(values, "\x00") != strings.Join(wantValues, "\x00") {
			t.Fatalf("%q: members %q=%q, gjson %q=%q", s, keys, values, wantKeys, wantValues)
		}
	})
}

func TestErrorSaysWhichMember(t *testing.T) {
	for _, c := range []struct {
		in, member string
		deep       bool
	}{
		{`{"id":1,"result":[1,}`, "result", false},
		{`{"id":1,"result":{"a":` + strings.Repeat("[", MaxDepth) + `}`, "result", true},
		{`{"id":1,"res`, "", false},
		{`{"id":1,"result":2 x`, "", false},
		{`{"id":1,"result":2}}`, "", false},
		{`[1,{"result":[}]`, "", false},
		{`{"error":{"code":1,"message":"a` + "\x01" + `"}}`, "error", false},
	} {
		var e *Error
		if err := Check([]byte(c.in)); !errors.As(err, &e) {
			t.Fatalf("%q: %v", c.in, err)
		}
		if string(e.Member) != c.member || errors.Is(e, ErrTooDeep) != c.deep {
			t.Errorf("%.40q: member %q, deep %v; want %q, %v", c.in, e.Member, errors.Is(e, ErrTooDeep), c.member, c.deep)
		}
	}
}
