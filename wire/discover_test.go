package wire

import (
	"encoding/json"
	"errors"
	"testing"
)

func TestDiscover(t *testing.T) {
	raw, err := EncodeDiscover(Discover{SupportedVersions: Served(), Capabilities: json.RawMessage(`{"tools":{"listChanged":true},"prompts":{}}`), Instructions: "hi"})
	if err != nil {
		t.Fatal(err)
	}
	raw, err = Stamp(raw, Stamping{ResultType: ResultComplete, ServerInfo: json.RawMessage(ours), Cache: &Cache{Scope: ScopePublic}})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"supportedVersions":["2026-07-28","2025-11-25","2025-06-18","2025-03-26","2024-11-05"],"capabilities":{"tools":{"listChanged":true},"prompts":{}},"instructions":"hi","resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":` + ours + `},"ttlMs":0,"cacheScope":"public"}`
	if string(raw) != want {
		t.Fatalf("discover\n%s\nwant\n%s", raw, want)
	}
	d, err := ParseDiscover(raw)
	if err != nil || !d.Speaks20260728() || string(d.ServerInfo) != ours || d.Instructions != "hi" {
		t.Fatalf("%+v %v", d, err)
	}
	if d, _ := ParseDiscover([]byte(`{"supportedVersions":["2025-11-25"],"capabilities":{}}`)); d.Speaks20260728() {
		t.Fatal("2025-only upstream speaks modern")
	}
	for _, bad := range []string{`{"capabilities":{}}`, `{"supportedVersions":[]}`, `{"supportedVersions":[1],"capabilities":{}}`, `[]`} {
		if _, err := ParseDiscover([]byte(bad)); !errors.Is(err, ErrNotDiscover) {
			t.Errorf("ParseDiscover(%s) err %v", bad, err)
		}
	}
	if _, err := EncodeDiscover(Discover{Capabilities: json.RawMessage(`[]`)}); !errors.Is(err, ErrNotDiscover) {
		t.Errorf("capabilities [] encoded: %v", err)
	}
}
