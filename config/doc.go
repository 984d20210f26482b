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
//     without a default is an error; a variable set to "" takes the default
//     when there is one (like the shell's ${NAME:-x}).
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
//
//	[mcp.servers.<name>.scratchpad]
//	"<pattern>" = { min_tokens = N }   divert this tool's outputs of N tokens or more (N >= 1)
//	"<pattern>" = N                    the same, shorter
//	"<pattern>" = {}                   N = 5120
//	                                   tools matched by no pattern are never diverted
//
//	[orchestration.worker.<name>]              every key optional; absent keys inherit [agent]
//	model, provider, context_window
//	[orchestration.worker.<name>.scratchpad]   same keys as [agent.scratchpad], field by field
//
//	[pad]
//	enabled                    boolean   true
//	backend                    string    "file" (default: a directory under memory_dir) | "redis" (keys on a Redis server)
//	scope                      string    "agent" (default: one pad per agent) | "run" (shared by a run's agents)
//	render                     string    "markdown" (default) | "xml" | "json"
//	max_tokens                 integer   0 = unbounded; bound on one rendering
//	entry_ttl                  duration  0 = ledger entries never expire
//	history                    integer   20, in [1, 10000]: versions kept in .history/
//	format                     string    "markdown" (default) | "json"
//	schema                     string    JSON Schema file for format = "json"
//	redis_url                  string    required with backend = "redis": redis://[user:password@]host[:port][/db],
//	                                     or rediss:// for TLS; go-redis query options allowed (?dial_timeout=3s).
//	                                     Use {{ env.NAME }} for the password: errors and logs show it as xxxxx
//	redis_prefix               string    "scratchpad": starts every key (A-Z a-z 0-9 . _ : -); keys are
//	                                     <prefix>:{run:<run id>}:… (scope "run") or <prefix>:{agent:[<owner>/]<name>}:…
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
//	[explore]
//	cache_mb                   integer   256; 0 disables the parsed-file cache
//
//	[http]
//	addr                       string    "127.0.0.1:8931" (host:port)
//	allowed_origins            array of strings, scheme://host[:port], accepted besides loopback
//	[[http.tokens]]            bearer tokens; none configured: no authentication
//	owner                      string, required: the agent the token authenticates
//	token                      string, required, unique (use {{ env.NAME }})
//
// Tool-name patterns ([CompilePattern]): a-z A-Z 0-9 _ - . / literally;
// * any run of characters; ? one character; [abc], [a-z] and [!abc] one
// character in or not in the class; {a,b} one of the alternates (no
// nesting). A pattern matches the whole upstream tool name (not the
// prefixed name). Anything else stops the config from loading.
package config
