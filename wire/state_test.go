package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
)

// TestSealer lifts input-required-result-tampered-state and the binding rules
// of plan §2.6: each refusal gives its exact reason.
func TestSealer(t *testing.T) {
	old := bytes.Repeat([]byte{1}, 32)
	cur := bytes.Repeat([]byte{2}, 32)
	now := time.Unix(1_800_000_000, 0)
	digest, err := ArgsDigest(json.RawMessage(`{"b":2, "a":[1,2.50]}`))
	if err != nil {
		t.Fatal(err)
	}
	bind := StateBinding{Owner: "alice", Agent: AgentDigest("m/alice/coder"), Method: "tools/call", Name: "deploy", Digest: digest}
	payload := StatePayload{Upstream: "gh", State: "inner", StateBinding: bind, Expires: now.Add(time.Minute).Unix(), Keys: []string{"e"}}

	sOld, _ := NewSealer(old)
	sNew, err := NewSealer(cur, old) // rotated: cur seals, old still opens
	if err != nil {
		t.Fatal(err)
	}
	fresh, err := sNew.Seal(payload)
	if err != nil {
		t.Fatal(err)
	}
	byOld, _ := sOld.Seal(payload)
	foreign, _ := func() (string, error) { s, _ := NewSealer(bytes.Repeat([]byte{3}, 32)); return s.Seal(payload) }()

	flip := func(tok string, i int) string {
		b := []byte(tok)
		if b[i] == 'A' {
			b[i] = 'B'
		} else {
			b[i] = 'A'
		}
		return string(b)
	}
	with := func(edit func(*StateBinding)) StateBinding { b := bind; edit(&b); return b }
	otherArgs, _ := ArgsDigest(json.RawMessage(`{"a":[1,2.5],"b":2}`)) // 2.5 ≠ 2.50 as written

	for _, tc := range []struct {
		name string
		tok  string
		want StateBinding
		now  time.Time
		err  error
	}{
		{"fresh", fresh, bind, now, nil},
		{"previous key still opens", byOld, bind, now, nil},
		{"canonical arguments", fresh, with(func(b *StateBinding) { b.Digest, _ = ArgsDigest(json.RawMessage(`{"a":[1,2.50],"b":2}`)) }), now, nil},
		{"-TAMPERED appended", fresh + "-TAMPERED", bind, now, ErrStateSignature},
		{"payload byte changed", flip(fresh, len(statePrefix)+3), bind, now, ErrStateSignature},
		{"signature byte changed", flip(fresh, len(fresh)-5), bind, now, ErrStateSignature},
		{"foreign key", foreign, bind, now, ErrStateSignature},
		{"empty", "", bind, now, ErrStateMalformed},
		{"not ours", "opaque-upstream-state", bind, now, ErrStateMalformed},
		{"expired", fresh, bind, now.Add(time.Minute), ErrStateExpired},
		{"other owner", fresh, with(func(b *StateBinding) { b.Owner = "bob" }), now, ErrStateOwner},
		{"other agent", fresh, with(func(b *StateBinding) { b.Agent = AgentDigest("m/alice/reviewer") }), now, ErrStateAgent},
		{"other method", fresh, with(func(b *StateBinding) { b.Method = "prompts/get" }), now, ErrStateMethod},
		{"other tool", fresh, with(func(b *StateBinding) { b.Name = "destroy" }), now, ErrStateName},
		{"other arguments", fresh, with(func(b *StateBinding) { b.Digest = otherArgs }), now, ErrStateArgs},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := sNew.Open(tc.tok, tc.want, tc.now)
			if tc.err == nil {
				if err != nil {
					t.Fatalf("Open: %v", err)
				}
				if got.Upstream != "gh" || got.State != "inner" || got.StateBinding != bind || len(got.Keys) != 1 {
					t.Fatalf("payload %+v", got)
				}
				return
			}
			if !errors.Is(err, tc.err) {
				t.Fatalf("Open err %v, want %v", err, tc.err)
			}
			if we := StateError(err); we.Code != CodeInvalidParams || we.Status != 400 || we.Message != "invalid requestState: "+tc.err.Error() {
				t.Fatalf("StateError %+v", we)
			}
		})
	}
	// The old sealer does not know the new key.
	if _, err := sOld.Open(fresh, bind, now); !errors.Is(err, ErrStateSignature) {
		t.Fatalf("old sealer opened a new-key state: %v", err)
	}
}

func TestSealerLimits(t *testing.T) {
	if _, err := NewSealer(); !errors.Is(err, ErrShortKey) {
		t.Error("no key accepted")
	}
	if _, err := NewSealer(make([]byte, 31)); !errors.Is(err, ErrShortKey) {
		t.Error("31-byte key accepted")
	}
	s, _ := NewSealer(make([]byte, 32))
	if _, err := s.Seal(StatePayload{State: strings.Repeat("x", MaxState)}); !errors.Is(err, ErrStateTooBig) {
		t.Errorf("big state: %v", err)
	}
	if _, err := ArgsDigest(json.RawMessage(`{"a":`)); err == nil {
		t.Error("bad arguments digested")
	}
	a, _ := ArgsDigest(nil)
	b, _ := ArgsDigest(json.RawMessage(`null`))
	c, _ := ArgsDigest(json.RawMessage(`{}`))
	if a != b || b != c {
		t.Error("absent, null and {} arguments digest differently")
	}
}
