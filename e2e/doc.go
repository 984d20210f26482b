// Package e2e holds the end-to-end tests that run scratchpad-mcp between
// real peers from the MCP ecosystem: the official TypeScript SDK as the
// client (client.mjs, everything.mjs; SDK v2, the 2026-07-28 client, in
// modern.mjs) and @modelcontextprotocol/server-filesystem,
// server-everything and a modern-only SDK v2 server (modern-server.mjs) as
// the upstreams, all installed from npm at the versions pinned in
// package-lock.json, and the go-sdk's conformance everything-server.
//
// # Basics
//
// The test builds scratchpad-mcp into a temporary directory and generates a
// 5 MB JSON file. Then, for stdio, streamable HTTP and legacy SSE, it
// follows a new user's path: scratchpad-mcp init converts a Claude Desktop
// config (testdata/e2e/claude_desktop_config.json) that runs
// server-filesystem on the file's directory, scratchpad-mcp doctor must
// list read_text_file as intercepted, and client.mjs connects through
// scratchpad-mcp. The client reads the file through the proxy (it must come
// back as a pointer), then calls schema, iterate_over and grep on the
// stored output and makes a request over the extraction cap, which must
// come back as a structured read_too_large error. The client also declares
// roots and says they changed: server-filesystem then asks for them
// (roots/list, with no call in flight), and the request must reach the
// client through the proxy. The client prints every result as one JSON
// report; the Go test asserts on it, so failures show in go test output.
//
// TestEverythingThroughProxy runs everything.mjs, the same client with a
// scenario covering the whole protocol, against
// @modelcontextprotocol/server-everything (the MCP reference server)
// directly and through scratchpad-mcp over stdio, streamable HTTP and
// legacy SSE, and compares the reports: tools, resources, templates and
// prompts as listed, every result and error, what the server asked the
// client, progress, logging and resource updates.
//
// TestConformanceThroughProxy runs the official MCP conformance suite
// (@modelcontextprotocol/conformance, every server scenario, through
// conformance.mjs, which lets its CLI run on node 20) against the go-sdk's
// conformance everything-server (built from the module cache: go.mod names
// it as a tool), stateful over streamable HTTP directly, then through
// scratchpad-mcp served over streamable HTTP with that server as its
// upstream over stdio and over streamable HTTP. It reads each scenario's
// checks.json and fails for every check that passes directly but not
// through the proxy (or warns directly and fails through it), with a table
// of scenario/check, both statuses and the message; it logs the totals and
// the other differences. No tool pattern is configured, so nothing is
// diverted; scratchpad-mcp's own tools are listed beside the upstream's and
// tools-list passes with them. A scenario that prints nothing for 15 s is
// killed and counts as failed, and the rest run one by one, all within the
// test's deadline. SCRATCHPAD_BIN=path tests that binary instead of one
// built from this checkout.
//
// # MCP 2026-07-28
//
// TestConformance2026ThroughProxy is the gate for protocol revision
// 2026-07-28: the conformance suite 0.2.0-alpha.12 (npm alias
// conformance-2026; conformance.mjs runs it with CONFORMANCE_ENTRY), with
// --requirements 2026-07-28, against the everything-server directly
// (stateless streamable HTTP), then through scratchpad-mcp with it as an
// HTTP and as a stdio upstream. The checks that may still do worse through
// the proxy are listed in testdata/conformance-2026-known.txt; a check
// that does worse and is not listed fails the test, and so does a listed
// check that passes through the proxy on both upstreams, so every change
// that serves more of 2026-07-28 must shrink the file (UPDATE_KNOWN=1
// rewrites it from the run).
//
// modern.mjs drives a script of operations (list, call, listResources,
// readResource, discover) given as JSON and prints one JSON line per
// result: with SDK v2 pinned to 2026-07-28 or in auto mode, or with SDK
// 1.32.2 (--era legacy). TestModernClientHTTP and TestModernClientStdio run
// the 2026 client through scratchpad-mcp (negotiation, list, divert,
// explore, pad, confirm through an input-required round); TestUpstreamEras
// mounts modern-server.mjs beside server-everything and serves both to the
// 2025 and the 2026 client. TestModernPeersDirect runs the same driver
// against the peers with no proxy, so a failure of the others is the
// proxy's, not the harness's. A script may pause (a test acts between two
// ops) and, with --served-by, each line names the replica a balancer says
// answered: cmd/scratchpad-mcp's TestReplicasAcceptanceThroughHAProxy
// drives a run's agents through three replicas with it.
//
// # Outputs by reference
//
// TestReferencesWithServerFilesystem serves server-filesystem over
// streamable HTTP with two bearer tokens' owners and drives modern.mjs as
// the 2025 (--era legacy) and the 2026-07-28 (--era pin) client, with
// --token naming the owner: stored outputs handed to write_file and
// edit_file by reference ({"$scratchpad": {"file": "$diverted0"}}: the
// driver replaces "$divertedN" anywhere in the arguments) are written
// byte for byte, a JSONPath selection as JSON, two references in one
// call; a missing file and the other owner's are refused with nothing
// written; the budget's "left" is unchanged by the bytes substituted.
// TestReferencesBeforeAfter measures one task both ways (its figures are
// in docs/references.md).
//
// scripts/deps.sh (run first by make test) installs the npm packages with
// npm ci into e2e/node_modules; the test runs npm ci itself when they are
// missing.
//
// # Caveats
//
// The tests are skipped, with a message saying why, when node or npm is
// not on PATH (or node is older than 20) and under go test -short. With
// CI=true in the environment a missing or too old node or npm fails them
// instead, so a CI image without the peers cannot pass by skipping. Nothing
// else skips them: a missing package or a registry that cannot be reached
// is a failure.
package e2e
