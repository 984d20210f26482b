package wire

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
)

func TestCheckMessage(t *testing.T) {
	const env = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	for _, tc := range []struct {
		name, msg string
		err       error  // nil: passes
		code      int    // when refused
		key       string // named in the message
	}{
		{"plain call", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"Name":"x","name":"y"},` + env + `}}`, nil, 0, ""},
		{"unknown member", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","later":1}}`, nil, 0, ""},
		{"Name beside name", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","Name":"whoami"}}`, ErrKeyCase, CodeInvalidParams, `"Name"`},
		{"NAME alone", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"NAME":"whoami"}}`, ErrKeyCase, CodeInvalidParams, `"NAME"`},
		{"long s", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","argumentſ":{}}}`, ErrKeyCase, CodeInvalidParams, `"argumentſ"`},
		{"escaped key", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","\u004eame":"whoami"}}`, ErrKeyCase, CodeInvalidParams, `"Name"`},
		{"duplicate name", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","name":"whoami"}}`, ErrDuplicateKey, CodeInvalidParams, `"name"`},
		{"duplicate escaped", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","n\u0061me":"whoami"}}`, ErrDuplicateKey, CodeInvalidParams, `"name"`},
		{"duplicate in arguments", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"a":{"b":1,"b":2}}}}`, ErrDuplicateKey, CodeInvalidParams, "params.arguments.a"},
		{"URI", `{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"a://x","URI":"a://y"}}`, ErrKeyCase, CodeInvalidParams, `"URI"`},
		{"prompt Name", `{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"name":"a","Name":"b"}}`, ErrKeyCase, CodeInvalidParams, `"Name"`},
		{"Method", `{"jsonrpc":"2.0","id":1,"method":"tools/list","Method":"tools/call"}`, ErrKeyCase, CodeInvalidRequest, `"Method"`},
		{"paramſ", `{"jsonrpc":"2.0","id":1,"method":"tools/list","paramſ":{}}`, ErrKeyCase, CodeInvalidRequest, `"paramſ"`},
		{"duplicate method", `{"jsonrpc":"2.0","id":1,"method":"tools/list","method":"tools/call"}`, ErrDuplicateKey, CodeInvalidRequest, `"method"`},
		{"meta version case", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"IO.modelcontextprotocol/protocolVersion":"2025-11-25"}}}`, ErrKeyCase, CodeInvalidParams, "params._meta"},
		{"progress token case", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","_meta":{"progressToken":1,"ProgressToken":2}}}`, ErrKeyCase, CodeInvalidParams, `"ProgressToken"`},
		{"caps case", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"Sampling":{}},"clientInfo":{"name":"c","version":"1"}}}`, ErrKeyCase, CodeInvalidParams, "params.capabilities"},
		{"kelvin", `{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"tasKId":"x"}}`, ErrKeyCase, CodeInvalidParams, `"tasKId"`},
		{"batch item", `[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"a","Name":"b"}}]`, ErrKeyCase, CodeInvalidParams, "[1].params"},
		{"response duplicate", `{"jsonrpc":"2.0","id":1,"result":{"action":"accept","action":"decline"}}`, ErrDuplicateKey, CodeInvalidRequest, "result"},
		{"not JSON", `{"jsonrpc":`, nil, 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			werr := CheckMessage([]byte(tc.msg))
			if tc.err == nil {
				if werr != nil {
					t.Fatalf("refused: %v", werr)
				}
				return
			}
			if werr == nil {
				t.Fatal("passed")
			}
			if werr.Code != tc.code || werr.HTTPStatus() != http.StatusBadRequest {
				t.Errorf("code %d status %d, want %d 400", werr.Code, werr.HTTPStatus(), tc.code)
			}
			if !strings.Contains(werr.Message, tc.key) {
				t.Errorf("message %q does not name %s", werr.Message, tc.key)
			}
		})
	}
}

func TestUnmarshalStrict(t *testing.T) {
	var p CallToolParams
	err := Unmarshal([]byte(`{"name":"echo","Name":"whoami"}`), &p)
	if !errors.Is(err, ErrKeyCase) {
		t.Fatalf("err = %v, want ErrKeyCase", err)
	}
	// What encoding/json alone would have run.
	_ = json.Unmarshal([]byte(`{"name":"echo","Name":"whoami"}`), &p)
	if p.Name != "whoami" {
		t.Fatalf("encoding/json took %q: the premise of the check no longer holds", p.Name)
	}
	p = CallToolParams{}
	if err := Unmarshal([]byte(`{"name":"echo","arguments":{"x":1},"_meta":{"progressToken":"t"},"requestState":"s"}`), &p); err != nil {
		t.Fatal(err)
	}
	if p.Name != "echo" || string(p.Arguments) != `{"x":1}` || string(p.Meta[MetaProgressToken]) != `"t"` || string(p.RequestState) != `"s"` {
		t.Fatalf("decoded %+v", p)
	}
	var ip InitializeParams
	if err := Unmarshal([]byte(`{"protocolVersion":"2025-11-25","capabilities":{"roots":{}},"clientInfo":{"name":"c","version":"1"}}`), &ip); err != nil {
		t.Fatal(err)
	}
	if string(ip.Capabilities.RawMessage) != `{"roots":{}}` {
		t.Fatalf("capabilities %s", ip.Capabilities.RawMessage)
	}
	// Many members: the duplicate is found past the linear scan too.
	var b strings.Builder
	b.WriteString(`{`)
	for i := range 40 {
		b.WriteString(`"k` + string(rune('a'+i%26)) + string(rune('a'+i/26)) + `":1,`)
	}
	b.WriteString(`"kaa":2}`)
	if err := Unmarshal([]byte(b.String()), &map[string]int{}); !errors.Is(err, ErrDuplicateKey) {
		t.Fatalf("40 members and a duplicate: %v", err)
	}
}

func FuzzCheckKeysAgreesWithDecoding(f *testing.F) {
	f.Add(`{"name":"echo","arguments":{}}`)
	f.Add(`{"name":"echo","Name":"x"}`)
	f.Add(`{"nAme":"x","argumentſ":{}}`)
	f.Fuzz(func(t *testing.T, s string) {
		var p CallToolParams
		if Unmarshal([]byte(s), &p) != nil {
			return
		}
		// What passed the check decodes to what an exact reader sees:
		// the name is the exact member's.
		var exact map[string]json.RawMessage
		if json.Unmarshal([]byte(s), &exact) != nil {
			return
		}
		var want string
		if raw, ok := exact["name"]; ok {
			if json.Unmarshal(raw, &want) != nil {
				return
			}
		}
		if p.Name != want {
			t.Fatalf("decoded name %q, exact member %q", p.Name, want)
		}
	})
}
