// Command benchrun runs a command several times and prints the median wall
// time in milliseconds and the largest peak resident set size in KiB, for
// scripts/bench-explore.sh:
//
//	benchrun -runs 3 -out FILE -- jq '.items | length' pods.json
//	=> 4690 682300
//
// The command's output goes to FILE (not /dev/null: some tools stop early
// when they see it).
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"time"
)

func main() {
	runs := flag.Int("runs", 3, "how many runs")
	out := flag.String("out", os.DevNull, "file receiving the command's output")
	flag.Parse()
	args := flag.Args()
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, "benchrun: no command")
		os.Exit(2)
	}
	var ms []int64
	var peak int64
	for range *runs {
		f, err := os.Create(*out)
		if err != nil {
			fmt.Fprintln(os.Stderr, "benchrun:", err)
			os.Exit(1)
		}
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Stdout, cmd.Stderr = f, f
		start := time.Now()
		err = cmd.Run()
		ms = append(ms, time.Since(start).Milliseconds())
		f.Close()
		if cmd.ProcessState == nil {
			fmt.Fprintln(os.Stderr, "benchrun:", err)
			os.Exit(1)
		}
		if kib, ok := maxRSS(cmd.ProcessState); ok {
			peak = max(peak, kib)
		}
	}
	slices.Sort(ms)
	fmt.Println(ms[(len(ms)-1)/2], peak)
}
