// Command binsize says what each dependency costs in the scratchpad-mcp
// binary (issue 53; docs/performance.md, "Binary size"):
//
//	go run ./scripts/binsize            # linux/amd64, as make build builds
//
// It builds the binary stripped (-trimpath -ldflags='-s -w', CGO_ENABLED=0)
// and prints its size, then builds it with its symbols and adds up, per
// module, the bytes of the symbols in the sections that end up in the file
// (code, read-only data, type data, variables, embedded files). The
// function table (.gopclntab), which no symbol names, is shared out in
// proportion to each module's code; what is left (strings and other data
// without a symbol, headers) is one line of its own. The standard library
// is one line, and the project's own packages one per package. Figures
// only: TestBinarySize in cmd/scratchpad-mcp holds the bound.
package main

import (
	"cmp"
	"debug/elf"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

const self = "github.com/scratchpad-mcp/scratchpad-mcp"

func main() {
	goos := flag.String("goos", "linux", "GOOS to build for (the figures need ELF: linux)")
	goarch := flag.String("goarch", "amd64", "GOARCH to build for")
	top := flag.Int("top", 30, "lines to print")
	flag.Parse()
	tmp, err := os.MkdirTemp("", "binsize-")
	check(err)
	defer os.RemoveAll(tmp)
	stripped, full := filepath.Join(tmp, "stripped"), filepath.Join(tmp, "full")
	build(*goos, *goarch, stripped, "-trimpath", "-ldflags=-s -w")
	build(*goos, *goarch, full, "-trimpath")
	st, err := os.Stat(stripped)
	check(err)
	fmt.Printf("stripped %s/%s binary: %d bytes, %.2f MiB (bound: 25 MiB)\n\n", *goos, *goarch, st.Size(), mib(st.Size()))

	mods := modules(full)
	f, err := elf.Open(full)
	check(err)
	defer f.Close()
	inFile := map[elf.SectionIndex]bool{}
	var pclntab int64
	for i, s := range f.Sections {
		if s.Flags&elf.SHF_ALLOC != 0 && s.Type != elf.SHT_NOBITS {
			inFile[elf.SectionIndex(i)] = true
		}
		if s.Name == ".gopclntab" {
			pclntab = int64(s.Size)
		}
	}
	syms, err := f.Symbols()
	check(err)
	bytes, code := map[string]int64{}, map[string]int64{}
	var named, allCode int64
	for _, s := range syms {
		if !inFile[s.Section] || s.Size == 0 {
			continue
		}
		k := owner(s.Name, mods)
		bytes[k] += int64(s.Size)
		named += int64(s.Size)
		if elf.ST_TYPE(s.Info) == elf.STT_FUNC {
			code[k] += int64(s.Size)
			allCode += int64(s.Size)
		}
	}
	type line struct {
		name string
		n    int64
	}
	var lines []line
	for k, n := range bytes {
		if allCode > 0 {
			n += pclntab * code[k] / allCode
		}
		lines = append(lines, line{k, n})
	}
	slices.SortFunc(lines, func(a, b line) int { return cmp.Compare(b.n, a.n) })
	var shown int64
	for i, l := range lines {
		if i < *top {
			fmt.Printf("%8.2f MiB  %s\n", mib(l.n), l.name)
		}
		shown += l.n
	}
	if len(lines) > *top {
		fmt.Printf("          (%d more, %.2f MiB in all)\n", len(lines)-*top, mib(sumFrom(lines[*top:], func(l line) int64 { return l.n })))
	}
	fmt.Printf("%8.2f MiB  (strings and data no symbol names, headers: the stripped file less the above)\n", mib(st.Size()-shown))
}

// owner is the module a symbol belongs to: the longest module path that
// prefixes its package; one line per package for the project's own; "Go
// standard library" for the rest.
func owner(name string, mods []string) string {
	name = strings.TrimPrefix(name, "type:")
	name = strings.TrimLeft(name, "*")
	if strings.HasPrefix(name, "go:") || strings.HasPrefix(name, "runtime.") {
		return "Go runtime and its tables"
	}
	for _, m := range mods {
		if strings.HasPrefix(name, m+".") || strings.HasPrefix(name, m+"/") {
			if m == self {
				pkg := strings.TrimPrefix(name, m+"/")
				if i := strings.IndexAny(pkg, "."); i >= 0 {
					pkg = pkg[:i]
				}
				return "scratchpad-mcp/" + pkg
			}
			return m
		}
	}
	return "Go standard library"
}

// modules are the binary's module paths, longest first.
func modules(bin string) []string {
	out, err := exec.Command("go", "version", "-m", bin).Output()
	check(err)
	var mods []string
	for _, l := range strings.Split(string(out), "\n") {
		f := strings.Fields(l)
		if len(f) >= 2 && (f[0] == "mod" || f[0] == "dep") {
			mods = append(mods, f[1])
		}
	}
	slices.SortFunc(mods, func(a, b string) int { return cmp.Compare(len(b), len(a)) })
	return mods
}

func build(goos, goarch, out string, flags ...string) {
	cmd := exec.Command("go", append(append([]string{"build"}, flags...), "-o", out, "./cmd/scratchpad-mcp")...)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+goos, "GOARCH="+goarch)
	cmd.Stderr = os.Stderr
	check(cmd.Run())
}

func sumFrom[T any](xs []T, f func(T) int64) int64 {
	var n int64
	for _, x := range xs {
		n += f(x)
	}
	return n
}

func mib(n int64) float64 { return float64(n) / (1 << 20) }

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "binsize:", err)
		os.Exit(1)
	}
}
