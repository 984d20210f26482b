package config

import (
	"net/url"
	"os"
	"path/filepath"
	"time"

	"github.com/scratchpad-mcp/scratchpad-mcp/layout"
)

// Config is a loaded, validated configuration with every default filled in.
// Treat it as read-only once loaded: several goroutines read it.
type Config struct {
	Path      string // file loaded; "" for [Default]
	MemoryDir string // absolute, ~ expanded
	Agent     Agent
	Servers   []Server // in file order
	// Skipped is the servers left out because their table needs an unset
	// environment variable; only with [Options].SkipServersWithUnsetEnv.
	Skipped       []SkippedServer
	Orchestration Orchestration
	Pad           Pad
	Memory        Memory
	Explore       Explore
	HTTP          HTTP
	Retention     Retention
	Catalogue     Catalogue
	Redaction     Redaction
	Cluster       Cluster
	Telemetry     Telemetry
	// Deprecated says what the file sets that still works but will not:
	// each "file:line:col: key: what to write instead". serve logs them,
	// doctor prints them.
	Deprecated []string
}

// SkippedServer is a server [Options].SkipServersWithUnsetEnv left out.
type SkippedServer struct {
	Name       string
	MissingEnv []string // the unset variables, in file order
	Auth       bool     // its table has an auth table: `auth` would concern it
}

// Catalogue is [catalogue]: how upstream tools reach the client's listing.
type Catalogue struct {
	// Mode is CatalogueFull (default: every upstream tool is listed) or
	// CatalogueSearch (upstream tools are found with search_tools and
	// run with call_tool; only servers with listing = "always" are
	// listed).
	Mode string
}

// Catalogue modes.
const (
	CatalogueFull   = "full"
	CatalogueSearch = "search"
)

// Server listings in [CatalogueSearch] mode.
const (
	ListingSearch = "search" // found with search_tools (the default)
	ListingAlways = "always" // listed as in full mode
)

// Agent describes the model an agent runs on and its scratchpad settings.
type Agent struct {
	Model         string
	Provider      string
	ContextWindow int // tokens; 0: look the model up in a built-in table
	Scratchpad    Scratchpad
}

// Scratchpad is [agent.scratchpad]: interception and extraction limits.
type Scratchpad struct {
	Enabled             bool    // default true
	ContextSafetyMargin float64 // in [0,1); default 0.20
	MaxExtractionTokens int     // per exploration call; default 10000
	TurnDepthBonus      int     // advertised to orchestrators; default 6
	// ResultView is what the client shows the model of a tool result, and
	// so what is counted, charged and stored: ViewText (default), the
	// text content (structuredContent only when there is no text), or
	// ViewStructured, structuredContent whenever the result has it.
	ResultView string
	// MemoryTool is the name the memory tool is listed under
	// (DefaultMemoryTool, the name models know); "" offers none. A client
	// that gives the model a memory tool of its own renames or drops
	// this one. [memory] has the tool's other settings.
	MemoryTool string
}

// DefaultMemoryTool is [Scratchpad].MemoryTool when not set.
const DefaultMemoryTool = "memory"

// Values of [Scratchpad].ResultView (result_view).
const (
	ViewText       = "text"
	ViewStructured = "structured"
)

// Transport values of [Server.Transport].
const (
	TransportStdio          = "stdio"
	TransportSSE            = "sse"
	TransportHTTPStreamable = "http_streamable"
)

// Values of [Server].Protocol: which MCP revision the proxy speaks to an
// upstream.
const (
	// ProtocolAuto probes with server/discover and speaks 2026-07-28 to
	// a server that offers it, else initializes (2025-11-25). The default.
	ProtocolAuto = "auto"
	// Protocol20260728 speaks 2026-07-28 without falling back.
	Protocol20260728 = "2026-07-28"
	// Protocol2025 initializes (2025-11-25) without probing.
	Protocol2025 = "2025-11-25"
)

// Values of [Auth]: its type, grants and signing algorithms.
const (
	AuthOAuth = "oauth"

	GrantAuthorizationCode = "authorization_code"
	GrantClientCredentials = "client_credentials"
)

// SigningAlgorithms are the signing_algorithm values private_key_jwt
// accepts (JWS names, RFC 7518).
var SigningAlgorithms = []string{"RS256", "RS384", "RS512", "ES256", "ES384", "ES512"}

