package wire

import (
	"encoding/json"
	"errors"
	"testing"
)

func TestParseResultType(t *testing.T) {
	for in, want := range map[string]string{
		`{"content":[]}`:                     ResultComplete,
		`{"resultType":"complete"}`:          ResultComplete,
		`{"resultType":"input_required"}`:    ResultInputRequired,
		`{"resultType":"task","taskId":"1"}`: ResultTask,
		`not json`:                           ResultComplete,
	} {
		if got := ParseResultType([]byte(in)); got != want {
			t.Errorf("ParseResultType(%s) = %q, want %q", in, got, want)
		}
	}
}

// TestParseInputRequired lifts input-required-result-basic-*, -request-state,
// -multiple-input-requests: go-sdk's shape, "content":null on tools/call
// included.
func TestParseInputRequired(t *testing.T) {
	ok := `{"resultType":"input_required","content":null,"inputRequests":{
		"e":{"method":"elicitation/create","params":{"message":"sure?","requestedSchema":{"type":"object"}}},
		"s":{"method":"sampling/createMessage","params":{"messages":[],"maxTokens":5}},
		"r":{"method":"roots/list"}},"requestState":"opaque"}`
	ir, err := ParseInputRequired([]byte(ok))
	if err != nil {
		t.Fatal(err)
	}
	if len(ir.Requests) != 3 || ir.State != "opaque" {
		t.Fatalf("%+v", ir)
	}
	if ir, err := ParseInputRequired([]byte(`{"resultType":"input_required","requestState":"only"}`)); err != nil || ir.State != "only" {
		t.Fatalf("state only: %+v %v", ir, err)
	}
	for name, in := range map[string]string{
		"complete":       `{"resultType":"complete","inputRequests":{"e":{"method":"roots/list"}}}`,
		"neither":        `{"resultType":"input_required"}`,
		"empty requests": `{"resultType":"input_required","inputRequests":{}}`,
		"no method":      `{"resultType":"input_required","inputRequests":{"e":{"params":{}}}}`,
		"not object":     `{"resultType":"input_required","inputRequests":{"e":"roots/list"}}`,
		"state number":   `{"resultType":"input_required","requestState":7}`,
	} {
		if _, err := ParseInputRequired([]byte(in)); !errors.Is(err, ErrNotInputRequired) {
			t.Errorf("%s: err %v, want ErrNotInputRequired", name, err)
		}
	}
}

func TestEncodeInputRequired(t *testing.T) {
	in := InputRequired{Requests: map[string]json.RawMessage{"elicit-1": json.RawMessage(`{"method":"elicitation/create","params":{"message":"m"}}`)}, State: "sp1.x.y"}
	b, err := EncodeInputRequired(in)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"resultType":"input_required","inputRequests":{"elicit-1":{"method":"elicitation/create","params":{"message":"m"}}},"requestState":"sp1.x.y"}`
	if string(b) != want {
		t.Fatalf("got %s", b)
	}
	back, err := ParseInputRequired(b)
	if err != nil || back.State != in.State || string(back.Requests["elicit-1"]) != string(in.Requests["elicit-1"]) {
		t.Fatalf("round trip %+v %v", back, err)
	}
	if _, err := EncodeInputRequired(InputRequired{}); !errors.Is(err, ErrNotInputRequired) {
		t.Fatalf("empty: %v", err)
	}
}

// TestParseRetry lifts input-required-result-validate-input and
// -ignore-extra-params: bad structure is -32602 (400); extra keys are the
// caller's to ignore.
func TestParseRetry(t *testing.T) {
	r, err := ParseRetry(json.RawMessage(`{"name":"t","inputResponses":{"e":{"action":"accept","content":{}},"extra":{}},"requestState":"s"}`))
	if err != nil || len(r.Responses) != 2 || r.State != "s" || !r.IsRetry() {
		t.Fatalf("%+v %v", r, err)
	}
	r, err = ParseRetry(json.RawMessage(`{"name":"t","inputResponses":{}}`))
	if err != nil || r.Responses == nil || !r.IsRetry() {
		t.Fatalf("empty responses are a retry: %+v %v", r, err)
	}
	if r, err := ParseRetry(json.RawMessage(`{"name":"t"}`)); err != nil || r.IsRetry() {
		t.Fatalf("first call: %+v %v", r, err)
	}
	for name, p := range map[string]string{
		"responses null":      `{"inputResponses":null}`,
		"responses array":     `{"inputResponses":[]}`,
		"responses string":    `{"inputResponses":"x"}`,
		"response not object": `{"inputResponses":{"e":"accept"}}`,
		"response null":       `{"inputResponses":{"e":null}}`,
		"state not string":    `{"requestState":{}}`,
	} {
		if _, err := ParseRetry(json.RawMessage(p)); err == nil || err.Code != CodeInvalidParams || err.Status != 400 {
			t.Errorf("%s: %+v, want -32602/400", name, err)
		}
	}
}
