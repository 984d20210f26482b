// Package config loads scratchpad-mcp's TOML configuration: the upstream
// MCP servers to proxy, which of their tools are diverted to disk and at what
// size, the agent's context budget settings, the working-memory pad, and the
// HTTP listener.
//
// # Basics
//
// [Load] reads a file, interpolates environment variables, checks every key
// and value and fills in defaults; [Default] is the configuration used when
// there is no file. Both return a [Config] that is safe to share read-only.
//
//	cfg, err := config.Load("scratchpad.toml")
//	if err != nil {
//		log.Fatal(err) // scratchpad.toml:12:5: mcp.servers.k8s.scratchpad."list_[pods": invalid pattern: unclosed class '['
//	}
//	for i := range cfg.Servers {
//		s := &cfg.Servers[i]
//		if !s.Allowed("list_pods") {
//			continue // filtered out by mcp_filter
//		}
//		name := s.ExposedName("list_pods")          // "k8s__list_pods" with prefix = "k8s"
//		if n, ok := s.Threshold("list_pods"); ok { // ok=false: never diverted
//			_ = n // divert outputs of n tokens or more
//		}
//		_ = name
//	}
//	agent := cfg.AgentFor("researcher") // [agent] with the worker's overrides
//
// Tool names are matched with a [Pattern] (see [CompilePattern] for the
// syntax); [Pattern.Match] does not allocate, so it is fine on every call.
// [Server.Threshold] picks, among matching patterns, the longest one (by
// source text; with {a,b} alternates, the alternate that matched), and on a
// tie the smallest threshold.
//
// Errors: a file that cannot be read gives an error wrapping the [io/fs]
// error. Everything wrong inside the file gives a *[Error] — or [Errors],
// all problems in file order, when there are several — naming the file, the
// full key path and the line:column, and matching [ErrInvalid] with
// [errors.Is]. An invalid pattern's column points at the offending
// character and the *Error wraps a *[PatternError].
//
// # Caveats
//
//   - Unknown keys are errors, anywhere: a misspelt table must not silently
//     disable interception. The message suggests the closest known key.
//   - Only {{ env.NAME }} and {{ env.NAME | default: 'x' }} (or "x") are
//     interpolated, in string values only, never in keys. Other {{ ... }}
//     text (Go templates in arguments) is left as it is. An unset variable
//     without a default is an error ([ErrEnvUnset], an [*EnvUnsetError]
//     naming it); a variable set to "" takes the default when there is one
//     (like the shell's ${NAME:-x}). [Options].SkipServersWithUnsetEnv
//     leaves a server whose table needs one out instead, listed in
//     [Config].Skipped (serve and doctor: one server's missing secret
//     must not take the others' tools away).
//   - Bearer tokens are loaded once; a running server follows the tokens
//     file with a [TokenSet] (re-read when it changes, looked at once a
//     second at most). [ReadTokensFile] reads that file alone.
//   - Relative paths (memory_dir, cwd, pad.schema) are relative to the
//     directory of the config file, not the working directory: clients
//     start servers from anywhere. A leading ~ or ~/ is the home directory;
//     ~user is an error. Values in env and args are passed as written, and
//     so is the program in cmd (a bare name is looked up in PATH, a
//     relative path is relative to cwd, when the server starts).
//   - Worker overrides apply field by field (see [Config.AgentFor]), unlike
//     the reference agent framework, where a partial
//     [orchestration.worker.<name>.scratchpad] table resets the rest. A
//     worker that sets another model but no context_window does not inherit
//     [agent]'s window: its window comes from the model table.
//   - restart_max_attempts = 0 means the default (10); -1 ([NeverRestart])
//     means never restart.
//   - Load does no I/O beyond reading the file: pad.schema is resolved but
//     not opened, cmd is not looked up in PATH, urls are not dialled
//     (pad.redis_url is checked for shape here and reached with PING when
//     the server or doctor starts).
//
// # Reference
//
// Every key, its type and default. Durations are strings such as "30s",
// "2m" or "1h30m", or integers (seconds).
//
//	memory_dir                 string    $XDG_DATA_HOME/scratchpad-mcp, else ~/.local/share/scratchpad-mcp
//
//	[agent]
//	model                      string    ""  (tokenizer and context-window lookup)
//	provider                   string    ""
//	context_window             integer   0 = from the built-in model table; >= 1 when set
//
//	[agent.scratchpad]
//	enabled                    boolean   true
//	context_safety_margin      float     0.20, in [0, 1); usable = context_window × (1 − margin)
//	max_extraction_tokens      integer   10000, >= 1: cap on one exploration result
//	turn_depth_bonus           integer   6, in [0, 1000]: advertised to orchestrators
//	result_view                string    "text" | "structured": what the client shows the model of a
//	                                     result, and so what is counted, charged and stored ("text": the
//	                                     text content, structuredContent only when there is no text)
//	memory_tool                string    "memory": the memory tool's name (1-128 of A-Z a-z 0-9 _ - ., not another
//	                                     own tool's); "": no memory tool (a client with a memory tool of its own)
//
//	[mcp.servers.<name>]       one table per upstream, kept in file order; <name>: a-z A-Z 0-9 _ - .
//	transport                  string    "stdio" | "sse" | "http_streamable"; may be left out with cmd (stdio)
//	cmd                        string or array of strings (stdio, required): "npx -y pkg" is split like a shell
//	args                       array of strings, appended after cmd (stdio)
//	env                        table of strings, added to the inherited environment (stdio)
//	cwd                        string, working directory (stdio); inherited when absent
//	url                        string, http:// or https:// (sse and http_streamable, required)
//	headers                    table of strings, sent with every request (sse and http_streamable)
//	mcp_filter                 array of patterns; absent: every tool; []: none
//	prefix                     string    "": tools are exposed as <prefix>__<tool> when set (a-z A-Z 0-9 _ - .)
//	timeout                    duration  "60s", per call
//	restart_max_attempts       integer   10 (stdio); 0: default; -1: never restart
//	restart_backoff_max        duration  "30s" (stdio): cap of the exponential backoff
//	max_result_bytes           integer   536870912 (512 MiB), >= 1024: largest message read from
//	                                     this server; a bigger result is skipped unread and its
//	                                     call gets a tool error (the proxy never holds it)
//	max_app_data_bytes         integer   8388608 (8 MiB), >= 0: structuredContent a diverted result of an
//	                                     MCP Apps tool keeps for its page (docs/apps.md); 0: none (the tool
//	                                     then loses its outputSchema)
//	protocol                   string    "auto": probe with server/discover, speak 2026-07-28 when offered,
//	                                     else initialize | "2026-07-28" (no fallback; not with sse) |
//	                                     "2025-11-25" (initialize, no probe)
//	redaction                  string    [redaction] mode: this server's own "mask", "flag" or "off"
//	secrets_by_reference       boolean   false: a stored output handed to this server's tools by reference
//	                                     ({"$scratchpad": {"file": …}}) has its credentials masked; true sends it as stored
//
//	[mcp.servers.<name>.scratchpad]
//	"<pattern>" = { min_tokens = N }   divert this tool's outputs of N tokens or more (N >= 1)
//	"<pattern>" = N                    the same, shorter
//	"<pattern>" = {}                   N = 5120
//	                                   tools matched by no pattern are never diverted
//
//	[mcp.servers.<name>.auth]  sse and http_streamable only: the proxy is an OAuth 2.1 client of the server
//	type                       string    "oauth" (required)
//	grant                      string    "authorization_code" (default: a person logs in with
//	                                     `scratchpad-mcp auth login NAME`) | "client_credentials" (a service)
//	client_id, client_secret   strings   a pre-registered client; absent: a Client ID Metadata Document
//	                                     (client_metadata_url) or dynamic registration
//	client_metadata_url        string    https URL of this client's metadata document (used as client_id)
//	scopes                     array of strings, asked for besides what the server challenges for
//	private_key_file           string    PEM key for private_key_jwt (client_credentials, with signing_algorithm)
//	signing_algorithm          string    "RS256" | "RS384" | "RS512" | "ES256" | "ES384" | "ES512"
//	                                     headers may not set Authorization alongside; with shared = true
//	                                     only client_credentials (one login would be every owner's)
//
//	[orchestration.worker.<name>]              every key optional; absent keys inherit [agent]
//	model, provider, context_window
//	[orchestration.worker.<name>.scratchpad]   same keys as [agent.scratchpad], field by field
//
//	[pad]
//	enabled                    boolean   true
//	backend                    string    "file" (default: a directory under memory_dir) | "redis" (keys on a Redis server)
//	scope                      string    "agent" (default: one pad per agent) | "run" (shared by a run's agents)
//	render                     string    "markdown" (default) | "xml" | "json" | "kv"
//	max_tokens                 integer   0 = unbounded; bound on one rendering
//	entry_ttl                  duration  0 = ledger entries never expire
//	default_ttl                duration  0 = keys set without a ttl never expire
//	header                     string    ""; one line put first in every rendering
//	read_only                  boolean   false; true: no update_scratchpad or append_scratchpad
//	template                   string    ""; the text a new pad starts as (its pad.md or pad.json form)
//	history                    integer   20, in [1, 10000]: versions kept in .history/
//	format                     string    "markdown" (default) | "json"
//	schema                     string    JSON Schema file for format = "json"
//	redis_url                  string    required with backend = "redis": redis://[user:password@]host[:port][/db],
//	                                     or rediss:// for TLS; go-redis query options allowed (?dial_timeout=3s).
//	                                     Use {{ env.NAME }} for the password: errors and logs show it as xxxxx
//	redis_prefix               string    "scratchpad": starts every key (A-Z a-z 0-9 . _ : -); keys are
//	                                     <prefix>:{[owner:<owner>/]run:<run id>}:… (scope "run"),
//	                                     <prefix>:{[owner:<owner>/]agent:<name>}:… (an agent's own pad) and
//	                                     <prefix>:{artifacts:[owner:<owner>/]run:<run id>} (a run's artifacts)
//	redis_ttl                  duration  0 = never; with backend = "redis", a pad's keys (and a run's artifacts)
//	                                     expire this long after their last write (refreshed by every write; at most a year)
//
//	[[pad.sections]]           replaces the default sections when present (at least one)
//	name                       string, required, unique (case-insensitive), one line
//	cap                        integer, required: characters; 0 = no cap
//	purpose                    string    ""
//	numbered                   boolean   false
//	                           absent: [Pad.Sections] is nil and the pad uses its defaults:
//	                           Task 300, Plan 800 (numbered), Findings 1500, Ruled out 600,
//	                           Open questions 400, Next 200
//
//	[memory]                   the memory tool's settings (package memory): /memories on the pad's storage;
//	                                     whether it is offered is [agent.scratchpad] memory_tool
//	enabled                    boolean   deprecated (Config.Deprecated says so): false is memory_tool = "";
//	                                     true changes nothing; refused beside [agent.scratchpad] memory_tool
//	scope                      string    [pad] scope: "agent" (each agent its own /memories) or "run"
//	                                     (a run's agents share the run's; an agent outside a run has its own)
//	max_file_bytes             size      "64KiB", in [1 B, 16 MiB]: one file; a write past it is refused
//	max_scope_bytes            size      "1MiB", in [max_file_bytes, 1 GiB]: all files of one scope
//	max_files                  integer   200, in [1, 100000]: files of one scope
//	history                    integer   [pad] history: versions kept per file (pad history --memory PATH)
//	keep_deleted               integer   200: deleted files whose versions are kept (the most recent)
//	ttl                        age       "0" = never: a file neither read nor written this long expires
//	read_only                  boolean   false: true offers view only
//	read_only_paths            array of strings: files or folders ("/memories/guides/") the model may view,
//	                                     not change; each starts with /memories/
//
//	[explore]
//	cache_mb                   integer   256; 0 disables the parsed-file cache
//	max_calls_per_owner        integer   4, in [1, 100000]: exploration calls one token owner's agents run at
//	                                     once, together (each agent at most 4); one more answers busy
//	call_timeout               duration  "1m", in (0, 1h]: bound on one call of the server's own tools
//	                                     (exploration, pad, artifacts); past it the call stops and answers
//	                                     cancelled. A forwarded call has its server's timeout instead
//	max_reference_bytes        size      "64MiB", in [1 KiB, 1 GiB]: what one tool call's references to stored
//	                                     outputs put in its arguments, all together; past it the call is refused unsent
//
//	[retention]                what sweeps of memory_dir keep (serve: at start and every interval; gc on demand)
//	enabled                    boolean   true: serve sweeps
//	max_age                    age       "7d": stored outputs older than this go; "0" keeps them.
//	                                     Ages: "7d", "2w", "1d12h", "36h" or integer seconds, up to 10 years
//	runs_max_age               age       "30d": a run nothing in which changed for this long goes, whole
//	                                     (outputs, artifacts, pad); "0" keeps runs
//	max_bytes                  size      0 = no cap; above it, the oldest stored outputs go first.
//	                                     Sizes: "500MB", "2GiB" (KB… powers of 1000, KiB… of 1024) or integer bytes
//	usage_max_bytes            size      "16MiB": usage.jsonl above this is rotated to usage.jsonl.1; 0 never
//	usage_keep                 integer   3, in [1, 1000]: rotations kept (usage.jsonl.1 … .N)
//	interval                   duration  "1h", at least 1m: between sweeps in serve
//	sweep_timeout              duration  "30s": bound on one sweep (what is left waits for the next)
//	                           never removed: pads of live agents, artifacts of live runs, files a live
//	                           session was pointed to, the single-agent pad/ directory
//
//	[redaction]                credentials found in results (package redact; [Config.RedactionMode])
//	mode                       string    "mask": each becomes [REDACTED:kind:fp]; "flag": kept, reported; "off"
//	extra_patterns             array of { id, regex, keywords }: id 1-40 of a-z 0-9 - (not a built-in
//	                                     kind), regex RE2 not matching "" (group 1, if any, is the secret),
//	                                     keywords literals every match contains (else the regex's prefix)
//	allow                      array of regexps: a secret one matches is kept
//	entropy                    boolean   false: the generic, entropy-based rules (false positives) too
//	fingerprint_key            string    "": a random key per process; fingerprints stay the same across
//	                                     restarts and instances with one (use {{ env.NAME }})
//
//	[http]
//	addr                       string    "127.0.0.1:8931" (host:port)
//	allowed_origins            array of strings, scheme://host[:port], accepted besides loopback
//	tokens_file                string    a TOML file of [[tokens]] entries (same keys as [[http.tokens]]), relative
//	                                     to this file; `scratchpad-mcp token add OWNER --config F` appends to it
//	max_sessions               integer   2000, >= 1: live HTTP sessions in all; an initialize past it gets 429
//	max_sessions_per_owner     integer   500, >= 1: live HTTP sessions of one token owner (429 past it)
//	public_url                 string    http(s) URL of this server as browsers reach it: owners' OAuth
//	                                     logins begin at its /oauth/begin and come back to /oauth/callback; "": http://{addr}
//	[[http.tokens]]            bearer tokens; none configured (here and in tokens_file): no authentication
//	owner                      string, required: the token's owner, 1-64 of [A-Za-z0-9._-]; everything the
//	                                     owner's sessions store lives under memory_dir/owners/<owner>/
//	token                      string, unique: the token in clear (use {{ env.NAME }}); only its SHA-256 is kept
//	token_sha256               string, unique: instead of token, its SHA-256 as 64 hex digits
//
// Tool-name patterns ([CompilePattern]): a-z A-Z 0-9 _ - . / literally;
// * any run of characters; ? one character; [abc], [a-z] and [!abc] one
// character in or not in the class; {a,b} one of the alternates (no
// nesting). A pattern matches the whole upstream tool name (not the
// prefixed name). Anything else stops the config from loading.
package config