// Default values a file may leave out.
const (
	DefaultMinTokens = 5120 // pattern = {} in a scratchpad table
	DefaultTimeout   = 60 * time.Second
	// DefaultMaxResultBytes (512 MiB) is max_result_bytes when not set:
	// far above anything a model reads, and low enough that diverting
	// the largest result accepted stays near 1 GiB of memory.
	DefaultMaxResultBytes = 512 << 20
	// DefaultMaxAppDataBytes (8 MiB) is max_app_data_bytes when not set.
	DefaultMaxAppDataBytes = 8 << 20
	// NoAppData is [Server].MaxAppDataBytes for max_app_data_bytes = 0.
	NoAppData                  = -1
	DefaultRestartMaxAttempts  = 10
	DefaultRestartBackoffMax   = 30 * time.Second
	DefaultHTTPAddr            = "127.0.0.1:8931"
	DefaultCacheMB             = 256
	DefaultContextSafetyMargin = 0.20
	DefaultMaxExtractionTokens = 10000
	DefaultTurnDepthBonus      = 6
	DefaultPadHistory          = 20
	DefaultRedisPrefix         = layout.DefaultRedisPrefix
)

// NeverRestart as [Server.RestartMaxAttempts] (restart_max_attempts = -1)
// means a stdio server that exits stays down.
const NeverRestart = -1

// Server is one upstream MCP server, [mcp.servers.<name>].
type Server struct {
	Name      string
	Transport string // TransportStdio, TransportSSE or TransportHTTPStreamable

	// stdio. The process is Cmd[0] with arguments Cmd[1:] followed by Args.
	Cmd  []string
	Args []string
	Env  map[string]string // added to the inherited environment
	Cwd  string            // absolute, ~ expanded; "" inherits

	// sse / http_streamable.
	URL     string
	Headers map[string]string

	// Filter is mcp_filter: when FilterSet, only tools matching one of the
	// patterns are exposed (an empty list exposes none); when not, all are.
	Filter    []Pattern
	FilterSet bool

	Prefix string // exposed name is Prefix__tool when set
	// Shared is shared: with bearer tokens, one instance of this server
	// serves every owner instead of one instance per owner. Only for
	// stateless servers that hold no credentials: its requests to
	// clients (sampling, elicitation, roots) are refused and its log
	// messages are not forwarded, since they could belong to any owner.
	// Without bearer tokens there is one owner and it has no effect.
	Shared bool
	// Listing is listing: in [CatalogueSearch] mode, ListingAlways keeps
	// this server's tools in the client's listing; ListingSearch (or "")
	// leaves them to search_tools.
	Listing string
	// Protocol is protocol: [ProtocolAuto] (the default of a loaded
	// config), [Protocol20260728] or [Protocol2025]. "" (a Server built
	// in code, as before the key existed) is [Protocol2025]: initialize,
	// no probe. An sse server speaks only the 2025 revisions.
	Protocol string
	Timeout  time.Duration // per call; default 60s

	// RestartMaxAttempts bounds consecutive restarts of a stdio server:
	// default 10, [NeverRestart] (-1) for none. 0 means the default, so a
	// Server literal in a test behaves like a loaded one.
	RestartMaxAttempts int
	RestartBackoffMax  time.Duration // cap of the exponential backoff; default 30s

	// MaxResultBytes is max_result_bytes: the largest message (a result
	// as it comes on the wire) the proxy reads from this server. A bigger
	// one is skipped without being held in memory and its call fails
	// with a tool error saying so. 0 means [DefaultMaxResultBytes].
	MaxResultBytes int64

	// MaxAppDataBytes is max_app_data_bytes: the most bytes of
	// structuredContent a diverted result of an MCP Apps tool keeps for
	// its page (the model reads the pointer in content); a bigger one is
	// dropped and the pointer is an error result. 0 means
	// [DefaultMaxAppDataBytes]; [NoAppData] (the file's 0) keeps none.
	// Use [Server.AppDataBytes].
	MaxAppDataBytes int64

	// Thresholds is [mcp.servers.<name>.scratchpad] in file order. Use
	// [Server.Threshold] to look a tool up.
	Thresholds []Threshold

	// Auth is [mcp.servers.<name>.auth]: how the proxy authorizes itself
	// to a remote server. nil sends only the configured headers.
	Auth *Auth

	// Redaction is redaction: this server's redaction mode (RedactMask,
	// RedactFlag, RedactOff); "" follows [redaction] mode. See
	// [Config.RedactionMode].
	Redaction string
	// SecretsByReference is secrets_by_reference: a stored output handed
	// to this server's tools by reference goes as it is stored,
	// credentials included; false (the default) masks them as results
	// are masked.
	SecretsByReference bool
}

