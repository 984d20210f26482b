// Package e2e holds the end-to-end tests that run scratchpad-mcp between
// real peers from the MCP ecosystem: the official TypeScript SDK as the
// client (client.mjs, everything.mjs) and
// @modelcontextprotocol/server-filesystem and server-everything as the
// upstreams, all installed from npm at the versions pinned in
// package-lock.json.
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
// scripts/deps.sh (run first by make test) installs the npm packages with
// npm ci into e2e/node_modules; the test runs npm ci itself when they are
// missing.
//
// # Caveats
//
// The tests are skipped, with a message saying why, when node or npm is
// not on PATH and under go test -short. Nothing else skips them: a missing
// package or a registry that cannot be reached is a failure.
package e2e
