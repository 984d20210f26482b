package explore

import (
	"bytes"
	"fmt"
	"io/fs"
	"path"
	"strconv"
	"strings"

	"github.com/scratchpad-mcp/scratchpad-mcp/tool"
)

// Limits of grep without a file: files searched, bytes read, files listed.
const (
	grepAllMaxFiles  = 10_000
	grepAllMaxBytes  = 4 << 30
	grepAllShowFiles = 50
	grepAllDefaultM  = 3
)

// grepFile is one file's result in a search over every stored output.
type grepFile struct {
	name  string // relative to Env.Dir, usable as a file argument
	total int
	hits  []hit
	data  []byte
}

// runGrepAll searches every regular file under the read root (dot files,
// which are temporary, and binary files excepted) and lists, per file with
// matches, the number of matching lines and the first few.
func runGrepAll(c *call, pattern string, ic bool, maxM int, ctxLines int) *tool.Result {
	if c.env == nil || c.env.Root == nil || c.env.Count == nil {
		return c.fileError(ErrNoRoot)
	}
	var (
		files      []grepFile
		searched   int
		bytesRead  int64
		truncated  bool
		totalLines int
		literal    bool
		reErr      string
		firstErr   error
	)
	if c.env.FetchAll != nil {
		// Outputs another replica stored are searched too: fetched
		// first into this one's cache.
		if err := c.env.FetchAll(c.ctx, grepAllMaxFiles); err != nil {
			if c.ctx.Err() != nil {
				return c.cancelled(c.ctx.Err())
			}
			return c.fileError(fmt.Errorf("the stored outputs of the other replicas cannot be listed: %w", err))
		}
	}
	fsys := c.env.Root.FS()
	err := fs.WalkDir(fsys, ".", func(p string, de fs.DirEntry, err error) error {
		if err != nil {
			return nil // unreadable directory: skip it
		}
		if c.ctx.Err() != nil {
			return c.ctx.Err()
		}
		if p != "." && strings.HasPrefix(de.Name(), ".") {
			if de.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if !de.Type().IsRegular() {
			return nil
		}
		if searched >= grepAllMaxFiles || bytesRead >= grepAllMaxBytes {
			truncated = true
			return fs.SkipAll
		}
		data := c.cachedOrRead(p)
		if data == nil {
			return nil
		}
		searched++
		bytesRead += int64(len(data))
		if bytes.IndexByte(data[:min(len(data), 8000)], 0) >= 0 {
			return nil // binary
		}
		m, lit, msg := compileGrep(pattern, ic, data[:min(len(data), 256<<10)])
		literal, reErr = lit, msg
		d := &doc{data: data}
		// Past the files shown, only the counts are kept: not their
		// bytes, nor their hits.
		shown, keep := len(files) < grepAllShowFiles, maxM
		if !shown {
			keep = 0
		}
		hits, total, gerr := grepLines(c.ctx, d, m, keep)
		if gerr != nil {
			firstErr = gerr
			return gerr
		}
		if total > 0 {
			f := grepFile{name: relFrom(c.env.Dir, p), total: total}
			if shown {
				f.hits, f.data = hits, data
			}
			files = append(files, f)
			totalLines += total
		}
		return nil
	})
	if firstErr != nil || err != nil && c.ctx.Err() != nil {
		return c.cancelled(c.ctx.Err())
	}
	locate := locator(pattern, ic, literal)
	// Written up to the size no answer under the per-call cap can have,
	// then only measured (as grep does).
	limit := c.env.maxTokens()
	capBytes := limit * bytesPerTokenBound
	var b strings.Builder
	over := 0
	shownFiles := files[:min(len(files), grepAllShowFiles)]
	for _, f := range shownFiles {
		if over > 0 || b.Len() > capBytes {
			over += len(f.name) + 30
		} else {
			fmt.Fprintf(&b, "%s: %s\n", f.name, plural(f.total, "matching line"))
		}
		d := &doc{data: f.data}
		w := len(strconv.Itoa(f.hits[len(f.hits)-1].line + ctxLines))
		err := d.contextWalk(c.ctx, f.hits, ctxLines, func(n int, l []byte, match, _ bool) {
			if over > 0 || b.Len() > capBytes {
				over += shownCost(len(l), w)
				return
			}
			writeShownLine(&b, n, w, l, match, locate)
		})
		if err != nil {
			return c.cancelled(err)
		}
	}
	if len(files) > len(shownFiles) {
		more := 0
		for _, f := range files[len(shownFiles):] {
			more += f.total
		}
		fmt.Fprintf(&b, "… and %s with %s not shown\n", plural(len(files)-len(shownFiles), "more file"), plural(more, "matching line"))
	}
	q := "/" + pattern + "/"
	if ic {
		q += "i"
	}
	what := fmt.Sprintf("%s in every stored output (%s with matches of %s searched, %s; first %d per file",
		q, Comma(len(files)), plural(searched, "file"), plural(totalLines, "matching line"), maxM)
	if ctxLines > 0 {
		what += fmt.Sprintf(", context %d", ctxLines)
	}
	if truncated {
		what += fmt.Sprintf("; stopped at %s files or %s GiB", Comma(grepAllMaxFiles), Comma(grepAllMaxBytes>>30))
	}
	what += ")"
	if literal {
		what += fmt.Sprintf(" [invalid regex (%s): searched as literal text]", reErr)
	}
	sugg := func() []suggestion {
		s := []suggestion{}
		if maxM > 1 || ctxLines > 0 {
			s = append(s, suggest("grep", "one line per file", kv{"pattern", pattern}, kv{"ignore_case", ic}, kv{"max_matches", 1}, kv{"context", 0}))
		}
		if len(files) > 0 {
			s = append(s, suggest("grep", "the matches in the first file", kv{"file", files[0].name}, kv{"pattern", pattern}, kv{"ignore_case", ic}, kv{"context", 0}, kv{"max_matches", 20}))
		}
		return s
	}
	if over > 0 {
		return c.tooLarge(c.rateEstimate(b.String(), b.Len(), b.Len()+over), kv{"per_call_limit", limit}, sugg)
	}
	return c.finish(b.String(), what, sugg)
}

// cachedOrRead returns the bytes of p (relative to the root): from the
// cache when the file is loaded there, else read without caching, so a
// search over every file does not evict the ones being explored. nil when
// the file cannot be read.
func (c *call) cachedOrRead(p string) []byte {
	st, err := c.env.Root.Stat(p)
	if err != nil || !st.Mode().IsRegular() {
		return nil
	}
	if d := c.env.Cache.get(c.env.Root.Name()+"\x00"+p, st.Size(), st.ModTime()); d != nil {
		return d.data
	}
	data, err := c.env.Root.ReadFile(p)
	if err != nil {
		return nil
	}
	return data
}

// relFrom renders p (relative to the root) relative to dir, as a file
// argument resolves it.
func relFrom(dir, p string) string {
	dir = path.Clean(strings.ReplaceAll(dir, `\`, "/"))
	if dir == "." || dir == "" {
		return p
	}
	if strings.HasPrefix(p, dir+"/") {
		return p[len(dir)+1:]
	}
	up := ""
	for d := dir; d != "." && !strings.HasPrefix(p, d+"/"); d = path.Dir(d) {
		up += "../"
		if path.Dir(d) == "." {
			return up + p
		}
		if strings.HasPrefix(p, path.Dir(d)+"/") {
			return up + p[len(path.Dir(d))+1:]
		}
	}
	return up + p
}
