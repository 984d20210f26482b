package main

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/scratchpad-mcp/scratchpad-mcp/agents"
	"github.com/scratchpad-mcp/scratchpad-mcp/config"
)

func init() {
	commands["token"] = command{summary: "token add OWNER: make a bearer token, print it once, append its hash to the tokens file", example: "scratchpad-mcp token add alice --config scratchpad.toml", run: runToken}
}

// tokenBytes is the entropy of a new token (256 bits).
const tokenBytes = 32

// runToken is `scratchpad-mcp token add OWNER [--config F]`: a new random
// token, printed once on stdout, whose SHA-256 is appended to the tokens
// file [http] tokens_file names. The token itself is stored nowhere.
func runToken(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("token", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfgPath := fs.String("config", "", "config file whose [http] tokens_file to append to (required)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: scratchpad-mcp token add OWNER --config FILE")
		fmt.Fprintln(stderr)
		fmt.Fprintln(stderr, "Prints a new random bearer token for OWNER once, and appends its SHA-256 to the")
		fmt.Fprintln(stderr, "file the config's [http] tokens_file names (created 0600 if missing). A running")
		fmt.Fprintln(stderr, "server reads tokens at start: restart it to accept the new token.")
		fs.PrintDefaults()
	}
	pos, code, ok := parseMixed(fs, args)
	if !ok {
		return code
	}
	if len(pos) != 2 || pos[0] != "add" {
		fs.Usage()
		return 2
	}
	owner := pos[1]
	if err := agents.CheckOwner(owner); err != nil {
		fmt.Fprintf(stderr, "scratchpad-mcp token add: %v\n", err)
		return 2
	}
	if *cfgPath == "" {
		fmt.Fprintln(stderr, "scratchpad-mcp token add: --config is required (its [http] tokens_file names where the hash goes)")
		return 2
	}
	cfg, err := config.LoadWith(*cfgPath, &config.Options{TokensFileMayBeMissing: true})
	if err != nil {
		fmt.Fprintf(stderr, "scratchpad-mcp token add: %v\n", err)
		return 2
	}
	if cfg.HTTP.TokensFile == "" {
		fmt.Fprintf(stderr, "scratchpad-mcp token add: %s: [http] tokens_file is not set: add tokens_file = \"tokens.toml\" under [http]\n", cfg.Path)
		return 2
	}
	raw := make([]byte, tokenBytes)
	if _, err := rand.Read(raw); err != nil {
		fmt.Fprintf(stderr, "scratchpad-mcp token add: %v\n", err)
		return 1
	}
	token := "spm_" + base64.RawURLEncoding.EncodeToString(raw)
	sum := sha256.Sum256([]byte(token))
	entry := fmt.Sprintf("\n# %s added %s\n[[tokens]]\nowner = %q\ntoken_sha256 = %q\n",
		owner, time.Now().UTC().Format(time.RFC3339), owner, hex.EncodeToString(sum[:]))
	if err := appendTokensFile(cfg.HTTP.TokensFile, entry); err != nil {
		fmt.Fprintf(stderr, "scratchpad-mcp token add: %v\n", err)
		return 1
	}
	// The check that the file still loads: a hand-broken file is said now,
	// not at the next serve.
	if _, err := config.Load(*cfgPath); err != nil {
		fmt.Fprintf(stderr, "scratchpad-mcp token add: appended, but the config no longer loads: %v\n", err)
		return 1
	}
	fmt.Fprintf(stderr, "token for %q added to %s (its SHA-256 only); it is shown once:\n", owner, cfg.HTTP.TokensFile)
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