// Auth is [mcp.servers.<name>.auth] with type = "oauth": the proxy is an
// OAuth 2.1 client of the server, as the MCP authorization specification
// (2025-11-25) describes. Only sse and http_streamable servers have one.
type Auth struct {
	Type  string // AuthOAuth
	Grant string // GrantAuthorizationCode (default) or GrantClientCredentials

	// ClientID and ClientSecret are a pre-registered client; empty
	// ClientID registers one (a Client ID Metadata Document, else dynamic
	// registration). ClientSecret may come from {{ env.X }}.
	ClientID, ClientSecret string
	// ClientMetadataURL is the https URL of this client's Client ID
	// Metadata Document, used as the client_id where the authorization
	// server supports such documents and no ClientID is set.
	ClientMetadataURL string
	// Scopes are requested on top of what the server challenges for;
	// empty leaves the choice to the server (its challenge, else its
	// scopes_supported).
	Scopes []string
	// PrivateKeyFile (PEM, absolute) and SigningAlgorithm (RS256, ES256,
	// …) authenticate a client_credentials client with private_key_jwt
	// instead of a secret.
	PrivateKeyFile   string
	SigningAlgorithm string
}

// Threshold diverts outputs of tools matching Pattern once they reach
// MinTokens tokens.
type Threshold struct {
	Pattern   Pattern
	MinTokens int
}

// Orchestration is [orchestration]: per-worker overrides.
type Orchestration struct {
	Workers map[string]Worker // by worker name
}

// Worker is [orchestration.worker.<name>]. Every field left out inherits
// [agent] / [agent.scratchpad]; see [Config.AgentFor].
type Worker struct {
	Name          string
	Model         string // "" inherits
	Provider      string // "" inherits
	ContextWindow int    // 0 inherits
	Scratchpad    ScratchpadOverride
}

// ScratchpadOverride is [orchestration.worker.<name>.scratchpad]: nil
// fields inherit from [agent.scratchpad].
type ScratchpadOverride struct {
	Enabled             *bool
	ContextSafetyMargin *float64
	MaxExtractionTokens *int
	TurnDepthBonus      *int
	ResultView          *string
	MemoryTool          *string
}

// Pad is [pad]: the working-memory scratchpad.
type Pad struct {
	Enabled   bool          // default true
	Backend   string        // "file" (default) or "redis"
	Scope     string        // "agent" (default) or "run"
	Render    string        // "markdown" (default), "xml", "json" or "kv"
	MaxTokens int           // bound on a rendering; 0: unbounded
	EntryTTL  time.Duration // ledger entries expire after this; 0: never
	History   int           // versions kept in .history; default 20
	Format    string        // "markdown" (default) or "json"
	Schema    string        // JSON Schema path for format "json", absolute; "" none
	Sections  []Section     // nil: the pad package's default sections

	// Keyed values and their rendering (issue 16).
	DefaultTTL time.Duration // TTL of a key set without one; 0: never expires
	Header     string        // a line put first in every rendering
	ReadOnly   bool          // no update_scratchpad or append_scratchpad for this pad
	Template   string        // the text a new pad starts as (pad.md or pad.json form)

	// RedisURL is where pads live with backend "redis":
	// redis://[user:password@]host[:port][/db] or rediss://. It may hold a
	// password: print [Pad.RedactedRedisURL] instead.
	RedisURL    string
	RedisPrefix string        // starts every Redis key; default [DefaultRedisPrefix]
	RedisTTL    time.Duration // an idle pad's keys expire this long after its last write; 0: never
}

// RedactedRedisURL is RedisURL with any password replaced by "xxxxx", for
// messages and logs.
func (p Pad) RedactedRedisURL() string {
	u, err := url.Parse(p.RedisURL)
	if err != nil {
		return "(unparsable redis_url)"
	}
	return u.Redacted()
}

// Section is one [[pad.sections]] entry.
type Section struct {
	Name     string
	Cap      int // characters; 0: no cap
	Purpose  string
	Numbered bool
}

// Values of [Pad.Backend], [Pad.Scope], [Pad.Render] and [Pad.Format].
const (
	BackendFile    = "file"
	BackendRedis   = "redis"
	ScopeAgent     = "agent"
	ScopeRun       = "run"
	RenderMarkdown = "markdown"
	RenderXML      = "xml"
	RenderJSON     = "json"
	RenderKV       = "kv"
	FormatMarkdown = "markdown"
	FormatJSON     = "json"
)

// Explore is [explore].
type Explore struct {
	CacheBytes int64 // cache_mb × 2^20; default 256 MiB; 0 disables the cache
	// MaxCallsPerOwner is max_calls_per_owner: the exploration calls one
	// token owner's agents may run at once, together (each agent may run
	// 4). 0: the server's default (4).
	MaxCallsPerOwner int
	// CallTimeout is call_timeout: the time bound of one call of the
	// server's own tools (exploration, pad, artifacts); a forwarded
	// call has its server's timeout instead. 0: the server's default
	// (1 minute).
	CallTimeout time.Duration
	// MaxReferenceBytes is max_reference_bytes: the bytes one tool
	// call's references to stored outputs ({"$scratchpad": {"file": …}})
	// may put in its arguments, all together; a reference past it is
	// refused before anything is sent. Default [DefaultMaxReferenceBytes].
	MaxReferenceBytes int64
}

