// Package benchdata generates the big, deterministic inputs the explore
// benchmarks and scripts/bench-explore.sh measure on: a pretty-printed JSON
// listing (the shape intercepted search/list results have once stored) and
// a service log. They are generated, never committed.
package benchdata

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/scratchpad-mcp/scratchpad-mcp/memdir"
)

// Listing writes a pretty-printed JSON object {"total_count": N,
// "results": [...]} of at least size bytes and returns the item count.
func Listing(w io.Writer, size int64) (int, error) {
	bw := bufio.NewWriterSize(w, 1<<20)
	cw := &countWriter{w: bw}
	fmt.Fprintf(cw, "{\n  \"query\": \"error handling\",\n  \"results\": [\n")
	n := 0
	for ; cw.n < size; n++ {
		if n > 0 {
			fmt.Fprint(cw, ",\n")
		}
		tag := [...]string{"go", "json", "mcp", "cli", "perf"}[n%5]
		fmt.Fprintf(cw, `    {
      "id": %d,
      "title": "Result %d: handling errors in module %d",
      "url": "https://example.com/repo/%d/blob/main/file_%d.go",
      "score": %d.%03d,
      "tags": [
        "%s",
        "tag%d"
      ],
      "metadata": {
        "name": "item-%d",
        "size": %d,
        "author": {
          "login": "user%d",
          "site_admin": %t
        }
      },
      "body": "line one of result %d\nline two mentions timeout=%dms\nline three"
    }`, n, n, n%977, n%10007, n, n%100, n%1000, tag, n%50, n, n*37%100000, n%1000, n%97 == 0, n, n%5000)
	}
	fmt.Fprintf(cw, "\n  ],\n  \"total_count\": %d\n}\n", n)
	if cw.err != nil {
		return 0, cw.err
	}
	return n, bw.Flush()
}

// Pods writes a pretty-printed Kubernetes-style pod listing {"apiVersion":
// "v1", "kind": "PodList", "items": [...]} of at least size bytes and
// returns the item count (~190,000 for 100 MB). One pod in five is Failed,
// spread over 40 namespaces and 12 images.
func Pods(w io.Writer, size int64) (int, error) {
	bw := bufio.NewWriterSize(w, 1<<20)
	cw := &countWriter{w: bw}
	fmt.Fprintf(cw, "{\n  \"apiVersion\": \"v1\",\n  \"kind\": \"PodList\",\n  \"items\": [\n")
	n := 0
	for ; cw.n < size; n++ {
		if n > 0 {
			fmt.Fprint(cw, ",\n")
		}
		h := uint32(n) * 2654435761
		phase := "Running"
		switch r := h % 100; {
		case r < 20:
			phase = "Failed"
		case r < 27:
			phase = "Pending"
		case r < 30:
			phase = "Succeeded"
		}
		img := [...]string{"nginx:1.25", "redis:7.2", "postgres:16", "busybox:1.36", "ghcr.io/acme/api:2.1.0", "ghcr.io/acme/web:3.4.1",
			"envoyproxy/envoy:v1.29", "grafana/agent:0.40", "quay.io/prometheus/node-exporter:1.7", "memcached:1.6", "rabbitmq:3.13", "python:3.12-slim"}[(h>>8)%12]
		fmt.Fprintf(cw, `    {
      "metadata": {
        "name": "pod-%d",
        "namespace": "ns-%d",
        "uid": "%08x-%04x-4%03x",
        "labels": {
          "app": "app-%d",
          "tier": "%s"
        },
        "creationTimestamp": "2026-11-%02dT%02d:%02d:%02dZ"
      },
      "spec": {
        "nodeName": "node-%d",
        "containers": [
          {
            "name": "main",
            "image": "%s"
          }
        ]
      },
      "status": {
        "phase": "%s",
        "restartCount": %d,
        "podIP": "10.%d.%d.%d"
      }
    }`, n, (h>>4)%40, h, n%65536, n%4096, n%500, [...]string{"frontend", "backend", "cache"}[n%3],
			1+n%28, n/3600%24, n/60%60, n%60, (h>>12)%300, img, phase, (h>>16)%12, n/65536%256, n/256%256, n%256)
	}
	fmt.Fprintf(cw, "\n  ]\n}\n")
	if cw.err != nil {
		return 0, cw.err
	}
	return n, bw.Flush()
}

