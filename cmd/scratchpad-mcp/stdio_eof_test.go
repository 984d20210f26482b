package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testwait"
)

// `serve < requests.jsonl`, the first smoke test anyone writes: every
// request read before the end of input is answered, in both eras, and
// the process then exits 0 on its own.
func TestStdioEndOfInputAnswersEveryRequest(t *testing.T) {
	modern := func(id int, method, params string) string {
		return `{"jsonrpc":"2.0","id":` + strconv.Itoa(id) + `,"method":"` + method + `","params":{` + params + modernEnvelopeComma(params) + `}}`
	}
	for _, tc := range []struct {
		era   string
		lines []string
		ids   []string
	}{
		{"2025-11-25", []string{
			`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
			`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
			`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
			`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}`,
			`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"slow","arguments":{"steps":5,"ms":100}}}`,
		}, []string{`"id":1`, `"id":2`, `"id":3`, `"id":4`}},
		{"2026-07-28", []string{
			modern(1, "server/discover", ""),
			modern(2, "tools/list", ""),
			modern(3, "tools/call", `"name":"echo","arguments":{"text":"hi"}`),
			modern(4, "tools/call", `"name":"slow","arguments":{"steps":5,"ms":100}`),
		}, []string{`"id":1`, `"id":2`, `"id":3`, `"id":4`}},
	} {
		t.Run(tc.era, func(t *testing.T) {
			cfg, _ := writeConfig(t, "")
			ctx, cancel := context.WithTimeout(context.Background(), testwait.Timeout)
			defer cancel()
			cmd := exec.CommandContext(ctx, binary(t), "serve", "--config", cfg, "--log-level", "error")
			cmd.Stdin = strings.NewReader(strings.Join(tc.lines, "\n") + "\n")
			var out, errOut bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &errOut
			start := time.Now()
			err := cmd.Run()
			t.Logf("exited after %v: %v", time.Since(start), err)
			if err != nil {
				t.Fatalf("serve: %v\n%s", err, errOut.String())
			}
			answers := map[string]string{}
			for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
				for _, id := range tc.ids {
					if strings.Contains(line, id+",") && !strings.Contains(line, `"method"`) {
						answers[id] = line
					}
				}
			}
			for _, id := range tc.ids {
				a, ok := answers[id]
				if !ok || !strings.Contains(a, `"result"`) {
					t.Errorf("request %s: answered %q", id, a)
				}
			}
			if !strings.Contains(answers[`"id":3`], `"hi"`) {
				t.Errorf("echo: %s", answers[`"id":3`])
			}
		})
	}
}

// Over stdio no list change is told before the client said it is
// initialized: neither before initialize's answer nor between it and
// notifications/initialized (the upstreams registered while the
// initialize is answered told the client up to 7 times before).
func TestStdioNothingBeforeInitialized(t *testing.T) {
	for range 3 {
		cfg, _ := writeConfig(t, "")
		in, lines := serveLines(t, cfg)
		fmt.Fprintln(in, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
		var before []string
		for l := range lines {
			if strings.Contains(l, `"id":1`) {
				break
			}
			before = append(before, l)
		}
		// What the registrations would send comes within go-sdk's
		// notification delay (10 ms): give it well over that.
		time.Sleep(500 * time.Millisecond)
		in.Close()
		var after []string
		for l := range lines {
			after = append(after, l)
		}
		if len(before) > 0 || len(after) > 0 {
			t.Fatalf("before initialize's answer: %q; after it, before initialized: %q", before, after)
		}
	}
}

// modernEnvelopeComma is the 2026-07-28 envelope as params members,
// after a comma when params has members.
func modernEnvelopeComma(params string) string {
	env := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	if params == "" {
		return env
	}
	return "," + env
}

// serveLines starts `serve --config cfg` over stdio for a raw client:
// its input, and every line it writes, in order (closed at its end).
func serveLines(t *testing.T, cfg string) (io.WriteCloser, <-chan string) {
	t.Helper()
	cmd := exec.Command(binary(t), "serve", "--config", cfg, "--log-level", "error")
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { in.Close(); _ = cmd.Wait() })
	lines := make(chan string, 256)
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	return in, lines
}
