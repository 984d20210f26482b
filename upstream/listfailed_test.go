package upstream

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
)

// TestListFailedLevel (issue 58): a server without the listing method
// (-32601, e.g. resources but no templates) is normal and logged at INFO;
// any other failure is a warning.
func TestListFailedLevel(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"method not found", fmt.Errorf("resources/templates/list: %w", &RPCError{Code: -32601, Message: "Method not found"}), "level=INFO"},
		{"other rpc error", fmt.Errorf("prompts/list: %w", &RPCError{Code: -32603, Message: "boom"}), "level=WARN"},
		{"not an rpc error", errors.New("connection reset"), "level=WARN"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			listFailed(slog.New(slog.NewTextHandler(&b, nil)), "listing failed", tt.err)
			if !strings.Contains(b.String(), tt.want) {
				t.Errorf("logged %q, want %s", b.String(), tt.want)
			}
		})
	}
}
