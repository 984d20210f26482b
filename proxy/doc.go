// Package proxy is scratchpad-mcp's catalogue and router: it holds the
// configured upstreams (package upstream), combines what they offer, and
// routes each client request to the upstream that serves it — and each
// request or notification an upstream sends to the client session it
// belongs to. It holds no MCP library types: results, schemas and
// listings stay the upstreams' raw JSON, and client sessions are the
// small [Session] interface the MCP server adapter (package server)
// implements.
//
// # Basics
//
//	p := proxy.New(proxy.Options{Servers: cfg.Servers, OnChange: srv.Changed})
//	p.Start(ctx, nil) // or, with one client, at its initialize: MirrorOffer(its capabilities)
//	defer p.Close()
//	r := &proxy.Request{Session: session, Meta: meta, Agent: agent.Divert(), References: agent.References()}
//	raw, err := p.CallTool(ctx, r, "list_pods", args)
//
// Every method that forwards takes a [Request]: one client request, typed,
// as the stages before the proxy made it (who it is for, its session, a
// 2026-07-28 retry's answers). After forwarding, each stage reads it: the
// answer is masked (redact.go), charged once to r's agent
// ([Request.charge], clientrequest.go), diverted when large (package
// divert).
//
// [Proxy.CallTool] resolves the references to stored outputs in a
// tools/call's arguments ({"$scratchpad": {"file": …}}, package reference,
// [Request].References: refused unsent when one cannot be), forwards it,
// and hands the result to package divert, which passes it through
// untouched or replaces it with a pointer (always, when the call's
// arguments asked: "$scratchpad": {"store": true}). Resources, templates and prompts are listed, read and got the
// same way ([Proxy.ReadResource], [Proxy.GetPrompt], [Proxy.Complete]);
// lists keep the upstreams' order, servers in config order.
//
// # Names
//
// Tool and prompt names get the server's prefix when one is configured
// (Prefix__name); a name already taken (by the proxy's own tools or an
// earlier server) is skipped with a warning. Resource URIs and templates
// are not rewritten unless two upstreams (or an upstream and the proxy
// itself) list the same one: the later server's is then exposed as
// "<server>+<uri>" ([CollisionSeparator]), and reads, subscriptions and
// resources/updated are mapped back and forth.
//
// # What upstreams send on their own
//
//   - Progress for a request goes to its caller under the caller's own
//     token, before the caller's result (package upstream delivers a
//     message's notifications before its response); while diverting a
//     large result, the caller is told what diverting does once it takes
//     longer than [Options.ProgressDelay].
//   - Log messages go to every session of the proxy (one owner's); each
//     session's level filters them (the upstreams are told the most
//     verbose level any session asked).
//   - resources/updated goes to the sessions subscribed to that URI
//     (subscriptions are forwarded to the owning upstream once and dropped
//     when the last session leaves).
//   - sampling/createMessage, elicitation/create and roots/list go to the
//     session whose call they serve, checked against the capabilities it
//     declared, and are never guessed: a request on a
//     call's own answer stream (streamable HTTP), or naming the call's
//     progress token in its _meta, goes to that call's session;
//     otherwise to the session with calls in flight on that
//     upstream when there is one; with calls of several sessions in
//     flight it is refused (-32603, saying why). A URL elicitation's
//     completion follows it. Cancelling (the upstream's
//     notifications/cancelled, or the call ending first) cancels the
//     request at the client.
//
// # Owners
//
// With bearer tokens every owner gets a [Proxy] of its own from a
// [Pool]: its own instances of the upstreams, so one owner's requests,
// notifications, credentials and upstream state never reach another. A
// server with shared = true is one instance for all: its requests to
// clients are refused and its log messages dropped.
//
// # Caveats
//
//   - Over stdio and SSE, MCP does not say which call a server-to-client
//     request serves: with calls of two sessions (of one owner) in
//     flight on one such upstream, its request is refused rather than
//     sent to the wrong client. A request with no call in flight
//     (roots/list when roots change) goes to the only client session,
//     and is refused (-32603) when several are connected.
//   - An upstream that never connected counts as offering every
//     capability ([Proxy.Capabilities]).
//   - A URI no upstream lists is read from the only upstream offering
//     resources, as a direct client would; with several it is not found.
//
// # Telemetry
//
// With [Options].Telemetry set, every upstream request (one function,
// forward) gets a client span whose traceparent is written into the
// request's params._meta, a tools/call's divert gets its span and token
// counts, and upstream restarts are counted.
package proxy
