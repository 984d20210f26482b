package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/redis/go-redis/v9"

	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testredis"
	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testsecrets"
)

// No credential an upstream returns, or the model writes, is kept
// anywhere the proxy writes with replicas on (issue 37): with [cluster]
// and the pad on the same Redis, a passed-through result and a diverted
// one holding a credential of every default kind, a head over the stored
// output, a ledger note and a pad section holding more; afterwards no key
// of the Redis (every type read whole) and no file under memory_dir holds
// one, and what the model read showed none.
func TestNoSecretKeptOnRedis(t *testing.T) {
	srv := testredis.Start(t)
	cfg, mem := writeConfig(t, "\"echo\" = 500\n"+clusterConfig(srv.URL())+
		fmt.Sprintf("\n[pad]\nscope = \"run\"\nbackend = \"redis\"\nredis_url = %q\n", srv.URL()))
	base := startHTTP(t, "http", cfg)
	c := connectWith(t, &mcp.StreamableClientTransport{Endpoint: base + "/mcp", DisableStandaloneSSE: true}, nil, protocolVersion)
	defer c.Close()
	waitForTool(t, c, "echo")

	r := rand.New(rand.NewPCG(3, 7))
	var secrets []testsecrets.Planted
	var small, big strings.Builder
	for _, k := range testsecrets.Kinds {
		p := testsecrets.Plant(r, k)
		secrets = append(secrets, p)
		fmt.Fprintf(&small, "%s\n", p.Text)
	}
	for i := range 1500 {
		fmt.Fprintf(&big, "line %d ok status=200\n", i)
		if i%100 == 50 {
			p := testsecrets.Plant(r, testsecrets.Kinds[i/100%len(testsecrets.Kinds)])
			secrets = append(secrets, p)
			fmt.Fprintf(&big, "line %d leaked %s\n", i, p.Text)
		}
	}
	leaked := func(s string) (out []string) {
		for _, p := range secrets {
			if strings.Contains(s, p.Secret) {
				out = append(out, p.Kind)
			}
		}
		return out
	}
	seen := callTool(t, c, "echo", map[string]any{"text": small.String()})
	pointer := callTool(t, c, "echo", map[string]any{"text": big.String()})
	file := storedName.FindString(pointer)
	if file == "" || !strings.Contains(pointer, "masked before it was stored") {
		t.Fatalf("the big echo was not diverted with its secrets masked: %.400s", pointer)
	}
	seen += pointer + callTool(t, c, "head", map[string]any{"file": file, "lines": 2000})
	seen += callTool(t, c, "append_scratchpad", map[string]any{"note": "found " + secrets[0].Text})
	seen += callTool(t, c, "update_scratchpad", map[string]any{"patches": []map[string]any{{"section": "Task", "op": "replace", "content": "use " + secrets[5].Text}}})
	seen += callTool(t, c, "read_scratchpad", nil)
	if l := leaked(seen); len(l) > 0 {
		t.Errorf("the model was shown %d secrets: %v", len(l), l)
	}
	if !strings.Contains(seen, "[REDACTED:") {
		t.Errorf("no mask in what the model read:\n%s", short(seen))
	}

	rc := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer rc.Close()
	ctx := context.Background()
	keys, err := rc.Keys(ctx, "*").Result()
	if err != nil || len(keys) == 0 {
		t.Fatalf("keys: %v %v", keys, err)
	}
	var values strings.Builder
	for _, k := range keys {
		switch rc.Type(ctx, k).Val() {
		case "string":
			values.WriteString(rc.Get(ctx, k).Val())
		case "hash":
			for f, v := range rc.HGetAll(ctx, k).Val() {
				values.WriteString(f + v)
			}
		case "list":
			values.WriteString(strings.Join(rc.LRange(ctx, k, 0, -1).Val(), ""))
		case "set":
			values.WriteString(strings.Join(rc.SMembers(ctx, k).Val(), ""))
		case "zset":
			values.WriteString(strings.Join(rc.ZRange(ctx, k, 0, -1).Val(), ""))
		case "stream":
			for _, m := range rc.XRange(ctx, k, "-", "+").Val() {
				values.WriteString(fmt.Sprint(m.Values))
			}
		}
	}
	if l := leaked(values.String()); len(l) > 0 {
		t.Errorf("Redis (%d keys) holds %d secrets: %v", len(keys), len(l), l)
	}
	if !strings.Contains(values.String(), "[REDACTED:") {
		t.Errorf("Redis holds no mask (%d keys): the stored output and the pad are not there?", len(keys))
	}
	_ = filepath.WalkDir(mem, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			b, _ := os.ReadFile(p)
			if l := leaked(string(b)); len(l) > 0 {
				t.Errorf("%s holds %d secrets: %v", p, len(l), l)
			}
		}
		return nil
	})
}
