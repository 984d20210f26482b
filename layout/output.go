package layout

import (
	"encoding/hex"
	"strings"
)

// OutputName is a stored output's file name in a stored-outputs folder:
// {server}-{tool}-{hash8}.{ext}, the hash of the stored bytes (so the
// same output twice is one file).
func OutputName(server, tool, ext string, sum []byte) string {
	return OutputPrefix(server, tool) + "-" + hex.EncodeToString(sum[:4]) + "." + ext
}

// OutputPrefix is {server}-{tool} of [OutputName], each kept to
// [A-Za-z0-9_.-] (anything else becomes '_', so a tool named "fs/read"
// cannot make a path), trimmed of dots and cut to 64 bytes.
func OutputPrefix(server, tool string) string {
	return safeName(server) + "-" + safeName(tool)
}

func safeName(s string) string {
	b := []byte(s)
	for i, c := range b {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.'
		if !ok {
			b[i] = '_'
		}
	}
	out := strings.Trim(string(b), ".")
	if out == "" {
		out = "_"
	}
	if len(out) > 64 {
		out = out[:64]
	}
	return out
}

// OutputServer is the server among servers whose stored output the file
// named name is ([OutputName]): the longest whose prefix it starts with,
// so that of "gh" and "gh-enterprise" the file of the second is its own;
// "" when none is.
func OutputServer(name string, servers []string) string {
	best, n := "", 0
	for _, s := range servers {
		p := safeName(s) + "-"
		if strings.HasPrefix(name, p) && len(p) > n {
			best, n = s, len(p)
		}
	}
	return best
}
