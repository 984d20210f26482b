package memory

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/scratchpad-mcp/scratchpad-mcp/tool"
)

// Root is the directory the model's paths live in: every path it sends
// starts with it.
const Root = "/memories"

// Bounds of a path, each refused with its own message by [Clean]. A name
// leaves room in a file system's 255 bytes for the temporary name of an
// atomic write beside it.
const (
	MaxNameBytes = 128 // one file or folder name
	MaxPathBytes = 512 // the whole path below /memories
	MaxDepth     = 16  // folders and file below /memories
	// maxArgBytes bounds a path argument as sent (the schema's maxLength):
	// generous against MaxPathBytes, so that Clean names the bound.
	maxArgBytes = 1024
)

// Clean returns p, a path as the model sends it ("/memories/notes/a.md"),
// as the store names it: relative to /memories, slash-separated, "" for
// /memories itself ("notes/a.md"). Repeated and trailing slashes and "."
// elements are dropped. Everything that could name something outside
// /memories, or two things by one name, is refused with an error wrapping
// [ErrBadPath] that says why: a path that does not start with /memories,
// a ".." element, a percent-encoded character (paths are not decoded), a
// backslash, NUL or another control or invisible formatting character,
// invalid UTF-8, a name starting with "." (hidden; the store's own files
// are), a name with leading or trailing spaces, and a name, path or depth
// past [MaxNameBytes], [MaxPathBytes], [MaxDepth].
func Clean(p string) (string, error) {
	bad := func(why string, a ...any) (string, error) {
		return "", refuse(ErrBadPath, fmt.Sprintf("Error: The path %s is not allowed: %s.", quotePath(p), fmt.Sprintf(why, a...)))
	}
	switch {
	case len(p) > maxArgBytes:
		return bad("it is longer than %d bytes", maxArgBytes)
	case !utf8.ValidString(p):
		return bad("it is not valid UTF-8")
	}
	for i, r := range p {
		switch {
		case r == 0:
			return bad("it contains a NUL byte")
		case unicode.IsControl(r):
			return bad("it contains a control character (%U)", r)
		case unicode.Is(unicode.Cf, r):
			return bad("it contains an invisible formatting character (%U)", r)
		case r == '\\':
			return bad("it contains a backslash; folders are separated by /")
		case r == '%' && i+2 < len(p) && isHex(p[i+1]) && isHex(p[i+2]):
			return bad("it contains a percent-encoded character (%s), and paths are not decoded; write the character itself", p[i:i+3])
		}
	}
	rest, ok := strings.CutPrefix(p, Root)
	if !ok || rest != "" && rest[0] != '/' {
		if strings.HasPrefix(p, "/") {
			return bad("it is outside %s; every path starts with %s", Root, Root)
		}
		return bad("it is relative; every path starts with %s (for example %s/notes.md)", Root, Root)
	}
	var elems []string
	for _, e := range strings.Split(rest, "/") {
		switch {
		case e == "" || e == ".":
			continue
		case e == "..":
			return bad("it contains .., which could leave %s", Root)
		case strings.HasPrefix(e, "."):
			return bad("the name %q starts with \".\"; hidden names are reserved", e)
		case strings.TrimSpace(e) != e:
			return bad("the name %q starts or ends with a space", e)
		case len(e) > MaxNameBytes:
			return bad("a name is longer than %d bytes", MaxNameBytes)
		}
		elems = append(elems, e)
	}
	rel := strings.Join(elems, "/")
	switch {
	case len(elems) > MaxDepth:
		return bad("it is more than %d levels deep", MaxDepth)
	case len(rel) > MaxPathBytes:
		return bad("it is longer than %d bytes below %s", MaxPathBytes, Root)
	}
	return rel, nil
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// Display is the path the model reads for rel, a path [Clean] returned:
// "/memories" for "", "/memories/notes/a.md" for "notes/a.md".
func Display(rel string) string {
	if rel == "" {
		return Root
	}
	return Root + "/" + rel
}

// quotePath is a refused path as an answer repeats it: quoted (it may
// hold anything) and cut to a length worth reading.
func quotePath(p string) string { return fmt.Sprintf("%q", tool.Clip(p, 200)) }

// parent is the folder rel is in ("" for /memories).
func parent(rel string) string {
	if i := strings.LastIndexByte(rel, '/'); i >= 0 {
		return rel[:i]
	}
	return ""
}

// within reports whether rel is dir or inside it.
func within(rel, dir string) bool {
	return dir == "" || rel == dir || strings.HasPrefix(rel, dir+"/")
}
