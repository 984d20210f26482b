package divert

import (
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/scratchpad-mcp/scratchpad-mcp/tokens"
)

// TestStoredAsAsked: a result the call asked to store is stored whatever
// its size (threshold 1), its pointer says it was asked, and its _meta
// says so; without asking, the same result passes through.
func TestStoredAsAsked(t *testing.T) {
	c := tokens.ForModel("openai", "gpt-4o")
	a := &Agent{Enabled: true, Dir: t.TempDir(), Counter: c}
	opts := Options{Logger: slog.New(slog.DiscardHandler)}
	small := textResult(t, "three small words", nil)
	out, err := Decide(Call{Server: "fs", Tool: "search", Threshold: 1, Asked: true, Result: small}, a, opts)
	if err != nil || !out.Diverted || !out.Pointer.Asked {
		t.Fatalf("asked: diverted %v asked %v, %v", out.Diverted, out.Pointer.Asked, err)
	}
	var res struct {
		Content []struct{ Text string }   `json:"content"`
		Meta    map[string]map[string]any `json:"_meta"`
	}
	if err := json.Unmarshal(out.Result, &res); err != nil {
		t.Fatal(err)
	}
	text := res.Content[0].Text
	if !strings.HasPrefix(text, "Output of fs/search was stored, as the call asked: 3 tokens kept out of your context.\n") ||
		!strings.Contains(text, `{"$scratchpad":{"file":"`+out.Pointer.Stored.Name+`"}}`) {
		t.Errorf("pointer:\n%s", text)
	}
	if res.Meta[MetaKey]["asked"] != true {
		t.Errorf("_meta %v", res.Meta)
	}
	out, err = Decide(Call{Server: "fs", Tool: "search", Threshold: 100, Result: textResult(t, "three small words", nil)}, a, opts)
	if err != nil || out.Diverted {
		t.Fatalf("not asked: diverted %v, %v", out.Diverted, err)
	}
}
