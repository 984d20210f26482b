package artifacts

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testredis"
	"github.com/scratchpad-mcp/scratchpad-mcp/layout"
	"github.com/scratchpad-mcp/scratchpad-mcp/memdir"
)

// The behaviour of a directory store holds for a Redis store: names,
// replaced, lookups by written or stored name, not-found listings,
// TooLarge, listing with tokens; and a large artifact is copied to the
// cache folder to be explored in place.
func TestRedisStore(t *testing.T) {
	srv := testredis.Start(t)
	c := redis.NewClient(&redis.Options{Addr: srv.Addr, DisableIdentity: true})
	defer c.Close()
	cache := filepath.Join(t.TempDir(), "run-1", layout.ArtifactsDir)
	s, err := OpenRedis(c, "t:{artifacts:run:run-1}", memdir.At(cache))
	if err != nil {
		t.Fatal(err)
	}
	// Another host's handle on the same key.
	other, _ := OpenRedis(c, "t:{artifacts:run:run-1}", memdir.At(filepath.Join(t.TempDir(), "run-1", layout.ArtifactsDir)))
	for _, st := range []struct {
		filename, content string
		want              WriteResult
	}{
		{"../../x.md", "# héllo\n", WriteResult{Written: true, Filename: "coordinator-x.md", Chars: 8}},
		{"x.md", "second", WriteResult{Written: true, Filename: "coordinator-x.md", Replaced: true, Chars: 6}},
		{"big.json", strings.Repeat(`{"a":1}`+"\n", 1000), WriteResult{Written: true, Filename: "coordinator-big.json", Chars: 8000}},
	} {
		got, err := s.Write(st.filename, st.content)
		if err != nil || got != st.want {
			t.Fatalf("Write(%q) = %+v, %v; want %+v", st.filename, got, err, st.want)
		}
	}
	for _, name := range []string{"x.md", "coordinator-x.md", "../../artifacts/coordinator-x.md"} {
		res, err := other.Read(name, 0)
		if err != nil || !res.Found || res.Content != "second" || res.Filename != "coordinator-x.md" {
			t.Errorf("Read(%q) = %+v, %v", name, res, err)
		}
	}
	res, err := other.Read("nope.md", 0)
	if err != nil || res.Found || strings.Join(res.Available, ",") != "coordinator-big.json,coordinator-x.md" {
		t.Errorf("Read(nope) = %+v, %v", res, err)
	}
	if _, err := other.Read("../../../etc/passwd", 0); err == nil {
		t.Error("a path out was accepted")
	}
	res, err = other.Read("big.json", 100)
	if err != nil || !res.Found || !res.TooLarge || res.Size != 8000 || res.Content != "" {
		t.Errorf("Read(big, 100) = %+v, %v", res, err)
	}
	list, err := other.List(func(s string) int { return len(s) })
	if err != nil || len(list) != 2 || list[0].Name != "coordinator-big.json" || list[0].Size != 8000 || list[0].Tokens != 8000 || list[1].Tokens != 6 {
		t.Errorf("List = %+v, %v", list, err)
	}
	if err := other.Local("coordinator-big.json"); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(other.Dir(), "coordinator-big.json"))
	if err != nil || len(data) != 8000 {
		t.Fatalf("local copy: %d bytes, %v", len(data), err)
	}
	// Nothing was written to the writer's own folder.
	if _, err := os.Stat(cache); !os.IsNotExist(err) {
		t.Errorf("the writer's cache folder exists: %v", err)
	}
	if ttl := c.PTTL(t.Context(), "t:{artifacts:run:run-1}").Val(); ttl != -1 {
		t.Errorf("no TTL asked, PTTL %v", ttl)
	}
	s.ExpireAfter(time.Hour)
	if _, err := s.Write("x.md", "third"); err != nil {
		t.Fatal(err)
	}
	if ttl := c.PTTL(t.Context(), "t:{artifacts:run:run-1}").Val(); ttl <= 59*time.Minute || ttl > time.Hour {
		t.Errorf("TTL 1h: PTTL %v", ttl)
	}
	if gone, err := s.Delete(); err != nil || !gone {
		t.Fatalf("Delete = %v, %v", gone, err)
	}
	if n := c.Exists(t.Context(), "t:{artifacts:run:run-1}").Val(); n != 0 {
		t.Error("key remains after Delete")
	}
}
