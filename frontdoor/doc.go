// Package frontdoor is what every HTTP request passes before any handler
// of the server (MCP, /events, /dashboard, /debug/*): the first stage of
// a request's path, which says who sends it and whether it may.
//
// # Basics
//
// [FrontDoor] wraps the server's mux. It checks, in order: the probes
// ([HealthPath], [ReadyPath]: no token, no data); the Host against DNS
// rebinding ([ReboundHost], [RefuseRebound]: a loopback listener reached
// under another name gets 403); the bearer token when tokens are
// configured (401 with WWW-Authenticate: Bearer; a valid one proves the
// connection, [ProveConnection]); the Origin (loopback or
// [FrontDoorOptions].AllowedOrigins); the identity headers
// ([FrontDoorOptions].Identify: the front door does not parse agents'
// identities); and a deadline for the body's arrival. It puts the
// request's [Caller] (its token's owner) in the context, once
// ([WithCaller]); everything that asks who sends a request reads
// [CallerOf]. A refused request's connection is closed with its answer.
//
//	handler := frontdoor.FrontDoor(frontdoor.FrontDoorOptions{Tokens: tokens, Identify: identify}, mux)
//	ln = frontdoor.LimitConnections(ln, frontdoor.ConnLimit{Max: 4096, Proving: true}, log)
//
// [LimitConnections] bounds the open connections; with bearer tokens
// ([ConnLimit].Proving) those no request has proven with a valid token
// hold a quarter of them at most ([UnprovenShare]), the oldest quiet one
// giving its place to a newcomer, so a flood of silent sockets cannot
// lock owners out.
//
// # Caveats
//
//   - Without a front door (tests, stdio) every request is the zero
//     [Caller]'s.
//   - A request body's size is bounded by the transport behind it, not
//     here.
package frontdoor
