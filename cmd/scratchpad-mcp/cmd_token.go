package main

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/scratchpad-mcp/scratchpad-mcp/agents"
	"github.com/scratchpad-mcp/scratchpad-mcp/config"
	"github.com/scratchpad-mcp/scratchpad-mcp/memdir"
)

func init() {
	commands["token"] = command{
		summary: "token add|list|revoke: bearer tokens of owners, in the tokens file (hashes only)",
		example: "scratchpad-mcp token add alice --config scratchpad.toml\nscratchpad-mcp token list --config scratchpad.toml\nscratchpad-mcp token revoke alice --config scratchpad.toml",
		run:     runToken,
	}
}

// tokenBytes is the entropy of a new token (256 bits).
const tokenBytes = 32

// errTokenFileShape means an owner's entries of the tokens file are not
// written as [[tokens]] tables, which is all `token revoke` and
// `token add --rotate` edit.
var errTokenFileShape = errors.New("entries not written as [[tokens]] tables: edit the file by hand")

// runToken is `scratchpad-mcp token add OWNER [--rotate] | list |
// revoke OWNER`, all with --config F: the tokens file [http] tokens_file
// names holds each token's SHA-256, never the token. add prints a new
// random token once (refusing an owner that has one unless --rotate,
// which replaces it); list shows owners and fingerprints; revoke removes
// an owner's tokens. A running server re-reads the file within a second
// ([config.TokenSet]).
func runToken(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("token", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfgPath := fs.String("config", "", "config file whose [http] tokens_file to use (required)")
	rotate := fs.Bool("rotate", false, "add: replace the owner's token(s) with the new one (without it, an owner that has a token is refused)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: scratchpad-mcp token add OWNER [--rotate] --config FILE")
		fmt.Fprintln(stderr, "       scratchpad-mcp token list --config FILE")
		fmt.Fprintln(stderr, "       scratchpad-mcp token revoke OWNER --config FILE")
		fmt.Fprintln(stderr)
		fmt.Fprintln(stderr, "add prints a new random bearer token for OWNER once, and appends its SHA-256 to the")
		fmt.Fprintln(stderr, "file the config's [http] tokens_file names (created 0600 if missing). An owner that")
		fmt.Fprintln(stderr, "has a token already is refused unless --rotate, which replaces the old one(s).")
		fmt.Fprintln(stderr, "list shows each owner with a short fingerprint (the first 8 hex digits of the hash),")
		fmt.Fprintln(stderr, "never a token. revoke removes OWNER's tokens from the file.")
		fmt.Fprintln(stderr, "A running server re-reads the tokens file within a second: a new token works, a")
		fmt.Fprintln(stderr, "revoked one is refused (401) from its next request on, without a restart.")
		fs.PrintDefaults()
	}
	pos, code, ok := parseMixed(fs, args)
	if !ok {
		return code
	}
	want := map[string]int{"add": 2, "list": 1, "revoke": 2}
	if len(pos) == 0 || want[pos[0]] != len(pos) {
		fs.Usage()
		return 2
	}
	sub := pos[0]
	fail := func(code int, format string, a ...any) int {
		fmt.Fprintf(stderr, "scratchpad-mcp token %s: %s\n", sub, fmt.Sprintf(format, a...))
		return code
	}
	owner := ""
	if len(pos) == 2 {
		owner = pos[1]
		if err := agents.CheckOwner(owner); err != nil {
			return fail(2, "%v", err)
		}
	}
	if *rotate && sub != "add" {
		return fail(2, "--rotate is for token add")
	}
	if *cfgPath == "" {
		return fail(2, "--config is required (its [http] tokens_file names where the hashes are)")
	}
	// The servers are not this command's business: one whose secret is
	// not set in this shell does not stop it.
	cfg, err := config.LoadWith(*cfgPath, &config.Options{TokensFileMayBeMissing: true, SkipServersWithUnsetEnv: true})
	if err != nil {
		return fail(2, "%v", err)
	}
	file := cfg.HTTP.TokensFile
	if file == "" {
		return fail(2, "%s: [http] tokens_file is not set: add tokens_file = \"tokens.toml\" under [http]", cfg.Path)
	}
	inline := func(o string) bool {
		return slices.ContainsFunc(cfg.HTTP.InlineTokens, func(t config.Token) bool { return t.Owner == o })
	}
	inFile := slices.DeleteFunc(slices.Clone(cfg.HTTP.Tokens), func(t config.Token) bool {
		return slices.ContainsFunc(cfg.HTTP.InlineTokens, func(i config.Token) bool { return i.SHA256 == t.SHA256 })
	})
	has := slices.ContainsFunc(inFile, func(t config.Token) bool { return t.Owner == owner })

	switch sub {
	case "list":
		if len(cfg.HTTP.Tokens) == 0 {
			fmt.Fprintf(stdout, "no tokens (%s is empty or missing)\n", file)
			return 0
		}
		tw := tabwriter.NewWriter(stdout, 2, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "OWNER\tFINGERPRINT\tWHERE")
		for _, t := range cfg.HTTP.InlineTokens {
			fmt.Fprintf(tw, "%s\t%s\t%s [[http.tokens]]\n", t.Owner, t.Fingerprint(), cfg.Path)
		}
		for _, t := range inFile {
			fmt.Fprintf(tw, "%s\t%s\t%s\n", t.Owner, t.Fingerprint(), file)
		}
		tw.Flush()
		return 0
	case "revoke":
		if !has {
			if inline(owner) {
				return fail(1, "%s's token is in %s's [[http.tokens]]: remove it there (and restart the server)", owner, cfg.Path)
			}
			return fail(1, "no token for owner %q in %s (token list shows the owners)", owner, file)
		}
		n, err := rewriteTokensFile(file, owner, "")
		if err != nil {
			return fail(1, "%s: %v", file, err)
		}
		if _, err := config.LoadWith(*cfgPath, &config.Options{SkipServersWithUnsetEnv: true}); err != nil {
			return fail(1, "revoked, but the config no longer loads: %v", err)
		}
		fmt.Fprintf(stdout, "revoked %d token(s) of %q in %s: a running server refuses them within a second\n", n, owner, file)
		return 0
	}

	if inline(owner) {
		return fail(1, "%q has a token in %s's [[http.tokens]]: one place per owner (remove it there to manage %q here)", owner, cfg.Path, owner)
	}
	if has && !*rotate {
		return fail(1, "%q has a token already (%s); give --rotate to replace it, or token revoke %s first", owner, file, owner)
	}
	raw := make([]byte, tokenBytes)
	if _, err := rand.Read(raw); err != nil {
		return fail(1, "%v", err)
	}
	token := "spm_" + base64.RawURLEncoding.EncodeToString(raw)
	sum := sha256.Sum256([]byte(token))
	entry := fmt.Sprintf("\n# %s added %s\n[[tokens]]\nowner = %q\ntoken_sha256 = %q\n",
		owner, time.Now().UTC().Format(time.RFC3339), owner, hex.EncodeToString(sum[:]))
	replaced := 0
	if has {
		replaced, err = rewriteTokensFile(file, owner, entry)
	} else {
		err = appendTokensFile(file, entry)
	}
	if err != nil {
		return fail(1, "%s: %v", file, err)
	}
	// The check that the file still loads: a hand-broken file is said now,
	// not at the next serve.
	if _, err := config.LoadWith(*cfgPath, &config.Options{SkipServersWithUnsetEnv: true}); err != nil {
		return fail(1, "written, but the config no longer loads: %v", err)
	}
	if replaced > 0 {
		fmt.Fprintf(stderr, "token for %q replaced in %s (%d old one(s) revoked; its SHA-256 only); it is shown once:\n", owner, file, replaced)
	} else {
		fmt.Fprintf(stderr, "token for %q added to %s (its SHA-256 only); it is shown once:\n", owner, file)
	}
	fmt.Fprintln(stdout, token)
	return 0
}

