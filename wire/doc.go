// Package wire owns the wire shapes of both MCP protocol eras, so that the
// rest of the proxy (the server side and the upstream client alike) never
// tests a version string in an if.
//
// # Eras
//
// [Era2025] is the 2025 revisions ([Revisions2025]: initialize, a session, server→
// client requests); [Era20260728] is [Revision20260728], 2026-07-28: no initialize and no
// session, every request carrying its version, client capabilities and client
// info in params._meta (an [Envelope]), server/discover, input-required
// results instead of server→client requests, cache hints on list results.
// [Served] is every revision served, as server/discover and -32022 list them.
//
// # Checking a request
//
// The front door checks a 2026-07-28 request in go-sdk v1.8.0's order, so the
// same bad request gets the same error from the proxy as from go-sdk:
//
//	if _, ok := wire.Method(method); !ok { werr = wire.MethodNotFound(method) } // 404
//	era, werr := wire.Classify(r.Header, params) // version header vs _meta: -32020 / -32602
//	if era == wire.Era20260728 {
//		werr = wire.CheckHeaders(r.Header, method, params, bindings) // Mcp-Method/Name/Param: -32020
//		env, werr = wire.ParseEnvelope(params)                       // caps, clientInfo: -32602; version: -32022
//	}
//	werr = wire.CheckMethod(era, method) // removed in this era (initialize, ping in 2026): -32601, 404
//
// (each step only if the one before passed). Every check returns an [*Error]
// whose Status is the HTTP status to send it with ([StatusOf]); the
// constructors ([InvalidParams], [HeaderMismatch], [MethodNotFound],
// [MissingCapability], [UnsupportedVersion], [StateError]) fill it in.
//
// [Method] is the method table: which era has a method, the params member the
// Mcp-Name header repeats, whether it may answer input-required, whether its
// result is [Cacheable]. [ParamBindings] reads a tool's x-mcp-header
// annotations, [HeadersFor] writes the headers a client sends, and
// [EncodeHeaderValue] / [DecodeHeaderValue] are the "=?base64?…?=" sentinel.
// [EncodeEnvelope] is the client side of [ParseEnvelope]: the proxy writing
// the envelope into a request to a 2026-07-28 upstream.
//
// # Writing a result
//
// [Stamp] turns an upstream's raw result into a 2026-07-28 one: it writes
// resultType (unless the upstream set one), our serverInfo into _meta (the
// rest of _meta kept) and ttlMs/cacheScope ([Cache]) at the top level, by
// splicing bytes: the result is never decoded, and every upstream byte outside
// the members replaced is kept. [EncodeDiscover] and [ParseDiscover] are the
// server/discover result on both sides (the proxy answering it, the proxy
// probing an upstream with it: [Discover.Speaks20260728]).
//
// # Input-required results
//
// [ParseInputRequired] and [EncodeInputRequired] read and write an
// [InputRequired] result; [ParseRetry] reads the retry's inputResponses and
// requestState ([Retry]). The proxy's own requestState is sealed by a
// [Sealer]: HMAC-SHA256 over a [StatePayload] bound to owner, agent, method,
// name and arguments ([StateBinding], [AgentDigest], [ArgsDigest]) with an
// expiry; [Sealer.Open] refuses anything else with one of the ErrState*
// reasons ([ErrStateSignature], [ErrStateExpired], [ErrStateOwner], …).
//
// Package wire imports nothing of the project but internal/jsonscan.
package wire
