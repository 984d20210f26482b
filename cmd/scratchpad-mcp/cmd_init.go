package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/scratchpad-mcp/scratchpad-mcp/config"
	"github.com/scratchpad-mcp/scratchpad-mcp/redact"
)

func init() {
	commands["init"] = command{summary: "write a starter config, or convert a client's mcpServers JSON", example: "scratchpad-mcp init > scratchpad.toml\nscratchpad-mcp init --from-claude-desktop ~/Library/Application\\ Support/Claude/claude_desktop_config.json --out scratchpad.toml", run: runInit}
}

// errInitExists is returned when --out names an existing file and --force
// was not given: a hand-tuned config must never be lost to a re-run.
var errInitExists = errors.New("file exists (use --force to overwrite)")

// errNoServers is returned when the client JSON holds no server table.
var errNoServers = errors.New(`no "mcpServers" or "servers" object found`)

func runInit(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("init", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var from, fromDesktop, out string
	var force bool
	fs.StringVar(&fromDesktop, "from-claude-desktop", "", "convert this claude_desktop_config.json")
	fs.StringVar(&from, "from", "", `convert this client JSON ({"mcpServers": {...}} of Claude Desktop/Code, Cursor, or VS Code's {"servers": {...}})`)
	fs.StringVar(&out, "out", "scratchpad.toml", "config file to write")
	fs.BoolVar(&force, "force", false, "overwrite --out if it exists")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: scratchpad-mcp init [--from-claude-desktop FILE | --from FILE] [--out scratchpad.toml] [--force]")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "scratchpad-mcp init: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	if from != "" && fromDesktop != "" {
		fmt.Fprintln(stderr, "scratchpad-mcp init: give --from or --from-claude-desktop, not both")
		return 2
	}
	if fromDesktop != "" {
		from = fromDesktop
	}

	var conv *conversion
	if from != "" {
		data, err := os.ReadFile(from)
		if err != nil {
			fmt.Fprintln(stderr, "scratchpad-mcp init:", err)
			return 1
		}
		conv, err = convertClientConfig(data)
		if err != nil {
			fmt.Fprintf(stderr, "scratchpad-mcp init: %s: %v\n", from, err)
			return 1
		}
		for _, w := range conv.Warnings {
			fmt.Fprintln(stderr, "warning:", w)
		}
	}
	text := starterConfig(conv, from)
	if err := writeNew(out, []byte(text), force); err != nil {
		fmt.Fprintf(stderr, "scratchpad-mcp init: %s: %v\n", out, err)
		return 1
	}
	abs, err := filepath.Abs(out)
	if err != nil {
		abs = out
	}
	// Check what was written loads: a converted entry the loader rejects
	// is better reported now than when the client spawns the server. A
	// variable unset in this shell may well be set where the client runs
	// scratchpad-mcp, so it is a warning, not a failure.
	var unset []string
	lookup := func(k string) (string, bool) {
		if v, ok := os.LookupEnv(k); ok {
			return v, true
		}
		// Only the file's own placeholders: the loader also asks for
		// variables such as XDG_DATA_HOME that have defaults.
		if strings.Contains(text, "env."+k) && !slices.Contains(unset, k) {
			unset = append(unset, k)
		}
		return "unset", true
	}
	if _, err := config.LoadWith(abs, &config.Options{LookupEnv: lookup}); err != nil {
		fmt.Fprintf(stderr, "scratchpad-mcp init: wrote %s, but it does not load; fix it by hand:\n%v\n", out, err)
		return 1
	}
	for _, k := range unset {
		fmt.Fprintf(stderr, "warning: %s uses {{ env.%s }}, which is not set here: set it where scratchpad-mcp runs (or rely on its default, if it has one)\n", out, k)
	}
	n := 0
	if conv != nil {
		n = len(conv.Servers)
	}
	fmt.Fprintf(stdout, "wrote %s (%d upstream server(s))\n", out, n)
	var secrets []secretVar
	if conv != nil {
		secrets = conv.Secrets
	}
	if len(secrets) > 0 {
		fmt.Fprintf(stdout, "\n%d secret value(s) were not copied into it; set these variables where scratchpad-mcp runs\n(the env block below, for a desktop client):\n", len(secrets))
		for _, v := range secrets {
			fmt.Fprintf(stdout, "  %s (%s of server %q)\n", v.Var, v.What, v.Server)
		}
	}
	fmt.Fprintln(stdout, "\nCheck it with:\n\n  scratchpad-mcp doctor --config "+shellQuote(abs))
	key := "mcpServers"
	if conv != nil && conv.Key == "servers" {
		key = "servers"
	}
	fmt.Fprintf(stdout, "\nThen mount scratchpad-mcp in your client instead of the servers it now proxies\n(replace the %q entries with this one", key)
	if len(secrets) > 0 {
		// The values are not printed: a terminal's scrollback is no
		// place for them. They are in the entries being replaced.
		fmt.Fprint(stdout, "; copy each env value from where it says")
	}
	fmt.Fprint(stdout, "):\n\n")
	argv := launchCommand(selfPath())
	fmt.Fprintln(stdout, clientSnippet(key, argv, abs, secrets))
	quoted := make([]string, len(argv))
	for i, a := range argv {
		quoted[i] = shellQuote(a)
	}
	fmt.Fprintf(stdout, "\nClaude Code:\n\n  claude mcp add scratchpad%s -- %s serve --config %s\n", claudeEnvFlags(secrets), strings.Join(quoted, " "), shellQuote(abs))
	return 0
}

// launchCommand is how a client should start scratchpad-mcp, whose binary
// is exe: exe itself, or `npx -y scratchpad-mcp` when exe is the binary
// of an npm platform package (init run with npx: that copy lives in
// npx's cache, which npm may clear).
func launchCommand(exe string) []string {
	if strings.Contains(strings.ReplaceAll(exe, `\`, "/"), "/node_modules/@scratchpad-mcp/") {
		return []string{"npx", "-y", "scratchpad-mcp"}
	}
	return []string{exe}
}

// writeNew writes data to path, refusing to replace an existing file
// unless force. The file may hold secrets copied from the client's env
// entries, so it is private to the user.
func writeNew(path string, data []byte, force bool) error {
	flags := os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	if !force {
		flags |= os.O_EXCL
	}
	f, err := os.OpenFile(path, flags, 0o600)
	if err != nil {
		if errors.Is(err, os.ErrExist) {
			return errInitExists
		}
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// selfPath is the command a client should spawn: the absolute path of this
// binary, because desktop clients start servers without the user's PATH.
func selfPath() string {
	exe, err := os.Executable()
	if err != nil {
		return "scratchpad-mcp"
	}
	if r, err := filepath.EvalSymlinks(exe); err == nil {
		exe = r
	}
	return exe
}

// clientSnippet is the JSON a client needs to spawn scratchpad-mcp (argv,
// from [launchCommand]) with the config: {"mcpServers": {...}} for most clients, {"servers": {...}}
// with a type for VS Code, and an env block with the variables secrets
// were moved to (a desktop client passes a server no other variables),
// each value saying where to copy it from.
func clientSnippet(key string, argv []string, cfgPath string, secrets []secretVar) string {
	entry := map[string]any{"command": argv[0], "args": append(append([]string{}, argv[1:]...), "serve", "--config", cfgPath)}
	if key == "servers" {
		entry["type"] = "stdio"
	}
	if len(secrets) > 0 {
		env := map[string]string{}
		for _, v := range secrets {
			env[v.Var] = fmt.Sprintf("<%s of %q in the entry this replaces>", v.What, v.Server)
		}
		entry["env"] = env
	}
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // "<env X of …>" as written
	enc.SetIndent("", "  ")
	_ = enc.Encode(map[string]any{key: map[string]any{"scratchpad": entry}})
	return strings.TrimSuffix(b.String(), "\n")
}

// claudeEnvFlags is ` -e VAR="$VAR"` for each variable: `claude mcp add`
// copies the value from the shell it runs in, so none is printed.
func claudeEnvFlags(secrets []secretVar) string {
	var b strings.Builder
	for _, v := range secrets {
		fmt.Fprintf(&b, ` -e %s="$%s"`, v.Var, v.Var)
	}
	return b.String()
}

func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(strings.ContainsRune("/.-_:@+=,", r) || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// conversion is a client config turned into upstream servers.
type conversion struct {
	Key      string // "mcpServers" or "servers": which shape the client uses
	Servers  []convertedServer
	Warnings []string
	// Secrets are the variables secret values were replaced by, each
	// once, in the order met.
	Secrets []secretVar
}

// secretVar is one variable a secret value of the client's config was
// replaced by: where it was, for the user who sets it.
type secretVar struct {
	Var    string
	What   string // "env GITHUB_TOKEN", "the password in its url", …
	Server string
	value  string // tells a second use of the name apart from a clash
}

type convertedServer struct {
	Name      string // valid config server name
	Original  string // the client's name, when it had to change
	Transport string
	Cmd       []string
	Env       map[string]string
	Cwd       string
	URL       string
	Headers   map[string]string
}

// clientServer is one entry as the clients write it. Claude Desktop and
// Cursor: command/args/env or url; Claude Code and VS Code add type
// ("stdio", "sse", "http"), VS Code envFile and cwd.
type clientServer struct {
	Type     string            `json:"type"`
	Command  string            `json:"command"`
	Args     []string          `json:"args"`
	Env      map[string]string `json:"env"`
	EnvFile  string            `json:"envFile"`
	Cwd      string            `json:"cwd"`
	URL      string            `json:"url"`
	Headers  map[string]string `json:"headers"`
	Disabled bool              `json:"disabled"`
}

// convertClientConfig reads {"mcpServers": {...}} (Claude Desktop, Claude
// Code, Cursor, Windsurf), {"servers": {...}} (VS Code mcp.json) or
// {"mcp": {"servers": {...}}} (VS Code settings.json).
func convertClientConfig(data []byte) (*conversion, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		return nil, fmt.Errorf("not a JSON object: %w", err)
	}
	conv := &conversion{Key: "mcpServers"}
	raw, ok := top["mcpServers"]
	if !ok {
		if raw, ok = top["servers"]; ok {
			conv.Key = "servers"
		} else if mcpRaw, has := top["mcp"]; has {
			var inner map[string]json.RawMessage
			if json.Unmarshal(mcpRaw, &inner) == nil {
				raw, ok = inner["servers"]
				conv.Key = "servers"
			}
		}
	}
	if !ok {
		return nil, errNoServers
	}
	// Decode into an ordered list: the generated file keeps the client's
	// order, which is the order tools are listed in.
	names, entries, err := orderedObject(raw)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", conv.Key, err)
	}
	used := map[string]bool{}
	for i, name := range names {
		var cs clientServer
		if err := json.Unmarshal(entries[i], &cs); err != nil {
			return nil, fmt.Errorf("%s.%s: %w", conv.Key, name, err)
		}
		if cs.Disabled {
			conv.warn("%q is disabled in the client config: left out", name)
			continue
		}
		if runsItself(cs) {
			// Converting it would put scratchpad-mcp behind itself (init
			// run twice, or on a config that already mounts it).
			conv.warn("%q runs scratchpad-mcp itself: left out (it is what the client mounts, not one of its upstreams)", name)
			continue
		}
		s, err := convertServer(conv, name, cs)
		if err != nil {
			return nil, fmt.Errorf("%s.%s: %w", conv.Key, name, err)
		}
		s.Name = uniqueName(serverName(name), used)
		if s.Name != name {
			s.Original = name
			conv.warn("server %q is named %q in the config (server names may use only a-z A-Z 0-9 _ - .)", name, s.Name)
		}
		conv.Servers = append(conv.Servers, s)
	}
	return conv, nil
}

// runsItself reports whether a client's server entry runs scratchpad-mcp:
// its command, or an argument (npx scratchpad-mcp, a path to the binary),
// is named scratchpad-mcp, or is this very executable under another name
// or path (a symlink, a copy's hard link, a command on PATH): the files
// are compared with [os.SameFile].
func runsItself(cs clientServer) bool {
	self, err := os.Executable()
	var selfInfo os.FileInfo
	if err == nil {
		selfInfo, _ = os.Stat(self)
	}
	for i, a := range append([]string{cs.Command}, cs.Args...) {
		base := strings.TrimSuffix(filepath.Base(filepath.FromSlash(a)), ".exe")
		if base == "scratchpad-mcp" || strings.HasPrefix(base, "scratchpad-mcp@") {
			return true
		}
		// The command is looked up as the client would (PATH); an
		// argument only when it is a path (npx's package names are not).
		if selfInfo == nil || a == "" || i > 0 && !strings.ContainsRune(filepath.FromSlash(a), filepath.Separator) {
			continue
		}
		p := a
		if i == 0 {
			if p, err = exec.LookPath(a); err != nil {
				continue
			}
		}
		if fi, err := os.Stat(p); err == nil && os.SameFile(fi, selfInfo) {
			return true
		}
	}
	return false
}

// secret keeps a credential out of the written config: a value that
// [redact.LooksLikeCredential] says is one, by its name (key) or by
// itself (the one rule for env values, headers, URL query parameters and
// arguments), is replaced by {{ env.VAR }} (after the scheme of "Bearer
// …"), and the variable is listed, with what it was (what), for the user
// to set where scratchpad-mcp runs. A value that already is a
// placeholder stays.
func (c *conversion) secret(server, what, key, envVar, v string) string {
	if strings.Contains(v, "{{") || !redact.LooksLikeCredential(key, v) {
		return v
	}
	return c.moveToEnv(server, what, envVar, v)
}

// moveToEnv is v replaced by {{ env.envVar }}, recorded in c.Secrets.
// The same secret under the same name is one variable; another value
// under a name already taken gets a name of its own (NAME_2).
func (c *conversion) moveToEnv(server, what, envVar, v string) string {
	scheme := ""
	if sc, rest, ok := strings.Cut(v, " "); ok && (strings.EqualFold(sc, "Bearer") || strings.EqualFold(sc, "Basic") || strings.EqualFold(sc, "Token")) && rest != "" {
		scheme, v = sc+" ", rest
	}
	name := envVar
	for i := 2; ; i++ {
		j := slices.IndexFunc(c.Secrets, func(s secretVar) bool { return s.Var == name })
		if j < 0 {
			c.Secrets = append(c.Secrets, secretVar{Var: name, What: what, Server: server, value: v})
			break
		}
		if c.Secrets[j].value == v {
			break
		}
		name = fmt.Sprintf("%s_%d", envVar, i)
	}
	return scheme + "{{ env." + name + " }}"
}

// secretURL keeps the credentials of a URL (a server's, or one in its
// arguments: where says which) out of the written config: the userinfo's password always, a user name that
// [config.SecretSegment] or [redact.Credential] takes for one, and every
// query parameter by [conversion.secret]'s rule. It works on the raw
// text (the URL may already hold {{ env.NAME }}), so what is not a
// credential stays byte for byte.
func (c *conversion) secretURL(server, where, raw string) string {
	scheme, rest, ok := strings.Cut(raw, "://")
	if !ok {
		return raw
	}
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		end = len(rest)
	}
	authority, tail := rest[:end], rest[end:]
	if at := strings.LastIndexByte(authority, '@'); at >= 0 && !strings.Contains(authority[:at], "{{") {
		user, host := authority[:at], authority[at:]
		if name, pw, hasPW := strings.Cut(user, ":"); hasPW && pw != "" {
			user = name + ":" + c.moveToEnv(server, "the password in its "+where, envName(server, "password"), pw)
		} else if !hasPW && (config.SecretSegment(unescape(name)) || redact.Credential(unescape(name))) {
			user = c.moveToEnv(server, "the user name in its "+where, envName(server, "url_user"), name)
		}
		authority = user + host
	}
	path, query, hasQ := strings.Cut(tail, "?")
	if hasQ {
		query, frag, hasF := strings.Cut(query, "#")
		params := strings.Split(query, "&")
		for i, kv := range params {
			k, v, _ := strings.Cut(kv, "=")
			if v != "" {
				params[i] = k + "=" + c.secret(server, "query parameter "+unescape(k)+" in its "+where, unescape(k), envName(server, unescape(k)), unescape(v))
				if params[i] == k+"="+unescape(v) {
					params[i] = kv // not a credential: as it was written
				}
			}
		}
		tail = path + "?" + strings.Join(params, "&")
		if hasF {
			tail += "#" + frag
		}
	}
	return scheme + "://" + authority + tail
}

// secretArgs keeps the credentials in a command's arguments out of the
// written config, by the rule of env values and URLs (server-postgres
// takes its connection string, password and all, as an argument): a URL's
// password, user name token and query values ([conversion.secretURL]);
// the value of NAME=value or --name=value, and the argument after
// --name, when the name says it is a credential's; and any argument that
// is a credential by itself (ghp_…). Each becomes {{ env.VAR }}.
func (c *conversion) secretArgs(server string, args []string) {
	for i, a := range args {
		switch name, v, isKV := argKV(a); {
		case strings.Contains(a, "://"):
			args[i] = c.secretURL(server, "args", a)
		case isKV:
			args[i] = a[:len(a)-len(v)] + c.secret(server, "argument "+name, name, envName(server, name), v)
		case i > 0 && strings.HasPrefix(args[i-1], "-") && !strings.Contains(args[i-1], "=") && !strings.HasPrefix(a, "-"):
			flag := strings.TrimLeft(args[i-1], "-")
			args[i] = c.secret(server, "argument after "+args[i-1], flag, envName(server, flag), a)
		default:
			args[i] = c.secret(server, "an argument", "", envName(server, "secret"), a)
		}
	}
}

// argKV splits NAME=value and --name=value (the name made of letters,
// digits, _ . -), ok false for any other argument.
func argKV(a string) (name, v string, ok bool) {
	k, v, ok := strings.Cut(a, "=")
	k = strings.TrimLeft(k, "-")
	if !ok || k == "" || strings.IndexFunc(k, func(r rune) bool {
		return !(r == '_' || r == '.' || r == '-' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
	}) >= 0 {
		return "", "", false
	}
	return k, v, true
}

// unescape is s with URL escapes decoded, or s when it has a bad one.
func unescape(s string) string {
	if u, err := url.QueryUnescape(s); err == nil {
		return u
	}
	return s
}

// envName is the variable a secret header of server is read from:
// SERVER_HEADER, upper case, other characters as '_'.
func envName(server, header string) string {
	var b strings.Builder
	for _, r := range strings.ToUpper(server + "_" + strings.TrimPrefix(strings.ToLower(header), "x-")) {
		if r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return strings.ReplaceAll(b.String(), "_AUTHORIZATION", "_TOKEN")
}

func (c *conversion) warn(format string, args ...any) {
	c.Warnings = append(c.Warnings, fmt.Sprintf(format, args...))
}

func convertServer(conv *conversion, name string, cs clientServer) (convertedServer, error) {
	s := convertedServer{}
	typ := strings.ToLower(cs.Type)
	switch {
	case cs.Command != "" && (typ == "" || typ == "stdio"):
		s.Transport = config.TransportStdio
		s.Cmd = append([]string{cs.Command}, cs.Args...)
		for i := range s.Cmd {
			s.Cmd[i] = conv.placeholders(name, s.Cmd[i])
		}
		conv.secretArgs(name, s.Cmd[1:])
		if len(cs.Env) > 0 {
			s.Env = map[string]string{}
			for k, v := range cs.Env {
				s.Env[k] = conv.secret(name, "env "+k, k, k, conv.placeholders(name, v))
			}
		}
		s.Cwd = conv.placeholders(name, cs.Cwd)
		if cs.EnvFile != "" {
			conv.warn("%q: envFile %q is not supported: copy its variables into env", name, cs.EnvFile)
		}
	case cs.URL != "":
		switch typ {
		case "sse":
			s.Transport = config.TransportSSE
		case "http", "streamable-http", "streamablehttp", "streamable_http", "http_streamable":
			s.Transport = config.TransportHTTPStreamable
		case "":
			// No type: clients that guess try streamable HTTP first;
			// a URL ending in /sse is the legacy transport's convention.
			s.Transport = config.TransportHTTPStreamable
			if strings.HasSuffix(strings.TrimRight(cs.URL, "/"), "/sse") {
				s.Transport = config.TransportSSE
			}
		default:
			return s, fmt.Errorf("unknown type %q for a url server (want sse or http)", cs.Type)
		}
		s.URL = conv.secretURL(name, "url", conv.placeholders(name, cs.URL))
		if len(cs.Headers) > 0 {
			s.Headers = map[string]string{}
			for k, v := range cs.Headers {
				s.Headers[k] = conv.secret(name, "header "+k, k, envName(name, k), conv.placeholders(name, v))
			}
		}
	case cs.Command != "":
		return s, fmt.Errorf("unknown type %q for a command server (want stdio)", cs.Type)
	default:
		return s, errors.New("neither command nor url")
	}
	return s, nil
}

var (
	// ${env:NAME} (VS Code), ${NAME} and ${NAME:-default} (Claude Code).
	// Lower-case ${name} is left alone: VS Code uses it for its own
	// variables (${workspaceFolder}), which have no meaning here.
	placeholderRE = regexp.MustCompile(`\$\{(env:)?([A-Za-z_][A-Za-z0-9_]*)(:-([^}']*))?\}`)
	inputRE       = regexp.MustCompile(`\$\{input:[^}]*\}`)
	otherVarRE    = regexp.MustCompile(`\$\{[a-z][A-Za-z]*\}`)
)

// placeholders rewrites the clients' environment placeholders into the
// config's {{ env.NAME }} syntax, so secrets stay in the environment.
func (c *conversion) placeholders(server, s string) string {
	if inputRE.MatchString(s) {
		c.warn("%q: %s prompts for input in VS Code; put the value (or {{ env.NAME }}) in the config", server, inputRE.FindString(s))
	}
	s = placeholderRE.ReplaceAllStringFunc(s, func(m string) string {
		sub := placeholderRE.FindStringSubmatch(m)
		name := sub[2]
		if sub[1] == "" && strings.ToUpper(name) != name {
			if otherVarRE.MatchString(m) {
				c.warn("%q: %s is a client variable with no meaning here: replace it", server, m)
			}
			return m
		}
		if sub[3] != "" {
			return "{{ env." + name + " | default: '" + sub[4] + "' }}"
		}
		return "{{ env." + name + " }}"
	})
	return s
}

// serverName maps a client's server name to one the config accepts: the
// name becomes part of stored file names, so only a-z A-Z 0-9 _ - . are
// allowed (not . first), at most 64 bytes.
func serverName(name string) string {
	var b strings.Builder
	for i := 0; i < len(name) && b.Len() < 64; i++ {
		c := name[i]
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.' && b.Len() > 0
		if ok {
			b.WriteByte(c)
		} else if b.Len() > 0 && !strings.HasSuffix(b.String(), "-") {
			b.WriteByte('-')
		}
	}
	out := strings.Trim(b.String(), "-")
	if out == "" {
		out = "server"
	}
	return out
}

func uniqueName(name string, used map[string]bool) string {
	out := name
	for i := 2; used[out]; i++ {
		suffix := fmt.Sprintf("-%d", i)
		base := name
		if len(base)+len(suffix) > 64 {
			base = base[:64-len(suffix)]
		}
		out = base + suffix
	}
	used[out] = true
	return out
}

// orderedObject splits a JSON object into its keys and raw values in
// document order (a Go map would lose it).
func orderedObject(raw json.RawMessage) ([]string, []json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	tok, err := dec.Token()
	if err != nil {
		return nil, nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, nil, errors.New("not a JSON object")
	}
	var names []string
	var vals []json.RawMessage
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, nil, err
		}
		k, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, nil, fmt.Errorf("%s: %w", k, err)
		}
		names = append(names, k)
		vals = append(vals, v)
	}
	return names, vals, nil
}

// starterConfig renders the config file: the commented defaults, then the
// converted servers (or a commented example when there are none).
func starterConfig(conv *conversion, from string) string {
	var b strings.Builder
	b.WriteString(`# scratchpad-mcp configuration (written by scratchpad-mcp init).
#
# Unknown keys are errors, so a typo cannot silently turn interception off.
# Any string may use {{ env.NAME }} or {{ env.NAME | default: 'fallback' }}.
# Check it with: scratchpad-mcp doctor --config THIS_FILE

# Where stored outputs, the pad and usage.jsonl live (~ is expanded, a
# relative path is relative to this file). Default:
# $XDG_DATA_HOME/scratchpad-mcp, else ~/.local/share/scratchpad-mcp.
# memory_dir = "~/.local/share/scratchpad-mcp"

[agent]
# The model picks the tokenizer and the context window. Examples:
# model = "claude-sonnet-4-5"
# provider = "anthropic"
# context_window = 200000        # tokens; omit to use the built-in table

[agent.scratchpad]
enabled = true                   # divert large outputs to disk
context_safety_margin = 0.20     # usable budget = context_window x (1 - margin)
max_extraction_tokens = 10000    # cap on one exploration call (head, grep, ...)

# ---------------------------------------------------------------------------
# Upstream MCP servers. Each tool whose output reaches its threshold is
# saved under memory_dir/scratchpad/ and the model gets a short pointer.
# Thresholds map a tool-name pattern to min_tokens; the longest matching
# pattern wins; a tool no pattern matches is never intercepted.
`)
	if conv == nil || len(conv.Servers) == 0 {
		b.WriteString(`#
# [mcp.servers.files]
# cmd = ["npx", "-y", "@modelcontextprotocol/server-filesystem", "/home/me/data"]
# env = { NODE_OPTIONS = "--max-old-space-size=512" }
#
# [mcp.servers.files.scratchpad]
# "*" = { min_tokens = 5120 }
# "list_*" = { min_tokens = 2000 }
#
# [mcp.servers.remote]
# transport = "http_streamable"  # or "sse"
# url = "https://mcp.example.com/mcp"
# headers = { Authorization = "Bearer {{ env.REMOTE_TOKEN }}" }
#
# A server that asks for OAuth instead (no headers then): log in once
# with: scratchpad-mcp auth login --config FILE remote
# [mcp.servers.remote.auth]
# type = "oauth"
#
# [mcp.servers.remote.scratchpad]
# "*" = { min_tokens = 5120 }
`)
		return b.String()
	}
	fmt.Fprintf(&b, "#\n# Converted from %s.\n", from)
	for _, s := range conv.Servers {
		key := tomlKey(s.Name)
		b.WriteString("\n")
		if s.Original != "" {
			fmt.Fprintf(&b, "# %s in the client config.\n", tomlString(s.Original))
		}
		fmt.Fprintf(&b, "[mcp.servers.%s]\n", key)
		fmt.Fprintf(&b, "transport = %s\n", tomlString(s.Transport))
		switch s.Transport {
		case config.TransportStdio:
			fmt.Fprintf(&b, "cmd = %s\n", tomlArray(s.Cmd))
			if len(s.Env) > 0 {
				fmt.Fprintf(&b, "env = %s\n", tomlInline(s.Env))
			}
			if s.Cwd != "" {
				fmt.Fprintf(&b, "cwd = %s\n", tomlString(s.Cwd))
			}
		default:
			fmt.Fprintf(&b, "url = %s\n", tomlString(s.URL))
			if len(s.Headers) > 0 {
				fmt.Fprintf(&b, "headers = %s\n", tomlInline(s.Headers))
			}
		}
		b.WriteString("# timeout = \"60s\"              # per call\n")
		if s.Transport != config.TransportStdio && !hasAuthorization(s.Headers) {
			// The client did the OAuth login itself; the proxy must do its
			// own, and cannot tell from here whether the server asks.
			fmt.Fprintf(&b, "\n# No Authorization header: if the server asks for OAuth (most remote ones do),\n"+
				"# uncomment this and run `scratchpad-mcp auth login --config FILE %s` once.\n", shellQuote(s.Name))
			fmt.Fprintf(&b, "# [mcp.servers.%s.auth]\n# type = \"oauth\"\n", key)
		}
		fmt.Fprintf(&b, "\n[mcp.servers.%s.scratchpad]\n", key)
		fmt.Fprintf(&b, "\"*\" = { min_tokens = %d }\n", config.DefaultMinTokens)
	}
	return b.String()
}

// tomlKey quotes a key unless it is a bare key: a name with a dot
// would otherwise become a nested table.
func tomlKey(k string) string {
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return tomlString(k)
		}
	}
	if k == "" {
		return `""`
	}
	return k
}

// tomlString is a TOML basic string. Go's strconv.Quote is not one: it
// emits \x escapes TOML does not have.
func tomlString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\t':
			b.WriteString(`\t`)
		case '\r':
			b.WriteString(`\r`)
		default:
			if r < 0x20 || r == 0x7f {
				fmt.Fprintf(&b, `\u%04X`, r)
			} else {
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}

func tomlArray(vs []string) string {
	q := make([]string, len(vs))
	for i, v := range vs {
		q[i] = tomlString(v)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

func tomlInline(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = tomlKey(k) + " = " + tomlString(m[k])
	}
	return "{ " + strings.Join(parts, ", ") + " }"
}

// hasAuthorization reports whether headers set Authorization.
func hasAuthorization(headers map[string]string) bool {
	for k := range headers {
		if strings.EqualFold(k, "Authorization") {
			return true
		}
	}
	return false
}
