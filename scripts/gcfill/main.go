// Command gcfill fills a memory_dir with stored files for scripts/bench-gc.sh:
// -n files spread over the single-agent scratchpad and -runs runs (outputs,
// artifacts, pad history), with modification times spread over -days days.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

func main() {
	dir := flag.String("dir", "", "memory_dir to fill")
	n := flag.Int("n", 100000, "files")
	runs := flag.Int("runs", 200, "runs")
	size := flag.Int("size", 2048, "bytes per file")
	days := flag.Int("days", 60, "ages spread over this many days")
	flag.Parse()
	if *dir == "" {
		fmt.Fprintln(os.Stderr, "gcfill: -dir is required")
		os.Exit(2)
	}
	data := make([]byte, *size)
	for i := range data {
		data[i] = 'a' + byte(i%26)
	}
	now := time.Now()
	made := map[string]bool{}
	for i := range *n {
		var rel string
		switch r := i % (*runs + 1); {
		case r == 0:
			rel = fmt.Sprintf("scratchpad/srv-tool-%08x.json", i)
		case i%5 == 1:
			rel = fmt.Sprintf("run-%04d/artifacts/a-%08x.md", r, i)
		case i%5 == 2:
			rel = fmt.Sprintf("run-%04d/pad/.history/%08x.md", r, i)
		default:
			rel = fmt.Sprintf("run-%04d/iteration-%d/scratchpad/srv-tool-%08x.json", r, i%3, i)
		}
		p := filepath.Join(*dir, rel)
		if d := filepath.Dir(p); !made[d] {
			if err := os.MkdirAll(d, 0o700); err != nil {
				fmt.Fprintln(os.Stderr, "gcfill:", err)
				os.Exit(1)
			}
			made[d] = true
		}
		if err := os.WriteFile(p, data, 0o600); err != nil {
			fmt.Fprintln(os.Stderr, "gcfill:", err)
			os.Exit(1)
		}
		// Runs age as a whole (their newest file decides); outputs each.
		age := time.Duration(i%(*days*24)) * time.Hour
		if r := i % (*runs + 1); r != 0 {
			age = time.Duration(r%*days) * 24 * time.Hour
		}
		mt := now.Add(-age)
		_ = os.Chtimes(p, mt, mt)
	}
}
