package artifacts

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testredis"
	"github.com/scratchpad-mcp/scratchpad-mcp/layout"
	"github.com/scratchpad-mcp/scratchpad-mcp/memdir"
)

// A run's folder or its artifacts/ planted as a link leading out of
// memory_dir: writes, reads, listings and the Redis cache's copies are
// refused with a message for the model, and nothing outside is written,
// read or removed.
func TestArtifactsConfinedToMemoryDir(t *testing.T) {
	srv := testredis.Start(t)
	c := redis.NewClient(&redis.Options{Addr: srv.Addr, DisableIdentity: true})
	defer c.Close()
	for _, backend := range []string{"file", "redis"} {
		for _, link := range []string{"run-1/" + layout.ArtifactsDir, "run-1"} {
			t.Run(backend+"/"+link, func(t *testing.T) {
				mem := filepath.Join(t.TempDir(), "mem")
				outside := t.TempDir()
				victim := filepath.Join(outside, "coordinator-x.md")
				if err := os.WriteFile(victim, []byte("not memory_dir's"), 0o600); err != nil {
					t.Fatal(err)
				}
				if link == "run-1" {
					// The run's folder: the victim is in its artifacts.
					os.Mkdir(filepath.Join(outside, layout.ArtifactsDir), 0o700)
					victim = filepath.Join(outside, layout.ArtifactsDir, "coordinator-x.md")
					os.WriteFile(victim, []byte("not memory_dir's"), 0o600)
				}
				at := filepath.Join(mem, filepath.FromSlash(link))
				os.MkdirAll(filepath.Dir(at), 0o700)
				if err := os.Symlink(outside, at); err != nil {
					t.Skipf("symbolic links: %v", err)
				}
				d, err := memdir.In(mem, layout.For(mem, "").Artifacts("run-1"))
				if err != nil {
					t.Fatal(err)
				}
				var s *Store
				if backend == "file" {
					s, err = Open(d)
				} else {
					s, err = OpenRedis(c, "t:{artifacts:"+link+"}", d)
				}
				if err != nil {
					t.Fatal(err)
				}
				res, err := s.Write("x.md", "# new plan")
				if backend == "file" && (!errors.Is(err, memdir.ErrOutside) || res.Written || !strings.Contains(res.Error, "outside memory_dir")) {
					t.Errorf("Write through the link: %+v, %v", res, err)
				}
				if strings.Contains(res.Error, outside) {
					t.Errorf("the answer names the link's target: %s", res.Error)
				}
				got, err := s.Read("x.md", 0)
				if backend == "file" && (!errors.Is(err, ErrOutsideArtifacts) || got.Found) {
					t.Errorf("Read through the link: %+v, %v", got, err)
				}
				if backend == "file" {
					if entries, err := s.List(nil); !errors.Is(err, ErrOutsideArtifacts) || len(entries) > 0 {
						t.Errorf("List through the link: %v, %v", entries, err)
					}
				} else if err := s.Local("coordinator-x.md"); !errors.Is(err, memdir.ErrOutside) {
					t.Errorf("Local through the link: %v", err)
				}
				if data, err := os.ReadFile(victim); err != nil || string(data) != "not memory_dir's" {
					t.Errorf("the file outside is now %q, %v", data, err)
				}
			})
		}
	}
}

// A link at an artifact's name is replaced by a write, never written
// through, and a read refuses it.
func TestArtifactNameLink(t *testing.T) {
	s, runDir := newStore(t)
	victim := filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(victim, []byte("outside"), 0o600); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(runDir, layout.ArtifactsDir)
	os.MkdirAll(dir, 0o700)
	if err := os.Symlink(victim, filepath.Join(dir, "coordinator-x.md")); err != nil {
		t.Skipf("symbolic links: %v", err)
	}
	if got, err := s.Read("x.md", 0); !errors.Is(err, ErrOutsideArtifacts) {
		t.Errorf("Read through a name's link: %+v, %v", got, err)
	}
	if res, err := s.Write("x.md", "mine"); err != nil || !res.Replaced {
		t.Fatalf("Write over a name's link: %+v, %v", res, err)
	}
	if data, _ := os.ReadFile(victim); string(data) != "outside" {
		t.Errorf("written through the link: %q", data)
	}
	if got, err := s.Read("x.md", 0); err != nil || got.Content != "mine" {
		t.Errorf("Read after: %+v, %v", got, err)
	}
}
