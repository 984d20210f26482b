package tool

import (
	"encoding/json"
	"testing"
)

// TestObject: the empty schema parses as one, for the tools declared
// without Args.
func TestObject(t *testing.T) {
	var s struct {
		Type       string         `json:"type"`
		Properties map[string]any `json:"properties"`
	}
	if err := json.Unmarshal(Object(), &s); err != nil || s.Type != "object" || s.Properties == nil || len(s.Properties) != 0 {
		t.Errorf("Object(): %s (%v)", Object(), err)
	}
}