// Tree writes a directory tree shaped as server-filesystem's
// directory_tree answers (entries {"name", "type", "children"}, a file
// without children), pretty-printed with two spaces as a stored output
// is, of at least size bytes; it returns how many entries are files.
// Each top directory holds seven levels, three to five files and two or
// three directories a level (about a megabyte).
func Tree(w io.Writer, size int64) (int, error) {
	bw := bufio.NewWriterSize(w, 1<<20)
	cw := &countWriter{w: bw}
	files, dirs := 0, 0
	exts := [...]string{"go", "md", "json", "ts", "py", "yaml", "txt"}
	var dir func(indent string, depth int)
	dir = func(indent string, depth int) {
		dirs++
		d := dirs
		fmt.Fprintf(cw, "%s{\n%s  \"name\": \"dir-%d\",\n%s  \"type\": \"directory\",\n%s  \"children\": [", indent, indent, d, indent, indent)
		nf, nd := 3+d%3, 0
		if depth < 7 {
			nd = 2 + d%2
		}
		for i := range nf + nd {
			if i > 0 {
				fmt.Fprint(cw, ",")
			}
			fmt.Fprint(cw, "\n")
			if i < nf {
				files++
				fmt.Fprintf(cw, "%s    {\n%s      \"name\": \"file-%d.%s\",\n%s      \"type\": \"file\"\n%s    }", indent, indent, files, exts[files%len(exts)], indent, indent)
				continue
			}
			dir(indent+"    ", depth+1)
		}
		if nf+nd > 0 {
			fmt.Fprintf(cw, "\n%s  ", indent)
		}
		fmt.Fprintf(cw, "]\n%s}", indent)
	}
	fmt.Fprint(cw, "[\n")
	for top := 0; cw.n < size; top++ {
		if top > 0 {
			fmt.Fprint(cw, ",\n")
		}
		dir("  ", 1)
	}
	fmt.Fprint(cw, "\n]\n")
	if cw.err != nil {
		return 0, cw.err
	}
	return files, bw.Flush()
}

// Log writes service-log lines until at least size bytes; one line in 50
// is an ERROR with "timeout after Nms", one in 7 a WARN.
func Log(w io.Writer, size int64) (int, error) {
	bw := bufio.NewWriterSize(w, 1<<20)
	cw := &countWriter{w: bw}
	n := 0
	for ; cw.n < size; n++ {
		lvl, msg := "INFO", fmt.Sprintf("GET /v1/items/%d status=200 took %dms", n%100000, n%250)
		switch {
		case n%50 == 49:
			lvl, msg = "ERROR", fmt.Sprintf("upstream call failed: timeout after %dms (attempt %d)", 1000+n%4000, n%3+1)
		case n%7 == 3:
			lvl, msg = "WARN", fmt.Sprintf("slow query on shard-%d: %dms", n%16, 500+n%900)
		}
		fmt.Fprintf(cw, "2026-11-30T%02d:%02d:%02d.%03dZ %-5s svc=api-%d req=%08x %s\n",
			n/3600000%24, n/60000%60, n/1000%60, n%1000, lvl, n%4, n*2654435761%(1<<32), msg)
	}
	if cw.err != nil {
		return 0, cw.err
	}
	return n, bw.Flush()
}

// WriteFile generates into path with gen unless a file of at least size
// bytes is already there (so repeated benchmark runs reuse it).
func WriteFile(path string, size int64, gen func(io.Writer, int64) (int, error)) error {
	if st, err := os.Stat(path); err == nil && st.Size() >= size {
		return nil
	}
	// memdir's atomic write: a run stopped part-way leaves no file a
	// later run would take for a whole one.
	d, name := memdir.At(filepath.Dir(path)), filepath.Base(path)
	tmp, err := d.WriteTemp(name, func(w io.Writer) error {
		_, err := gen(w, size)
		return err
	})
	if err != nil {
		return err
	}
	return d.Commit(tmp, name)
}

type countWriter struct {
	w   io.Writer
	n   int64
	err error
}

func (c *countWriter) Write(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	n, err := c.w.Write(p)
	c.n += int64(n)
	c.err = err
	return n, err
}
