package config

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"
)

// maxErrors caps how many problems one load reports: enough to fix a
// file in one pass, not a wall of text for a file that is not a config.
const maxErrors = 20

// Options tunes [LoadWith] and [Parse]. The zero value (or nil) reads the
// process environment and the user's home directory.
type Options struct {
	// LookupEnv resolves {{ env.NAME }}; nil means os.LookupEnv.
	LookupEnv func(name string) (string, bool)
	// HomeDir replaces ~ in paths; "" means os.UserHomeDir().
	HomeDir string
	// TokensFileMayBeMissing accepts an [http] tokens_file that does not
	// exist yet (as no tokens): `scratchpad-mcp token add` creates it.
	TokensFileMayBeMissing bool
	// SkipServersWithUnsetEnv loads a config in which a server's table
	// uses an unset {{ env.NAME }} without a default: that server is left
	// out of [Config].Servers and listed in [Config].Skipped with the
	// variables it lacks, instead of failing the load. serve serves the
	// other servers (a desktop client would otherwise lose every tool at
	// once), and `auth status` reports on them: another server's missing
	// secret must not stop them.
	SkipServersWithUnsetEnv bool
}

// Load reads the TOML file at path, interpolates {{ env.NAME }}, checks
// every key and value, and returns the config with defaults filled in.
//
// A file that cannot be read returns an error wrapping the [io/fs] error.
// A file with problems returns a *[Error] (one problem) or [Errors] (several,
// in file order); both match [ErrInvalid] with [errors.Is] and name the
// file, the full key path and the line:column.
func Load(path string) (*Config, error) { return LoadWith(path, nil) }

// LoadWith is [Load] with options.
func LoadWith(path string, opts *Options) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	return Parse(path, data, opts)
}

// Parse is [LoadWith] on data already read; path names the file in errors
// and is the base for relative paths in it ("" means the working
// directory).
func Parse(path string, data []byte, opts *Options) (*Config, error) {
	if opts == nil {
		opts = &Options{}
	}
	lookup := opts.LookupEnv
	if lookup == nil {
		lookup = os.LookupEnv
	}
	home := func() (string, error) {
		if opts.HomeDir != "" {
			return opts.HomeDir, nil
		}
		return os.UserHomeDir()
	}
	c := defaultConfig(lookup, home)

	dir, err := os.Getwd()
	if err != nil {
		dir = "."
	}
	if path != "" {
		abs, err := filepath.Abs(path)
		if err != nil {
			return nil, fmt.Errorf("config: %w", err)
		}
		c.Path = abs
		dir = filepath.Dir(abs)
	}

	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")) // UTF-8 BOM
	src := string(data)
	var raw map[string]any
	if _, err := toml.Decode(src, &raw); err != nil {
		e := &Error{File: path, Msg: err.Error(), Err: err}
		var pe toml.ParseError
		if errors.As(err, &pe) {
			e.Line, e.Col, e.Msg = pe.Position.Line, pe.Position.Col, "invalid TOML: "+pe.Message
			// The parser counts a line as begun once it has read the
			// newline before it, so an error at a line's end (an unclosed
			// table name) is put on the next line: the byte offset says
			// where it really is.
			if at := pe.Position.Start; at >= 0 && at <= len(src) {
				e.Line = 1 + strings.Count(src[:at], "\n")
				e.Col = at - strings.LastIndexByte(src[:at], '\n')
			}
		}
		return nil, e
	}

	d := &decoder{file: path, dir: dir, home: home, lookup: lookup, pos: scanPositions(src), tokensFileMayBeMissing: opts.TokensFileMayBeMissing, skipUnsetEnv: opts.SkipServersWithUnsetEnv}
	d.root(raw, c)
	if len(d.errs) == 0 {
		return c, nil
	}
	slices.SortStableFunc(d.errs, func(a, b *Error) int {
		if a.Line == 0 || b.Line == 0 { // unknown positions last
			return cmp.Compare(b.Line, a.Line)
		}
		return cmp.Or(cmp.Compare(a.Line, b.Line), cmp.Compare(a.Col, b.Col))
	})
	if n := len(d.errs); n > maxErrors {
		d.errs = append(d.errs[:maxErrors], &Error{File: path, Msg: fmt.Sprintf("%d more problems not shown", n-maxErrors)})
	}
	if len(d.errs) == 1 {
		return nil, d.errs[0]
	}
	return nil, d.errs
}

// decoder walks the parsed document against the schema, collecting every
// problem rather than stopping at the first.
type decoder struct {
	file   string
	dir    string
	home   func() (string, error)
	lookup func(string) (string, bool)
	pos    *positions
	errs   Errors

	tokensFileMayBeMissing bool
	skipUnsetEnv           bool // Options.SkipServersWithUnsetEnv
	tokensOnly             bool // decoding a tokens file, not the config
}

