// Command benchgen writes the explore benchmark inputs:
//
//	benchgen -dir DIR [-mb 100] [-files listing,pods,log,tree]
//
// creates DIR/listing.json, DIR/pods.json, DIR/app.log and DIR/tree.json
// (those -files names) of about mb megabytes each, reusing files already
// there.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/scratchpad-mcp/scratchpad-mcp/explore/internal/benchdata"
)

func main() {
	dir := flag.String("dir", "", "output directory")
	mb := flag.Int64("mb", 100, "size of each file in MB")
	files := flag.String("files", "listing,pods,log,tree", "which inputs, comma-separated")
	flag.Parse()
	if *dir == "" {
		fmt.Fprintln(os.Stderr, "benchgen: -dir is required")
		os.Exit(2)
	}
	size := *mb << 20
	all := map[string]struct {
		file string
		gen  func(io.Writer, int64) (int, error)
	}{
		"listing": {"listing.json", benchdata.Listing},
		"pods":    {"pods.json", benchdata.Pods},
		"log":     {"app.log", benchdata.Log},
		"tree":    {"tree.json", benchdata.Tree},
	}
	for _, name := range strings.Split(*files, ",") {
		g, ok := all[name]
		if !ok {
			fmt.Fprintf(os.Stderr, "benchgen: no input %q (listing, pods, log, tree)\n", name)
			os.Exit(2)
		}
		if err := benchdata.WriteFile(filepath.Join(*dir, g.file), size, g.gen); err != nil {
			fmt.Fprintln(os.Stderr, "benchgen:", err)
			os.Exit(1)
		}
	}
}