// DefaultMaxReferenceBytes is [Explore].MaxReferenceBytes's default, and
// maxReferenceBytes its largest value: a reference is sent whole in one
// message, which the upstream must hold.
const (
	DefaultMaxReferenceBytes = 64 << 20
	maxReferenceBytes        = 1 << 30
)

// HTTP is [http]: settings for serving over streamable HTTP and SSE.
type HTTP struct {
	Addr string // default 127.0.0.1:8931
	// PublicURL is public_url: the server's URL as owners' browsers reach
	// it (behind a proxy, TLS), where their OAuth logins begin
	// (/oauth/begin) and come back (/oauth/callback); with https the
	// login cookie is Secure. "": http:// and the listening address.
	PublicURL      string
	AllowedOrigins []string // extra Origins accepted besides loopback
	Tokens         []Token  // bearer tokens, [[http.tokens]] then the tokens file's; none: no authentication
	// TokensFile is [http] tokens_file, absolute; "" none. It holds
	// [[tokens]] entries like [[http.tokens]] and is where
	// `scratchpad-mcp token add` appends.
	TokensFile string
	// InlineTokens are the [[http.tokens]] alone: Tokens without the
	// tokens file's ([TokenSet] re-reads the file, not these).
	InlineTokens []Token
	// MaxSessions and MaxSessionsPerOwner bound the live HTTP sessions
	// (all, and one bearer token owner's); 0: the server's defaults
	// (2,000 and 500).
	MaxSessions, MaxSessionsPerOwner int
	// MaxConnections bounds the open HTTP connections; one over it is
	// answered 503 and closed. 0: the server's default (4,096).
	MaxConnections int
	// UpstreamIdle is upstream_idle: with bearer tokens each owner has
	// its own instances of the upstreams, started at its first session
	// and stopped once it has had none for this long. 0: 10 minutes.
	UpstreamIdle time.Duration
}

// Token is one [[http.tokens]] entry, or one [[tokens]] entry of the
// tokens file: a bearer token's owner and the token's SHA-256 (the
// configured token_sha256, or the hash of a token given in clear, which is
// not kept).
type Token struct {
	Owner  string
	SHA256 [32]byte
}

// Default returns the embedded defaults: memory_dir under the user's data
// directory ($XDG_DATA_HOME, else ~/.local/share, + /scratchpad-mcp), no
// upstream servers, scratchpad and pad on.
func Default() *Config {
	return defaultConfig(os.LookupEnv, os.UserHomeDir)
}

func defaultConfig(lookup func(string) (string, bool), home func() (string, error)) *Config {
	return &Config{
		MemoryDir: defaultMemoryDir(lookup, home),
		Agent: Agent{Scratchpad: Scratchpad{
			Enabled:             true,
			ContextSafetyMargin: DefaultContextSafetyMargin,
			MaxExtractionTokens: DefaultMaxExtractionTokens,
			TurnDepthBonus:      DefaultTurnDepthBonus,
			ResultView:          ViewText,
			MemoryTool:          DefaultMemoryTool,
		}},
		Orchestration: Orchestration{Workers: map[string]Worker{}},
		Pad: Pad{
			Enabled:     true,
			Backend:     BackendFile,
			Scope:       ScopeAgent,
			Render:      RenderMarkdown,
			History:     DefaultPadHistory,
			Format:      FormatMarkdown,
			RedisPrefix: DefaultRedisPrefix,
		},
		Memory:    defaultMemory(),
		Explore:   Explore{CacheBytes: DefaultCacheMB << 20, MaxReferenceBytes: DefaultMaxReferenceBytes},
		HTTP:      HTTP{Addr: DefaultHTTPAddr},
		Retention: defaultRetention(),
		Redaction: Redaction{Mode: RedactMask},
		Cluster:   Cluster{Prefix: layout.DefaultClusterPrefix, CacheMB: DefaultClusterCacheMB, Lease: DefaultClusterLease},
		Telemetry: defaultTelemetry(),
	}
}

// defaultMemoryDir follows the XDG base directory spec: a relative
// XDG_DATA_HOME is invalid there and is ignored.
func defaultMemoryDir(lookup func(string) (string, bool), home func() (string, error)) string {
	if d, ok := lookup("XDG_DATA_HOME"); ok && filepath.IsAbs(d) {
		return filepath.Join(d, "scratchpad-mcp")
	}
	h, err := home()
	if err != nil || h == "" {
		// No home (a bare container): stay usable rather than fail.
		return filepath.Join(os.TempDir(), "scratchpad-mcp")
	}
	return filepath.Join(h, ".local", "share", "scratchpad-mcp")
}
