package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testwait"
	"github.com/scratchpad-mcp/scratchpad-mcp/tokens"
)

// The budget carries the tool listing the client was really given (issue
// 38, item 1): through the binary over stdio, with raw JSON-RPC so the
// bytes counted are the bytes sent, the agent starts carrying the
// tools/list result (own tools and the upstream's 35) plus the
// instructions, and a relisting after the upstream adds a tool carries
// the difference. Before, it carried the own tools only, whatever the
// upstreams listed: ~3,300 tokens too generous with 37 tools.
func TestBudgetCarriesTheListing(t *testing.T) {
	cfg, _ := writeConfig(t, "")
	cmd := exec.Command(binary(t), "serve", "--config", cfg, "--log-level", "debug")
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stdin.Close(); _ = cmd.Wait() })
	log := &serverLog{}
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			log.add(sc.Text())
		}
	}()
	answers := make(chan json.RawMessage, 16)
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			var m struct {
				ID     json.RawMessage `json:"id"`
				Result json.RawMessage `json:"result"`
			}
			if json.Unmarshal(sc.Bytes(), &m) == nil && m.ID != nil {
				answers <- m.Result
			}
		}
		close(answers)
	}()
	id := 0
	ask := func(method, params string) json.RawMessage {
		t.Helper()
		id++
		if _, err := fmt.Fprintf(stdin, `{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`+"\n", id, method, params); err != nil {
			t.Fatal(err)
		}
		select {
		case res, ok := <-answers:
			if !ok || res == nil {
				t.Fatalf("%s: no result; log:\n%s", method, log.tail(20))
			}
			return res
		case <-time.After(testwait.Timeout):
			t.Fatalf("%s: no answer", method)
		}
		return nil
	}
	notify := func(method string) {
		if _, err := fmt.Fprintf(stdin, `{"jsonrpc":"2.0","method":%q}`+"\n", method); err != nil {
			t.Fatal(err)
		}
	}
	init := ask("initialize", `{"protocolVersion":"`+protocolVersion+`","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}`)
	notify("notifications/initialized")
	var ir struct{ Instructions string }
	if err := json.Unmarshal(init, &ir); err != nil || ir.Instructions == "" {
		t.Fatalf("initialize: %v %s", err, init)
	}
	gpt4o := tokens.ForModel("", "gpt-4o")
	listing := ask("tools/list", `{}`)
	if !strings.Contains(string(listing), `"name":"listing"`) {
		t.Fatalf("the upstream's tools are not in the first listing: %.300s", listing)
	}
	want := gpt4o.Count(listing) + gpt4o.CountString(ir.Instructions)
	ask("tools/call", `{"name":"echo","arguments":{"text":"hi"}}`) // the agent starts here
	started := regexp.MustCompile(`msg="agent started".* carried=(\d+)`)
	line := log.wait(t, testwait.Timeout, started.MatchString)
	if line == "" {
		t.Fatalf("no agent started; log:\n%s", log.tail(20))
	}
	if got, _ := strconv.Atoi(started.FindStringSubmatch(line)[1]); got != want {
		t.Fatalf("the agent carries %d tokens, want %d: the listing it got (%d) and the instructions (%d)", got, want, gpt4o.Count(listing), gpt4o.CountString(ir.Instructions))
	}

	// The upstream adds a tool: the client is told, lists again, and
	// the agent carries the longer listing.
	ask("tools/call", `{"name":"add_tool","arguments":{"name":"fresh_tool_with_a_long_name"}}`)
	var relisted json.RawMessage
	if !testwait.Until(testwait.Timeout, func() bool {
		relisted = ask("tools/list", `{}`)
		return strings.Contains(string(relisted), "fresh_tool_with_a_long_name")
	}) {
		t.Fatal("the added tool was never listed")
	}
	added := regexp.MustCompile(`msg="agent carries a longer tool listing".* added=(\d+)`)
	line = log.wait(t, testwait.Timeout, added.MatchString)
	if line == "" {
		t.Fatalf("the relisting was not carried; log:\n%s", log.tail(20))
	}
	if got, d := added.FindStringSubmatch(line)[1], gpt4o.Count(relisted)-gpt4o.Count(listing); got != strconv.Itoa(d) {
		t.Fatalf("the relisting added %s tokens, want %d", got, d)
	}
}
