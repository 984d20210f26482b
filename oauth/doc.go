// Package oauth is scratchpad-mcp's OAuth 2.1 client for remote upstreams
// ([mcp.servers.NAME.auth] with type = "oauth"), doing what the MCP
// authorization specification (2025-11-25) asks of a client: discovery,
// client registration, the authorization code flow with PKCE, tokens
// bound to the server (RFC 8707), refresh, step-up, client credentials.
// It logs no token and returns none in an error.
//
// # Basics
//
// A [Client] is one upstream's OAuth client for one owner; [New] takes
// the server's config and a [Store]. [Client.Wrap] wraps the upstream's
// HTTP transport: every request to the server's origin carries
// `Authorization: Bearer`, a token near its expiry is refreshed first,
// and a 401 (or a 403 insufficient_scope) gets a new token and the
// request sent once more, so the call that met it is not lost:
//
//	c := oauth.New(oauth.Options{Server: sc, Store: &oauth.Store{Dir: dir}})
//	hc := &http.Client{Transport: c.Wrap(http.DefaultTransport)}
//
// [Client.Login] is `scratchpad-mcp auth login`: it probes the server
// without a token, reads its 401 challenge and runs discovery:
//
//   - protected resource metadata (RFC 9728) from the challenge's
//     resource_metadata, else the well-known URL with the endpoint's path,
//     else at the root; its resource must be the endpoint or a parent of
//     it on the same origin, and becomes the resource parameter;
//   - the first authorization server's metadata: RFC 8414 then OpenID
//     Connect discovery, with the path inserted, then (OpenID) appended;
//     its issuer must be the one asked for, and it must list S256 in
//     code_challenge_methods_supported (no PKCE: no login);
//   - with no protected resource metadata at all, the 2025-03-26 rule:
//     the server's origin is the authorization server, with /authorize,
//     /token and /register when it has no metadata either.
//
// The client identity, in the specification's order: client_id (and
// client_secret) from the config; client_metadata_url (a Client ID
// Metadata Document) where the server says
// client_id_metadata_document_supported; dynamic registration (RFC 7591)
// of a public client with the loopback redirect. The scope asked for is
// the challenge's, else the resource's scopes_supported, else none, plus
// the configured scopes and those earlier step-ups asked for. The
// browser is opened with $SCRATCHPAD_BROWSER or the system's opener
// ([OpenBrowser]); the redirect comes back to 127.0.0.1 on a port of the
// system's choosing (RFC 8252), its state checked, its iss too (RFC
// 9207); the code is exchanged with the verifier and the resource.
// client_secret_basic is used where the server allows it, else
// client_secret_post; a public client sends none.
//
// With grant = "client_credentials" no person is needed: [Client.Token]
// discovers and gets a token itself, authenticated with the client
// secret or a private_key_jwt assertion (RFC 7523; RS256/384/512,
// ES256/384/512; aud is the issuer, as RFC 7523bis asks).
//
// [Store] keeps one JSON record per server, mode 0600, written
// atomically, in [DefaultDir] ($SCRATCHPAD_MCP_AUTH_DIR, else the user's
// configuration directory), never under memory_dir. A record is tied to
// the server's URL: a token is never sent to a URL it was not issued
// for. A record another process wrote (a login while serve runs) is read
// again at the next request.
//
// With [Store].Shared (replicas, [cluster] redis_url) the records are on
// the store every replica shares instead, read at every request, sealed
// with AES-256-GCM under a key kept beside where the files would be
// ([layout.OAuthSealKeyFile], 0600; every replica needs the same one,
// else [ErrSealKey]); a token request (refresh, client credentials) runs
// under the shared store's lock, one replica at a time, and the one that
// waited uses the token the other got.
//
// # Caveats
//
//   - Without a usable token a person must act: [Client.Token] returns a
//     [*LoginError] ([ErrLoginRequired]) naming the command to run. A
//     refresh token the authorization server refuses is such a case; an
//     unreachable authorization server is not (the call fails, the next
//     tries again).
//   - Step-up for a person cannot happen inside a call: the scope asked
//     for is stored, the call fails with a LoginError, and the next login
//     asks for it. client_credentials gets the new scope at once. Either
//     way at most [maxStepUps] per request.
//   - Owners of bearer tokens log in through the server ([WebLogins]).
//     The URL handed out is the server's own begin page, which names the
//     owner and the upstream and goes on to the authorization server
//     only once the browser proves it is the owner's (the owner's
//     scratchpad-mcp bearer token, posted in its form); the redirect
//     back completes only in that browser (a cookie whose hash the login
//     keeps). Whoever holds just the URL — the model, its provider, a log
//     — cannot complete the login. What it does not stop: a person who
//     has the owner's bearer token is the owner, and an owner who
//     proves and then lets someone else log in at the authorization
//     server gets that person's account. A login begun is handed out
//     again for [webLoginTTL]; once it completes, [Client.Changed] wakes
//     the upstream waiting for it, and [WebLogins].OnComplete lets the
//     server tell the owner's clients (notifications/elicitation/complete).
//   - On replicas ([WebLogins].Store with Shared) a pending login lives on
//     the shared store, not in the memory of the replica that began it:
//     sealed like a token record, named by its id, by its state's
//     SHA-256 and by owner and server (one URL per owner and server
//     across replicas). The begin page, the proof and the redirect back
//     each work on any replica; the proof and the redirect back take the
//     login's lock, and the redirect back deletes the login before the
//     code is exchanged, so it completes once across replicas.
//     [WebLogins].Clients gives the replica the redirect reached its
//     client of the owner's server, which stores the token on the shared
//     store for all. With the store away each step answers a page naming
//     [cluster] redis_url and changes nothing.
//   - Client ID Metadata Documents are used, not served: the document
//     at client_metadata_url is the operator's to host.
package oauth
