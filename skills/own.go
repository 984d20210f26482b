package skills

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"

	"github.com/scratchpad-mcp/scratchpad-mcp/wire"
)

// The own skills' files, one folder per skill under own/.
//
//go:embed own
var ownFS embed.FS

// Catalog is a set of skills served from files: entries with digests,
// file reads, directory listings. Built once; safe for concurrent use
// (nothing changes after [Load]).
type Catalog struct {
	entries []json.RawMessage          // skills/list entries, by URI
	byURI   map[string]json.RawMessage // SKILL.md URI → entry
	files   map[string]file            // file URI → content
	dirs    map[string][]string        // directory URI → children's URIs, sorted
}

type file struct {
	data []byte
	mime string
}

var own = mustLoad(ownFS, "own", wire.SkillScheme+OwnNamespace)

// Own is the server's own skills, under skill://scratchpad-mcp/.
func Own() *Catalog { return own }

func mustLoad(fsys fs.FS, dir, base string) *Catalog {
	c, err := Load(fsys, dir, base)
	if err != nil {
		// The files are embedded: a broken one is a build mistake that
		// TestOwnSkill reports; serve none rather than stop the server.
		return newCatalog()
	}
	return c
}

// newCatalog is a catalog with no skills.
func newCatalog() *Catalog {
	return &Catalog{byURI: map[string]json.RawMessage{}, files: map[string]file{}, dirs: map[string][]string{}}
}

// Load builds a catalog from fsys: every folder under dir holding a
// SKILL.md is a skill, served at base/<folder>/… . A skill's frontmatter
// is flat "key: value" YAML (what the own skills use: the full YAML
// grammar is not needed to serve our own files).
func Load(fsys fs.FS, dir, base string) (*Catalog, error) {
	c := newCatalog()
	type skill struct {
		root  string // folder under dir
		files []string
	}
	var found []*skill
	err := fs.WalkDir(fsys, dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || path.Base(p) != "SKILL.md" {
			return nil
		}
		found = append(found, &skill{root: path.Dir(p)})
		return nil
	})
	if err != nil {
		return nil, err
	}
	uriOf := func(p string) string { return base + "/" + strings.TrimPrefix(p, dir+"/") }
	for _, sk := range found {
		err := fs.WalkDir(fsys, sk.root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			u := uriOf(p)
			parent := u[:strings.LastIndex(u, "/")] // not path.Dir: it would fold skill:// to skill:/
			if p == sk.root {
				parent = base
			}
			c.addChild(parent, u)
			if d.IsDir() {
				if _, ok := c.dirs[u]; !ok {
					c.dirs[u] = nil
				}
				return nil
			}
			data, err := fs.ReadFile(fsys, p)
			if err != nil {
				return err
			}
			c.files[u] = file{data: data, mime: mimeOf(p)}
			sk.files = append(sk.files, u)
			return nil
		})
		if err != nil {
			return nil, err
		}
		skillMD := uriOf(sk.root + "/SKILL.md")
		fm, err := frontmatter(c.files[skillMD].data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", skillMD, err)
		}
		if name := fm["name"]; name != path.Base(sk.root) {
			return nil, fmt.Errorf("%s: frontmatter name %q is not the folder's name %q", skillMD, name, path.Base(sk.root))
		}
		sort.Strings(sk.files)
		type res struct {
			URI    string `json:"uri"`
			Digest string `json:"digest"`
			Size   int    `json:"size"`
		}
		rs := make([]res, len(sk.files))
		for i, u := range sk.files {
			sum := sha256.Sum256(c.files[u].data)
			rs[i] = res{URI: u, Digest: "sha256:" + hex.EncodeToString(sum[:]), Size: len(c.files[u].data)}
		}
		entry, err := json.Marshal(struct {
			URI         string            `json:"uri"`
			Frontmatter map[string]string `json:"frontmatter"`
			Resources   []res             `json:"resources"`
		}{skillMD, fm, rs})
		if err != nil {
			return nil, err
		}
		c.byURI[skillMD] = entry
	}
	uris := make([]string, 0, len(c.byURI))
	for u := range c.byURI {
		uris = append(uris, u)
	}
	sort.Strings(uris)
	for _, u := range uris {
		c.entries = append(c.entries, c.byURI[u])
	}
	for d := range c.dirs {
		sort.Strings(c.dirs[d])
	}
	return c, nil
}

func (c *Catalog) addChild(dir, child string) {
	for _, have := range c.dirs[dir] {
		if have == child {
			return
		}
	}
	c.dirs[dir] = append(c.dirs[dir], child)
}

// frontmatter is a SKILL.md's YAML frontmatter (between the first two
// "---" lines): flat "key: value" lines, values plain strings.
func frontmatter(md []byte) (map[string]string, error) {
	rest, ok := bytes.CutPrefix(md, []byte("---\n"))
	if !ok {
		return nil, errors.New("no frontmatter (SKILL.md must begin with ---)")
	}
	head, _, ok := bytes.Cut(rest, []byte("\n---\n"))
	if !ok {
		return nil, errors.New("frontmatter not closed by ---")
	}
	fm := map[string]string{}
	for _, line := range strings.Split(string(head), "\n") {
		k, v, ok := strings.Cut(line, ":")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if !ok || k == "" || v == "" || strings.ContainsAny(v[:1], `"'[{&*!|>%@#`) || strings.Contains(v, ": ") || strings.Contains(v, " #") {
			return nil, fmt.Errorf("frontmatter line %q is not a plain key: value", line)
		}
		fm[k] = v
	}
	for _, k := range []string{"name", "description"} {
		if _, ok := fm[k]; !ok {
			return nil, fmt.Errorf("frontmatter has no %s", k)
		}
	}
	return fm, nil
}

func mimeOf(p string) string {
	switch path.Ext(p) {
	case ".md":
		return "text/markdown"
	case ".json":
		return "application/json"
	}
	return "text/plain"
}

// Entries is the skills/list entries, sorted by URI.
func (c *Catalog) Entries() []json.RawMessage { return c.entries }

// Get is the entry of the skill whose SKILL.md is at uri.
func (c *Catalog) Get(uri string) (json.RawMessage, bool) {
	e, ok := c.byURI[uri]
	return e, ok
}

// Read is a resources/read result for the file at uri.
func (c *Catalog) Read(uri string) (json.RawMessage, bool) {
	f, ok := c.files[uri]
	if !ok {
		return nil, false
	}
	b, err := json.Marshal(map[string]any{"contents": []map[string]string{{"uri": uri, "mimeType": f.mime, "text": string(f.data)}}})
	return b, err == nil
}

// ReadDirectory is a resources/directory/read result for the directory
// at uri: its direct children, directories as inode/directory.
func (c *Catalog) ReadDirectory(uri string) (json.RawMessage, bool) {
	children, ok := c.dirs[uri]
	if !ok {
		return nil, false
	}
	out := make([]wire.DirectoryEntry, 0, len(children))
	for _, ch := range children {
		r := wire.DirectoryEntry{URI: ch, Name: path.Base(ch), MimeType: wire.MimeDirectory}
		if f, ok := c.files[ch]; ok {
			n := int64(len(f.data))
			r.MimeType, r.Size = f.mime, &n
		}
		out = append(out, r)
	}
	b, err := json.Marshal(map[string]any{"resources": out})
	return b, err == nil
}
