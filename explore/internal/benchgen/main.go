// Command benchgen writes the explore benchmark inputs:
//
//	benchgen -dir DIR [-mb 100]
//
// creates DIR/listing.json, DIR/pods.json and DIR/app.log of about mb
// megabytes each,
// reusing files already there.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/scratchpad-mcp/scratchpad-mcp/explore/internal/benchdata"
)

func main() {
	dir := flag.String("dir", "", "output directory")
	mb := flag.Int64("mb", 100, "size of each file in MB")
	flag.Parse()
	if *dir == "" {
		fmt.Fprintln(os.Stderr, "benchgen: -dir is required")
		os.Exit(2)
	}
	size := *mb << 20
	if err := benchdata.WriteFile(filepath.Join(*dir, "listing.json"), size, benchdata.Listing); err != nil {
		fmt.Fprintln(os.Stderr, "benchgen:", err)
		os.Exit(1)
	}
	if err := benchdata.WriteFile(filepath.Join(*dir, "pods.json"), size, benchdata.Pods); err != nil {
		fmt.Fprintln(os.Stderr, "benchgen:", err)
		os.Exit(1)
	}
	if err := benchdata.WriteFile(filepath.Join(*dir, "app.log"), size, benchdata.Log); err != nil {
		fmt.Fprintln(os.Stderr, "benchgen:", err)
		os.Exit(1)
	}
}
