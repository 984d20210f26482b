// Package upstream is scratchpad-mcp's one client of upstream MCP
// servers: raw JSON-RPC over stdio, legacy SSE and streamable HTTP, with
// no MCP library. Results, schemas and unknown fields stay the bytes the
// upstream sent ([json.RawMessage]); only what routing needs is decoded
// (ids, methods, list keys, capabilities).
//
// # Basics
//
// An [Upstream] is one configured server. [New] takes [Options] (the
// server's config and the handlers for what it sends unprompted);
// [Upstream.Start] connects in the background and keeps it connected:
//
//	u := upstream.New(upstream.Options{
//		Server:     cfg, // config.Server: name, transport, cmd or url, timeout, restart policy
//		ClientName: "scratchpad-mcp", ClientVersion: version,
//		OnNotify: func(u *upstream.Upstream, method string, params json.RawMessage) {
//			// progress, log messages, list changes, resource updates
//		},
//		OnRequest: func(ctx context.Context, u *upstream.Upstream, method string, params json.RawMessage) (json.RawMessage, error) {
//			// sampling, elicitation, roots: ask a client
//		},
//		OnListChanged: func(u *upstream.Upstream) { /* u.Tools(), u.Lists() changed */ },
//	})
//	u.Start(ctx, nil) // nil: offer sampling, elicitation and roots
//	defer u.Close()
//	res, err := u.Call(ctx, "tools/call", map[string]any{"name": "search", "arguments": args})
//
// [Upstream.Call] waits for the connection, sends one request and
// returns its raw result; an upstream's JSON-RPC error is an [*RPCError].
// [Upstream.Tools] and [Upstream.Lists] are the last listings, in the
// upstream's order, as [Item]s (name and raw object); [Upstream.State]
// says whether it is connected and, if not, why.
//
// What each transport does:
//
//   - stdio: the command runs as a child process speaking
//     newline-delimited JSON-RPC, lines of any length. It runs in a
//     process group of its own (Linux: and dies with the proxy, even on
//     SIGKILL; Windows: in a job object that dies with the proxy), and
//     its exit status and last stderr lines name the failure.
//   - legacy SSE (2024-11-05): a GET event stream whose endpoint event
//     (same origin only) names where to POST; the end of the stream is
//     the end of the session.
//   - streamable HTTP: every message is a POST (Accept: application/json,
//     text/event-stream) answered by JSON or an event stream; the session
//     id of the initialize answer and the negotiated protocol version go
//     on every later request; a GET listening stream carries what belongs
//     to no call (a server that answers that GET with 405, or with 404
//     outside a session, has none: that is logged once at INFO, without
//     the answer's body, and not asked again); a broken stream is resumed with Last-Event-ID after the
//     server's retry time; the session is DELETEd on Close. A 404 to a
//     request in a session means the server lost it (it restarted):
//     [Upstream] re-initializes at once and re-sends that request once,
//     so the caller does not see it.
//
// # Protocol revisions
//
// A server's protocol setting ([config.ProtocolAuto], the default of a
// loaded config) makes the connection probe first: server/discover with the
// 2026-07-28 envelope. An upstream that lists 2026-07-28 in its
// supportedVersions (after at most one retry on -32022) is spoken to in that
// revision: no initialize, no session, no GET stream, DELETE or ping; every
// request carries the envelope in params._meta (protocol version, our
// clientInfo, the caller's capabilities from [WithClient], {} otherwise;
// keys the caller set are kept) and, over HTTP, MCP-Protocol-Version,
// Mcp-Method, Mcp-Name and Mcp-Param-* (each tool's x-mcp-header bindings,
// read at listing; a tool whose annotations are invalid is dropped). A
// call given up over HTTP is its POST closed; an input-required result is
// an [*InputRequired] error; listings keep their ttlMs and
// [Upstream.Refresh] re-lists what expired; a subscriptions/listen stream
// carries list changes and resource updates. Any other answer to the probe
// (a JSON-RPC error, an HTTP error without one, no answer within
// min(timeout, 5 s) over stdio) means 2025: initialize as before, on the
// same connection (a stdio server that exited on the probe is started
// again, not counted as a failure); one that then refuses initialize with
// -32022 naming 2026-07-28 is probed again. [Upstream.Protocol] says which
// revision, and why. A [config.Server] built in code with no protocol, and
// protocol = "2025-11-25", initialize without probing.
//
// # Order
//
// Messages from the upstream are delivered one at a time, in the order
// the upstream sent them (per event stream over streamable HTTP), on a
// goroutine of the connection's, never its read loop: every
// notification sent before a response has been handed to
// [Options.OnNotify], and OnNotify has returned, before the
// [Upstream.Call] that the response answers returns. Requests from the
// upstream are served each on a goroutine of its own; the upstream's
// notifications/cancelled ends the context of the one it names.
//
// A remote upstream behind OAuth gets an [Authorizer] ([Options].Auth,
// an oauth.Client): the token, its refresh and the retry of a request
// the server refused happen below the transport. An upstream without a
// usable token is not a failure that backoff helps: it is tried again
// every 2 s (at once when a login comes back through the server)
// without counting against restart_max_attempts, and calls
// fail at once with an error matching oauth.ErrLoginRequired
// ([LoginError] gives its text: the command to run, or the login URL).
//
// # Caveats
//
//   - A message bigger than the server's max_result_bytes (default 512
//     MiB) is skipped as it is read, never held whole: the call it answers
//     (its id found in its first or last 4 KiB, else the only call in
//     flight) fails with a [*TooLargeError]. Messages are read into one
//     buffer each and handed over as they are; once a buffer has grown to
//     16 MiB (from 4 MiB in the first message after such a big one),
//     each growth returns the buffer it outgrew, and other garbage, to
//     the system (a forced collection, process-wide).
//   - OnNotify holds up everything the connection delivers after it: it
//     must not wait for the answer to a Call on the same upstream (it
//     would wait for itself). Start a goroutine for that.
//   - A call waits for an upstream that is connecting for as long as its
//     ctx allows, and for one restarting after a failure at most
//     min(server timeout, 10 s); then it fails with
//     [ErrUpstreamUnavailable], naming the upstream and its last error.
//     A call in flight when the connection dies fails with
//     [ErrUpstreamExited]; it is not re-sent (the upstream may have run
//     it), except for the request a streamable HTTP server refused with
//     404, which it cannot have run.
//   - Over streamable HTTP, order holds within one stream: a
//     notification the server puts on the listening stream instead of
//     the call's own stream may arrive after the call's answer.
//   - A POST or GET that cannot connect to the server ends the connection
//     (the supervisor reconnects with backoff); the call that met it fails
//     at once rather than hanging. A request whose own HTTP connection
//     breaks fails alone; the session goes on.
//   - Linux's parent-death signal reaches the upstream process, not what
//     it spawned: a grandchild (node under npx) sees its stdin close
//     instead. Elsewhere on unix there is no parent-death signal; on
//     Windows a child spawned in the instant before the upstream joins
//     its job escapes it.
package upstream
