// Package intercept is scratchpad-mcp's proxy: it connects to the upstream
// MCP servers of the config, re-exposes everything they offer, and diverts
// tool results at or above their token threshold to disk, returning a
// short [Pointer] instead. Diverting is the one intended difference: the
// rest passes through as if the client talked to the upstream itself.
//
// # Basics
//
// [New] builds a [Router] for the configured servers, [Router.Attach]
// registers their catalogue on an mcp-go server, [Router.Start] connects
// (each [Upstream] in the background, restarted with backoff when it dies;
// the client of upstreams is package upstream) and [Router.Close] stops
// them:
//
//	r := intercept.New(intercept.Options{Servers: cfg.Servers, Agent: resolve})
//	r.Attach(mcpServer) // before mcpServer serves
//	r.Start(ctx)
//	defer r.Close()
//	server.NewStdioServer(mcpServer).Listen(ctx, os.Stdin, r.Output(os.Stdout))
//
// The server's output must go through [Router.Output] (stdio) or
// [Router.OutputHTTP] (streamable HTTP, SSE): that is where upstream error
// codes are restored, the ids of requests forwarded to the client are
// learnt, requests reach legacy SSE clients and notifications keep their
// order (see Caveats).
//
// What passes through, over stdio, SSE and streamable HTTP upstreams:
//
//   - Tools: listed with their raw input schema; tools/call results below
//     threshold unchanged (every content type, structuredContent, isError,
//     _meta). A result at or above it is saved with [Save] and replaced by
//     a [Pointer]; a caller that passed a progressToken hears
//     notifications/progress ("counting tokens", "writing file") once
//     diverting takes longer than [Options.ProgressDelay].
//   - Resources, resource templates and prompts: registered on the server
//     and forwarded (resources/read text and binary, prompts/get with
//     arguments, completion/complete for prompt and template arguments).
//     Every upstream list is read to its last page.
//   - Requests an upstream sends while it handles a call
//     (sampling/createMessage, elicitation/create in form and URL mode,
//     roots/list) go to the client session whose call is in flight on that
//     upstream (outside any call, to the only session), and its answer
//     goes back. The client's declared capabilities decide: one it lacks
//     is answered with -32601.
//   - Errors: an upstream's JSON-RPC error reaches the client with its
//     code, message and data.
//   - Notifications: progress (under the caller's own token), logging
//     (logging/setLevel is forwarded to every upstream as the most verbose
//     level any session asked for; each session then gets only what its
//     own level lets through), cancellation both ways, list_changed for
//     tools, resources and prompts, resources/updated to the sessions that
//     subscribed (subscriptions are forwarded to the owning upstream once
//     and dropped when the last session leaves), a client's
//     roots/list_changed to every upstream, and a URL-mode
//     elicitation's completion to the session that was asked.
//
// # Names
//
// Tool and prompt names get the server's prefix when one is configured
// (Prefix__name); a name already taken is skipped with a warning. Resource
// URIs and templates are not rewritten unless two upstreams (or an upstream
// and the proxy's own resources) list the same one: the later server in
// config order is then exposed as "<server>+<uri>" ([CollisionSeparator]),
// for example "docs+file:///README.md", and reads, subscriptions and
// resources/updated are mapped back and forth.
//
// # Caveats
//
//   - mcp-go v1.2.1 answers every handler error with code -32603, so an
//     upstream's JSON-RPC error is returned to mcp-go with its code and data
//     hidden in its text, and the server's output must go through
//     [Router.Output] (stdio) or [Router.OutputHTTP] (streamable HTTP,
//     SSE), which put them back: the client then sees the upstream's
//     code, message and data unchanged. Without them it sees -32603 and a
//     marked message. -32042 (URL elicitation required) is mcp-go's own
//     and keeps its code either way. Go callers get an [*UpstreamError].
//   - Results, resources and prompts are re-encoded by mcp-go's types
//     (tool schemas excepted: they stay raw). Everything MCP defines comes
//     through byte for byte, as the tests check against a direct
//     connection; a field mcp-go v1.2.1 does not model is dropped.
//   - Upstreams are shared by all client sessions, so an upstream's own
//     request is routed to the most recent call in flight on it. Two
//     sessions calling the same upstream at the same moment cannot be told
//     apart: MCP does not say which call a server-to-client request serves.
//     A request with no call in flight (roots/list when roots change)
//     goes to the only client session, and is refused (-32603) when
//     several are connected: nothing says which one. A forwarded
//     request lives no longer than the call: a client that never answers
//     fails it when the call's timeout ends.
//   - With [Options.StartOnFirstClient] (stdio: one client) the upstreams
//     start with the client's initialize and are told exactly the
//     sampling, elicitation and roots capabilities it declared. Otherwise
//     (HTTP, SSE: any number of clients, arriving later) they are told
//     all three, and each request is checked against the capabilities of
//     the client it goes to.
//   - An initialize answer waits for upstreams still in their first
//     connection attempt (at most [Options.StartWait]) and declares the
//     proxy's own capabilities plus the union of its upstreams'. An
//     upstream that never connected counts as offering everything, and
//     capabilities cannot change during a session: an upstream that
//     connects later with a new capability is used by sessions that
//     start after it.
//   - mcp-go cannot delete a resource template: one an upstream stops
//     listing is hidden from resources/templates/list and reads of it fail.
//   - mcp-go's SSE server cannot send requests to its client, so for a
//     client served over legacy SSE the proxy does it itself: through
//     [Router.OutputHTTP] it writes the request to the client's event
//     stream and takes the answer out of the client's POST (see
//     sseFront). SSE upstreams can ask too: the proxy reads their stream
//     with a client of its own, not mcp-go's.
//   - An upstream's notifications/cancelled for its own request stops
//     the request forwarded to the client, and the client is sent
//     notifications/cancelled naming the id mcp-go gave that request
//     (mcp-go does not expose it: it is read from the output, see
//     [Router.Output]); so is a forwarded request whose call ends first.
//   - Progress and log messages an upstream sends before a result reach
//     the client before it over stdio and legacy SSE: the proxy writes
//     them itself, in order. Over streamable HTTP a call's answer waits
//     (at most 250 ms) until its output has shown them, so none is lost
//     (mcp-go drops one that a request's stream takes just as its answer
//     is written); but mcp-go puts a session's notifications on whichever
//     of its streams takes them first, so one may travel on the client's
//     listening stream and be read after the answer (1 call in 60 in
//     TestProgressArrivesBeforeTheResult's first runs).
//   - Lists keep the upstreams' order (servers in config order, after
//     the proxy's own items), not mcp-go's order by name. A URI no
//     upstream lists is read from the only upstream offering resources
//     (through a hidden catch-all template), as a direct client would;
//     with several it is not found. A tool no upstream lists is answered
//     by the proxy with -32602, as MCP specifies; some servers answer it
//     with a tool error instead. mcp-go's types omit false booleans
//     ("required": false, "hasMore": false), which MCP's schema defaults
//     to false.
//   - Tasks (protocol 2025-11-25, experimental: tasks/get, tasks/result,
//     tasks/list, tasks/cancel and task-augmented requests) are not
//     proxied and not declared; a tool an upstream offers only as a task
//     is listed but cannot be run through the proxy.
package intercept
