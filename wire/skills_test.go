package wire

import (
	"encoding/json"
	"testing"
)

// TestDeclaresExtension: an object declares an extension, in either era;
// nothing else does (null was taken for a declaration on two of the three
// routes that each had a rule of their own).
func TestDeclaresExtension(t *testing.T) {
	for raw, want := range map[string]bool{
		`{}`: true, ` {"mimeTypes":["text/html;profile=mcp-app"]}`: true,
		`null`: false, `true`: false, `"yes"`: false, `[]`: false, ``: false,
	} {
		ext := map[string]json.RawMessage{"io.modelcontextprotocol/ui": json.RawMessage(raw)}
		if raw == "" {
			ext = nil
		}
		if got := DeclaresExtension(ext, "io.modelcontextprotocol/ui"); got != want {
			t.Errorf("%q: declared %v, want %v", raw, got, want)
		}
	}
}