// fail records a problem at p's key (or its nearest known parent).
func (d *decoder) fail(p keyPath, format string, args ...any) {
	pos, _ := d.pos.key(p)
	d.failAt(p, pos, nil, fmt.Sprintf(format, args...))
}

func (d *decoder) failAt(p keyPath, pos position, cause error, msg string) {
	d.errs = append(d.errs, &Error{File: d.file, Key: p.String(), Line: pos.Line, Col: pos.Col, Msg: msg, Err: cause})
}

func (d *decoder) root(m map[string]any, c *Config) {
	var p keyPath
	d.checkKeys(p, m, "memory_dir", "agent", "mcp", "orchestration", "pad", "memory", "explore", "http", "retention", "catalogue", "redaction", "cluster", "telemetry")
	if v, ok := m["memory_dir"]; ok {
		if s, ok := d.path(p.key("memory_dir"), v); ok {
			c.MemoryDir = s
		}
	}
	if v, ok := m["agent"]; ok {
		d.agent(p.key("agent"), v, &c.Agent)
	}
	if v, ok := m["mcp"]; ok {
		d.mcp(p.key("mcp"), v, c)
	}
	if v, ok := m["orchestration"]; ok {
		d.orchestration(p.key("orchestration"), v, &c.Orchestration)
	}
	if v, ok := m["pad"]; ok {
		d.pad(p.key("pad"), v, &c.Pad)
	}
	c.Memory.Scope, c.Memory.History = "", 0 // [pad]'s, unless [memory] says
	if v, ok := m["memory"]; ok {
		if on := d.memory(p.key("memory"), v, &c.Memory); on != nil {
			d.memoryEnabled(p.key("memory").key("enabled"), *on, m, c)
		}
	}
	c.memoryDefaults()
	if v, ok := m["explore"]; ok {
		d.explore(p.key("explore"), v, &c.Explore)
	}
	if v, ok := m["http"]; ok {
		d.http(p.key("http"), v, &c.HTTP)
	}
	if v, ok := m["retention"]; ok {
		d.retention(p.key("retention"), v, &c.Retention)
	}
	if v, ok := m["redaction"]; ok {
		d.redaction(p.key("redaction"), v, &c.Redaction)
	}
	if v, ok := m["cluster"]; ok {
		d.cluster(p.key("cluster"), v, &c.Cluster)
	}
	if v, ok := m["telemetry"]; ok {
		d.telemetry(p.key("telemetry"), v, &c.Telemetry)
	}
	if v, ok := m["catalogue"]; ok {
		if t, ok := d.table(p.key("catalogue"), v); ok {
			d.checkKeys(p.key("catalogue"), t, "mode")
			if v, ok := t["mode"]; ok {
				c.Catalogue.Mode, _ = d.oneOf(p.key("catalogue").key("mode"), v, CatalogueFull, CatalogueSearch)
			}
		}
	}
}

// checkKeys reports every key of m that is not allowed, suggesting the
// closest allowed one: a typo must never silently turn a setting off.
func (d *decoder) checkKeys(p keyPath, m map[string]any, allowed ...string) {
	for _, k := range d.sortedKeys(p, m) {
		if slices.Contains(allowed, k) {
			continue
		}
		msg := fmt.Sprintf("unknown key %q", k)
		if s := suggest(k, allowed); s != "" {
			msg += fmt.Sprintf(" (did you mean %q?)", s)
		} else {
			msg += fmt.Sprintf(" (known keys: %s)", joinKeys(allowed))
		}
		d.fail(p.key(k), "%s", msg)
	}
}

// sortedKeys returns m's keys in file order, so errors and servers come out
// in the order the user wrote them.
func (d *decoder) sortedKeys(p keyPath, m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	at := func(k string) position {
		pos, exact := d.pos.key(p.key(k))
		if !exact {
			return position{Line: 1 << 30}
		}
		return pos
	}
	slices.SortFunc(keys, func(a, b string) int {
		pa, pb := at(a), at(b)
		return cmp.Or(cmp.Compare(pa.Line, pb.Line), cmp.Compare(pa.Col, pb.Col), cmp.Compare(a, b))
	})
	return keys
}

func joinKeys(ks []string) string {
	var b []byte
	for i, k := range ks {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = append(b, k...)
	}
	return string(b)
}

// suggest returns the allowed key closest to k by edit distance, if close
// enough to be a typo.
func suggest(k string, allowed []string) string {
	best, bestD := "", 3
	if len(k) <= 4 {
		bestD = 2
	}
	for _, a := range allowed {
		if dist := editDistance(k, a); dist < bestD {
			best, bestD = a, dist
		}
	}
	return best
}

func editDistance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		return 1 << 30
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
