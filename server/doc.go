// Package server is the MCP adapter: the server clients talk to, on the
// official Go SDK (github.com/modelcontextprotocol/go-sdk), over stdio,
// streamable HTTP (resumable streams) and legacy SSE.
//
// # Basics
//
// Each client session gets a go-sdk server of its own, with the tools,
// resources and prompts its identity may see ([Options.Session] returns
// them as the neutral definitions of package tool) — so an agent's tool
// list, resource subscriptions and identity belong to its session alone.
// Everything the upstreams offer goes through a receiving middleware to
// package proxy with the upstreams' raw JSON:
//
//	srv := server.New(server.Options{Proxy: p, Session: own})
//	srv.ServeStdio(ctx, os.Stdin, os.Stdout)
//	http.Handle("/mcp", srv.StreamableHTTP(server.StreamableHTTPOptions{}))
//
// What go-sdk gives natively and the proxy relies on: an upstream's
// JSON-RPC error reaches the client with its code, message and data
// (handlers return a *jsonrpc.Error); requests to the client
// (sampling, elicitation, roots) and progress sent with a call's context
// travel on that call's own stream, in order, before its result; a
// request whose context ends is cancelled at the client; each session's
// logging level filters the log messages it gets.
//
// # Raw results
//
// go-sdk's handlers return its own result types. A forwarded result is
// one of those types embedded in a small wrapper that marshals as the
// upstream's bytes (see raw.go), so nothing an upstream sends is decoded
// into go-sdk's structs and re-encoded: unknown fields and future content
// types pass untouched. A forwarded tools/call result does not even go
// through encoding/json (which would validate and copy it twice, bytes
// already validated when read from the upstream): the stdio connection
// and the streamable HTTP one write the response around the upstream's
// bytes themselves (rawwire.go, httpconn.go). Only the legacy SSE
// transport still encodes it. The names the proxy exposes are also registered
// with the session's go-sdk server, which is how go-sdk knows to announce
// list changes; listing, calling and reading them is done with the raw
// JSON.
//
// # Two protocol eras
//
// A request that carries the 2026-07-28 envelope (params._meta's version,
// client capabilities and info: package [wire]) never reaches go-sdk. It
// is checked in go-sdk's order (rev20260728_http.go, rev20260728_stdio.go) and
// answered by one small function per method (methods20260728 in
// rev20260728_methods.go; a 2025 session's are methods2025 in route.go, and
// what the two share — the forwarded tools/call, the capabilities — is
// one function both call). It has no session: its caller (the front
// door's [Caller], or the stdio process) is an agent that lives from
// request to request (rev20260728_agents.go) and ends when idle
// ([StreamableHTTPOptions].AgentIdle), which is when its usage record is
// written. Results are stamped ([wire.Stamp]: resultType, serverInfo,
// cache hints) around the upstream's bytes. subscriptions/listen
// replaces the GET stream (rev20260728_listen.go). An upstream's input-required
// result reaches the client with a requestState sealed by the server
// (rev20260728_inputrequired.go); a 2025 upstream's question mid-call parks the call and asks
// the client with an input-required answer (rev20260728_parked.go).
//
// # The request, typed
//
// What the stages before the proxy make of a request (its session, its
// _meta, its 2026-07-28 envelope's log level, a retry's answers, who it
// is for) travels as one [proxy.Request], built in one place for both
// eras (proxyrequest.go); [Options].Identify fills who it is for (the
// agent whose budget it is charged to, whose stored outputs its
// references may name), once per request, and counts a tools/call.
// Nothing of it travels in the context, except for the own tools, which
// are go-sdk handlers of a context in the 2025 era: Identify's context
// carries the agent resolved for them.
//
// # Streamable HTTP
//
// The transport's server side is this package's own (streamable.go,
// httpconn.go), not go-sdk's handler, which encodes every message it
// writes and offers no connection to wrap. A session is a go-sdk
// ServerSession connected to an httpConn; the receiving middleware puts
// each request's mcp.RequestExtra in its handler's context, which is
// how what a handler sends finds that request's stream. A 2025 session
// has POST, GET, DELETE, Last-Event-ID resumption from the event store,
// the idle timeout; a 2026-07-28 request is one POST answered with one
// JSON object, or an event stream when notifications precede its answer.
//
// With a replicated [Options].State (replicas behind a load balancer) a
// 2025 session is a record any replica takes up (replica_recover.go), a claim
// counted against the session bounds of all replicas together
// (replica_claims.go), and two channels (replica_relay.go): what a copy of the session
// sends that no response carries where it is made reaches the GET stream
// another replica holds, and a DELETE on one replica ends every copy.
//
// # Calls end with their client
//
// Every request is handled under a context (callContext, session.go, in
// the receiving middleware every request passes) that ends when the
// client cancels it, when its client is gone (its streamable HTTP
// stream not resumed within [StreamableHTTPOptions].ResumeWindow, its
// legacy SSE stream or its stdio input closed) and when its session
// ends (DELETE, which answers at once, the idle timeout,
// [Server.Shutdown]); the server's own tools also stop at
// [Options].CallTimeout. A forwarded call whose context ends is
// cancelled at its upstream. The cause says which ([ErrClientGone],
// [ErrSessionEnded], [ErrCallTimeout]).
//
// The legacy SSE transport is ours too (sse.go): go-sdk's refuses, with
// a 400 before any server code runs, every method it does not know, which
// kept the skills extension's methods from working over it.
//
// # Front door
//
// Every HTTP request passes package frontdoor first (the bearer token,
// Host, Origin, identity headers, body deadline, connection bounds); it
// puts the request's frontdoor.Caller in its context, which is how a
// session belongs to its owner: a request of another owner naming a
// session is answered as for an unknown session. The body's size is
// bounded here ([StreamableHTTPOptions].MaxRequestBytes, 413).
//
// # Caveats
//
//   - Over legacy SSE go-sdk may build a session's server and not use it
//     (it asks for one to learn protocol versions), and over streamable
//     HTTP a POST that does not initialize ends its new session:
//     [Options.Session] must be cheap and free of side effects, and a
//     session is live from its first request.
//   - Requests forwarded to a client (sampling, elicitation, roots) are
//     decoded into go-sdk's types to be sent: a field go-sdk does not model
//     is dropped on the way to the client.
//   - The initialize answer waits (bounded) for upstreams still starting
//     and declares the server's own capabilities plus the union of the
//     upstreams'.
//   - One stdio connection speaks one era: initialize makes it a 2025
//     session, a 2026-07-28 request other than server/discover makes it
//     a 2026 one, and the other era's messages are refused (-32600).
//   - A parked call (a 2025 upstream asking a 2026-07-28 client) lives in
//     this process: its retry must reach the same process.
//   - Over stdio, a line that is not a JSON-RPC message is answered with
//     a JSON-RPC error (-32700, -32600) by the server itself: go-sdk would
//     end the session. A batch line is split for go-sdk and its answers
//     joined again into one array.
//   - Request ids are answered as sent, byte for byte, on every
//     transport; null and in-flight ids are refused (-32600); a
//     cancellation of the initialize is dropped (ids.go).
//   - Results keep the upstream's bytes, except line breaks between JSON
//     tokens over stdio (one message, one line) and all whitespace
//     between tokens over legacy SSE (go-sdk's encoding compacts it).
//
// # Telemetry
//
// With [Options].Telemetry set, every request of either era gets a
// server span, started where all of that era's requests pass (the 2025
// receiving middleware, the 2026-07-28 method dispatch), continuing the
// client's params._meta.traceparent; each tools/call ends with one audit
// record built from what the layers under it noted on the span
// (telemetry.Tally).
package server
