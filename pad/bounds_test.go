package pad

import (
	"context"
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"
)

// TestTTLBounded: a key's ttl has a maximum (365 days) in the schema and
// in the code, on every backend. A ttl past what a time.Duration holds
// (~9.2e9 s) used to wrap around: the key got an expiry in 1734 and
// vanished while the answer said "updated". A record stored with such a
// ttl before the bound still expires in the future, and its sliding
// renewal does not wrap either.
func TestTTLBounded(t *testing.T) {
	forEachBackend(t, func(t *testing.T, open func(opts Options) *testPad) {
		clock := newTestClock()
		p := open(Options{Now: clock.Now})
		h := newHarness(t, func(context.Context) (*Pad, error) { return p.Pad, nil }, Options{Now: clock.Now})
		ctx := WithAuthor(context.Background(), "alice")
		set := func(key string, ttl float64) string {
			text, _ := h.tool(ctx, ToolUpdate, map[string]any{"patches": []any{map[string]any{"op": "set", "key": key, "value": 1, "ttl": ttl, "sliding": true}}})
			return text
		}
		for _, ttl := range []float64{9.3e9, 1e300, maxTTLSeconds + 1} {
			if text := set("far", ttl); !strings.Contains(text, `"error":"bad_patch"`) || !strings.Contains(text, `"message":"bad patch: ttl must be at most 31536000"`) || !strings.Contains(text, `"patch":1`) {
				t.Errorf("ttl %g: %s", ttl, text)
			}
		}
		if _, ok, _ := p.Get("far"); ok {
			t.Error("a refused ttl set the key")
		}
		if text := set("year", maxTTLSeconds); !strings.HasPrefix(text, "updated") {
			t.Fatalf("ttl %d: %s", maxTTLSeconds, text)
		}
		keys, err := p.Keys(KeyFilter{Names: []string{"year"}}, false)
		if err != nil || len(keys) != 1 || !keys[0].Expires.Equal(clock.Now().Add(365*24*time.Hour)) {
			t.Fatalf("year: %+v %v", keys, err)
		}

		// A record stored with a ttl past the bound (before it existed).
		lk, err := p.store.lock()
		if err != nil {
			t.Fatal(err)
		}
		exp := clock.Now().Add(time.Hour)
		ks := &keySet{Rev: 9, Keys: map[string]*keyRecord{"old": {Value: json.RawMessage("1"), TTL: 9.3e9, Sliding: true, Expires: &exp, Created: clock.Now(), Updated: clock.Now()}}}
		err = p.keyStore().writeKeys(lk, ks.encode(), nil)
		lk.unlock()
		if err != nil {
			t.Fatal(err)
		}
		keys, err = p.Keys(KeyFilter{Names: []string{"old"}}, true) // renews it
		if err != nil || len(keys) != 1 || keys[0].TTL <= 0 || !keys[0].Expires.After(clock.Now()) {
			t.Fatalf("old record read: %+v %v", keys, err)
		}
		clock.Add(2 * time.Hour)
		if _, ok, err := p.Get("old"); !ok || err != nil {
			t.Fatalf("the renewed old record expired: %v", err)
		}
	})
	if d := ttlDuration(9.3e9); d != math.MaxInt64 {
		t.Errorf("ttlDuration(9.3e9) = %d", d)
	}
	if d := ttlDuration(60); d != time.Minute {
		t.Errorf("ttlDuration(60) = %s", d)
	}
}

