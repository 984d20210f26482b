package upstream

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/scratchpad-mcp/scratchpad-mcp/config"
)

// An upstream that cannot be reached fails with an error naming its URL
// without the password, the query's secrets or a secret path segment, on
// both HTTP transports.
func TestUpstreamErrorsMaskURLSecrets(t *testing.T) {
	for _, tr := range []string{config.TransportHTTPStreamable, config.TransportSSE} {
		u := New(Options{Server: config.Server{Name: "remote", Transport: tr,
			URL:     "http://alice:PASS-1234@127.0.0.1:1/mcp/PATHSECRET123?api_key=SECRET-5678",
			Timeout: 2 * time.Second, RestartMaxAttempts: config.NeverRestart}})
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		u.Start(ctx, nil)
		_, err := u.Call(ctx, "tools/list", nil)
		cancel()
		u.Close()
		if err == nil {
			t.Fatalf("%s: reached a closed port", tr)
		}
		if msg := err.Error(); strings.Contains(msg, "PASS-1234") || strings.Contains(msg, "SECRET-5678") || strings.Contains(msg, "PATHSECRET123") || !strings.Contains(msg, "/mcp/xxxxx") {
			t.Errorf("%s: the error shows a secret: %s", tr, msg)
		}
	}
}

// An upstream's JSON-RPC error is passed on with its message cut at
// MaxErrorBytes and data over it dropped, each noted.
func TestRPCErrorBounded(t *testing.T) {
	small := &RPCError{Code: -32000, Message: "no such pod", Data: json.RawMessage(`{"pod":"x"}`)}
	if small.bounded() != small {
		t.Error("a small error was changed")
	}
	big := &RPCError{Code: -32000, Message: strings.Repeat("é", MaxErrorBytes), Data: json.RawMessage(`"` + strings.Repeat("d", MaxErrorBytes) + `"`)}
	b := big.bounded()
	if len(b.Message) > MaxErrorBytes+200 || !utf8.ValidString(b.Message) || b.Data != nil ||
		!strings.Contains(b.Message, "was 131072 bytes; cut at 65536") || !strings.Contains(b.Message, "its data, 65538 bytes, was dropped") {
		t.Errorf("bounded: %d bytes, data %d, ends %q", len(b.Message), len(b.Data), b.Message[len(b.Message)-120:])
	}
	if len(big.Message) != 2*MaxErrorBytes {
		t.Error("the original was changed")
	}
}
