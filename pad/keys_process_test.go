package pad

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
)

// The test below re-runs this test binary as 4 processes that set and
// delete keys of one pad at once, on a directory and on Redis.
const keysHelperEnv = "PAD_KEYS_HELPER"

func TestKeysHelperProcess(t *testing.T) {
	backend := os.Getenv(keysHelperEnv)
	if backend == "" {
		t.Skip("helper process for TestBackendKeysConcurrentProcesses")
	}
	var p *Pad
	var err error
	if backend == "redis" {
		var r *Redis
		if r, err = NewRedis(RedisOptions{URL: os.Getenv("PAD_REDIS_URL")}); err == nil {
			p, err = r.Open(os.Getenv("PAD_REDIS_ID"), Options{})
		}
	} else {
		p, err = Open(os.Getenv("PAD_DIR"), Options{})
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	workers, _ := strconv.Atoi(os.Getenv("PAD_WORKERS"))
	each, _ := strconv.Atoi(os.Getenv("PAD_EACH"))
	if err := setAndDeleteMany(p, os.Getenv("PAD_PROC"), workers, each); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(0)
}

// setAndDeleteMany: each worker sets proc:w:i for every i and, after an
// odd i, deletes proc:w:i-1; with each even, proc:w:1, proc:w:3, … stay.
func setAndDeleteMany(p *Pad, proc string, workers, each int) error {
	return runWorkers(workers, each, func(w, i int) error {
		ops := []KeyOp{{Op: OpSet, Key: fmt.Sprintf("%s:%d:%d", proc, w, i), Value: json.RawMessage(strconv.Itoa(i))}}
		if i%2 == 1 {
			ops = append(ops, KeyOp{Op: OpDelete, Key: fmt.Sprintf("%s:%d:%d", proc, w, i-1)})
		}
		_, err := p.UpdateKeys(proc, ops)
		return err
	})
}

func TestBackendKeysConcurrentProcesses(t *testing.T) {
	const procs, workers, each = 4, 4, 20
	for _, backend := range []string{"file", "redis"} {
		t.Run(backend, func(t *testing.T) {
			var p *Pad
			env := []string{keysHelperEnv + "=" + backend, "PAD_WORKERS=" + strconv.Itoa(workers), "PAD_EACH=" + strconv.Itoa(each)}
			if backend == "redis" {
				renv := newRedisEnv(t)
				env = append(env, "PAD_REDIS_URL="+renv.srv.URL(), "PAD_REDIS_ID=run:keys")
				var err error
				if p, err = renv.conn(t, RedisOptions{}).Open("run:keys", Options{}); err != nil {
					t.Fatal(err)
				}
			} else {
				dir := filepath.Join(t.TempDir(), "pad")
				env = append(env, "PAD_DIR="+dir)
				var err error
				if p, err = Open(dir, Options{}); err != nil {
					t.Fatal(err)
				}
			}
			var cmds []*exec.Cmd
			for i := 0; i < procs; i++ {
				cmd := exec.Command(os.Args[0], "-test.run=^TestKeysHelperProcess$", "-test.count=1")
				cmd.Env = append(append(os.Environ(), env...), "PAD_PROC=p"+strconv.Itoa(i))
				cmd.Stderr = os.Stderr
				cmds = append(cmds, cmd)
			}
			runHelpers(t, cmds)
			keys, err := p.Keys(KeyFilter{}, false)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]bool{}
			for _, k := range keys {
				got[k.Name] = true
			}
			for i := 0; i < procs; i++ {
				for w := 0; w < workers; w++ {
					for n := 0; n < each; n++ {
						name := fmt.Sprintf("p%d:%d:%d", i, w, n)
						if want := n%2 == 1; got[name] != want {
							t.Errorf("%s: present %v, want %v", name, got[name], want)
						}
					}
				}
			}
			if len(keys) != procs*workers*each/2 {
				t.Fatalf("%d keys, want %d", len(keys), procs*workers*each/2)
			}
			data, _, _ := p.keyStore().readKeys()
			ks, err := decodeKeySet(data)
			if err != nil || ks.Rev != procs*workers*each {
				t.Fatalf("rev %d after %d changes (%v)", ks.Rev, procs*workers*each, err)
			}
		})
	}
}
