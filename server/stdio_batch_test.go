package server_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

// A stdio batch line is answered with one array, a forwarded result
// (written as the upstream's bytes) in it like any other answer, each
// under its id as sent. (The raw result used to leave the batch: its
// answer came alone and the others never.)
func TestStdioBatchWithForwardedCall(t *testing.T) {
	e := startEnv(t, stdioUpstream("up", nil))
	from, to := e.stdioPipes(t)
	lines := make(chan string, 10)
	go func() {
		sc := bufio.NewScanner(from)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			if !strings.Contains(sc.Text(), `"method"`) {
				lines <- sc.Text()
			}
		}
	}()
	next := func() string {
		t.Helper()
		select {
		case l := <-lines:
			return l
		case <-time.After(20 * time.Second):
			t.Fatal("no answer")
			return ""
		}
	}
	fmt.Fprintln(to, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	next()
	fmt.Fprintln(to, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	fmt.Fprintln(to, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	if got := next(); !strings.Contains(got, `"name":"echo"`) {
		t.Fatalf("tools/list: %.300s", got)
	}
	fmt.Fprintln(to, `[{"jsonrpc":"2.0","id":"c","method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}},{"jsonrpc":"2.0","method":"notifications/roots/list_changed"},{"jsonrpc":"2.0","id":1.5,"method":"ping"}]`)
	got := next()
	var answers []struct {
		ID     json.RawMessage
		Result json.RawMessage
	}
	if err := json.Unmarshal([]byte(got), &answers); err != nil || len(answers) != 2 {
		t.Fatalf("the batch was answered %.300s, want an array of two", got)
	}
	ids := map[string]string{}
	for _, a := range answers {
		ids[string(a.ID)] = string(a.Result)
	}
	if !strings.Contains(ids[`"c"`], `"text":"hi"`) || ids[`1.5`] != `{}` {
		t.Errorf("the batch was answered %s", got)
	}
}