// TestPadArgumentsBounded: the pad tools' arguments are checked against
// their schemas by the validator (tool.Args): undeclared arguments and case variants
// of declared ones are refused (a PATCHES used to reach the handler's
// decoding as patches, unchecked), integers given as 1.0 work (max_tokens:
// 1.0 was a Go decoding error), and every bound is named.
func TestPadArgumentsBounded(t *testing.T) {
	p := newPad(t, Options{})
	h := newHarness(t, func(context.Context) (*Pad, error) { return p, nil }, Options{})
	ctx := WithAuthor(context.Background(), "alice")
	long := strings.Repeat("x", 200_000)
	for _, tc := range []struct {
		tool string
		args string
		want string // in the answer; "invalid_arguments" answers name it
	}{
		{ToolRead, `{"max_tokens":1.0}`, "## Task"},
		{ToolRead, `{"max_tokens":2000000}`, "max_tokens must be at most 1000000"},
		{ToolRead, `{"anything":true}`, `unknown argument(s) \"anything\" (this tool takes: format, keys, max_tokens, tags)`},
		{ToolRead, `{"Max_Tokens":5}`, `\"Max_Tokens\" is not an argument (names are case-sensitive): did you mean max_tokens?`},
		{ToolRead, `{"tags":["` + strings.Repeat("t", 65) + `"]}`, "tags item 0 must be at most 64 characters, not 65"},
		{ToolRead, `{"keys":["` + long + `"]}`, "keys item 0 must be at most 130 characters, not 200000"},
		{ToolRead, `{"tags":["a","b","c","d","e","f","g","h","i","j","k","l","m","n","o","p","q"]}`, "tags must have at most 16 items, not 17"},
		{ToolUpdate, `{"PATCHES":[{"section":"Task","op":"replace","content":"x"}]}`, `\"PATCHES\" is not an argument (names are case-sensitive): did you mean patches?`},
		{ToolUpdate, `{"patches":[],"extra":1}`, `unknown argument(s) \"extra\"`},
		{ToolAppend, `{"note":"` + strings.Repeat("n", 4001) + `"}`, "note must be at most 4000 characters, not 4001"},
		{ToolAppend, `{"note":"n","tags":["` + long + `"]}`, "tags item 0 must be at most 64 characters, not 200000"},
		// Inside a patch the schema's answer repeats no value, the
		// pad's own checks bound what they repeat.
		{ToolUpdate, `{"patches":[{"op":"set","key":"` + long + `","value":1}]}`, `"error":"bad_patch","message":"bad patch: key must be at most 128 characters, not 200000","patch":1`},
		{ToolUpdate, `{"patches":[{"section":"Task","op":"` + long + `"}]}`, `unknown op \"` + strings.Repeat("x", 80) + `…\"`},
		{ToolUpdate, `{"patches":[{"op":"snapshot","content":"` + long + `"}]}`, `got \"` + strings.Repeat("x", 80) + `…\"`},
		{ToolUpdate, `{"patches":[{"op":"set","key":"k","value":1,"tags":["` + strings.Repeat("t", 65) + `"]}]}`, `"error":"bad_patch","message":"bad patch: tags item 0 must be at most 64 characters, not 65","patch":1`},
	} {
		d := h.defs[tc.tool]
		text := d.Handler(ctx, json.RawMessage(tc.args)).Text
		if !strings.Contains(text, tc.want) || len(text) > 4000 {
			t.Errorf("%s %.100s: %.400s, want %q", tc.tool, tc.args, text, tc.want)
		}
	}
	if text, _ := h.tool(ctx, ToolRead, map[string]any{}); strings.Contains(text, "\nx\n") {
		t.Errorf("a refused PATCHES changed the pad: %s", text)
	}
	// The ledger's own bound, for callers that skip the schema.
	if _, err := p.AppendBy("alice", "n", []string{strings.Repeat("t", 65)}); err == nil || !strings.Contains(err.Error(), "at most 64 characters") {
		t.Errorf("a 65-character tag: %v", err)
	}
	many := make([]string, 17)
	for i := range many {
		many[i] = string(rune('a' + i))
	}
	if _, err := p.AppendBy("alice", "n", many); err == nil || !strings.Contains(err.Error(), "at most 16 tags") {
		t.Errorf("17 tags: %v", err)
	}
}

// TestStructuredPadCaseVariants: a structured pad takes its state's keys
// directly, so its schema is open, but a case variant of one of its own
// arguments is refused there too.
func TestStructuredPadCaseVariants(t *testing.T) {
	opts := Options{Format: FormatJSON, Schema: fixture(t, "schema.json")}
	p := newPad(t, opts)
	h := newHarness(t, func(context.Context) (*Pad, error) { return p, nil }, opts)
	ctx := WithAuthor(context.Background(), "alice")
	text := h.defs[ToolUpdate].Handler(ctx, json.RawMessage(`{"Patches":[{"op":"set","key":"k","value":1}]}`)).Text
	if !strings.Contains(text, `\"Patches\" is not an argument (names are case-sensitive): did you mean patches?`) {
		t.Errorf("Patches on a structured pad: %s", text)
	}
}
