package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testwait"
)

func TestStdioMalformedMessageIsAnswered(t *testing.T) {
	out := t.TempDir() + "/stdin"
	c, err := startStdio("garbage", []string{"sh", "-c", `echo 'not json'; echo '{"jsonrpc":"2.0"}'; read line; printf '%s\n' "$line" > ` + out + `; exec cat >/dev/null`}, nil, "", handlers{}, quietLogger())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var b []byte
	if !testwait.Until(testwait.Timeout, func() bool { b, _ = os.ReadFile(out); return len(b) > 0 }) {
		t.Fatal("no parse error sent to the upstream")
	}
	var m struct {
		ID    json.RawMessage `json:"id"`
		Error RPCError        `json:"error"`
	}
	if err := json.Unmarshal(b, &m); err != nil || string(m.ID) != "null" || m.Error.Code != -32700 {
		t.Fatalf("want a parse error with a null id, upstream read %s", b)
	}
	select {
	case <-c.Done():
		t.Fatalf("connection died: %v", c.Err())
	default:
	}
}

func TestStdioUpstreamCancelsItsOwnRequest(t *testing.T) {
	dir := t.TempDir()
	script := `printf '%s\n' '{"jsonrpc":"2.0","id":5,"method":"sampling/createMessage","params":{}}'
read started
printf '%s\n' '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":5}}'
timeout 1 head -n 1 > ` + dir + `/answer
touch ` + dir + `/done
exec cat >/dev/null`
	started := make(chan struct{})
	stopped := make(chan error, 1)
	h := handlers{request: func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
		close(started)
		<-ctx.Done()
		stopped <- ctx.Err()
		return json.RawMessage(`{}`), nil
	}}
	c, err := startStdio("canceller", []string{"sh", "-c", script}, nil, "", h, quietLogger())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	select {
	case <-started:
	case <-time.After(10 * time.Second):
		t.Fatal("the upstream's request never reached the handler")
	}
	_ = c.Notify(context.Background(), "notifications/message", map[string]any{"level": "info"}) // lets the script go on
	select {
	case err := <-stopped:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("handler context ended with %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("notifications/cancelled did not cancel the forwarded request")
	}
	if !testwait.Until(testwait.Timeout, func() bool { _, err := os.Stat(dir + "/done"); return err == nil }) {
		t.Fatal("script never finished")
	}
	if b, _ := os.ReadFile(dir + "/answer"); len(bytes.TrimSpace(b)) != 0 {
		t.Errorf("a cancelled request was answered: %s", b)
	}
}