// appendTokensFile appends entry with one write to a file opened
// O_APPEND (created 0600, its folder 0700).
func appendTokensFile(path, entry string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	_, werr := f.WriteString(entry)
	if werr == nil {
		werr = f.Sync()
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	return werr
}

// rewriteTokensFile removes owner's [[tokens]] entries from the tokens
// file at path (each with the comment lines just above it), appends
// entry, and replaces the file atomically; the rest stays as written. It
// returns how many entries it removed: none is an error wrapping
// [errTokenFileShape] (the owner's entries are written another way).
func rewriteTokensFile(path, owner, entry string) (int, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	head, blocks, err := splitTokensFile(string(src))
	if err != nil {
		return 0, err
	}
	var b strings.Builder
	b.WriteString(head)
	n := 0
	for _, bl := range blocks {
		if bl.owner == owner {
			n++
			continue
		}
		b.WriteString(bl.text)
	}
	if n == 0 {
		return 0, fmt.Errorf("%q: %w", owner, errTokenFileShape)
	}
	b.WriteString(entry)
	return n, writeFileAtomic(path, []byte(b.String()))
}

// tokenBlock is one [[tokens]] entry of a tokens file as written.
type tokenBlock struct {
	text  string // from its leading comment lines to the next entry's
	owner string
}

// splitTokensFile cuts a tokens file into what precedes its first
// [[tokens]] entry and its entries, each with the comment lines (then
// blank lines) just above its header, the way `token add` writes them.
func splitTokensFile(src string) (head string, blocks []tokenBlock, err error) {
	lines := strings.SplitAfter(src, "\n")
	var starts []int
	for i, l := range lines {
		if strings.TrimSpace(l) == "[[tokens]]" {
			j := i
			for j > 0 && strings.HasPrefix(strings.TrimSpace(lines[j-1]), "#") {
				j--
			}
			for j > 0 && strings.TrimSpace(lines[j-1]) == "" {
				j--
			}
			starts = append(starts, j)
		}
	}
	if len(starts) == 0 {
		return src, nil, nil
	}
	head = strings.Join(lines[:starts[0]], "")
	for k, s := range starts {
		e := len(lines)
		if k+1 < len(starts) {
			e = starts[k+1]
		}
		text := strings.Join(lines[s:e], "")
		var one struct {
			Tokens []struct {
				Owner string `toml:"owner"`
			} `toml:"tokens"`
		}
		if _, err := toml.Decode(text, &one); err != nil || len(one.Tokens) != 1 {
			return "", nil, fmt.Errorf("entry %d: %w", k+1, errTokenFileShape)
		}
		blocks = append(blocks, tokenBlock{text: text, owner: one.Tokens[0].Owner})
	}
	return head, blocks, nil
}

// writeFileAtomic replaces path with data by memdir's atomic write, on
// the tokens file's folder: a temporary file beside it (0600), synced,
// renamed over it, the folder synced. A reader (the server re-reading the
// tokens file) sees the old file or the new.
func writeFileAtomic(path string, data []byte) error {
	return memdir.At(filepath.Dir(path)).WriteFile(filepath.Base(path), data)
}
