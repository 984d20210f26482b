// End-to-end client: the official TypeScript MCP SDK drives scratchpad-mcp,
// which proxies @modelcontextprotocol/server-filesystem.
//
//   node client.mjs stdio FILE BIN ARG...   spawn BIN ARG... and talk over stdio
//   node client.mjs http  FILE URL          talk streamable HTTP to URL
//   node client.mjs sse   FILE URL          talk legacy SSE to URL (…/sse)
//
// FILE is the large JSON file server-filesystem serves. The script runs the
// scenario (list tools, small read passes through, large read is diverted,
// schema, iterate_over, grep, an over-cap read) and prints one JSON object
// with every step's result on stdout; e2e_test.go asserts on it. The client
// declares roots (FILE's directory) and says they changed once connected:
// server-filesystem then asks for them (roots/list) through the proxy, with
// no call in flight; report.rootsAsked counts the requests that arrived. It exits
// non-zero only when the SDK itself fails (connection, protocol, schema
// validation), printing the error on stderr.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
import { ListRootsRequestSchema, ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { dirname } from "node:path";
import { pathToFileURL } from "node:url";

const [mode, file, ...rest] = process.argv.slice(2);
if (!mode || !file || rest.length === 0) {
  console.error("usage: node client.mjs stdio FILE BIN ARG... | http FILE URL | sse FILE URL");
  process.exit(2);
}

let transport;
if (mode === "stdio") {
  transport = new StdioClientTransport({ command: rest[0], args: rest.slice(1), stderr: "inherit" });
} else if (mode === "http") {
  transport = new StreamableHTTPClientTransport(new URL(rest[0]));
} else if (mode === "sse") {
  transport = new SSEClientTransport(new URL(rest[0]));
} else {
  console.error(`unknown mode ${mode}`);
  process.exit(2);
}

const client = new Client({ name: "scratchpad-e2e", version: "1.0.0" }, { capabilities: { roots: { listChanged: true } } });
const report = { mode, steps: {}, rootsAsked: 0, rootsAskedAtStart: 0 };
client.setRequestHandler(ListRootsRequestSchema, () => {
  report.rootsAsked++;
  return { roots: [{ uri: pathToFileURL(dirname(file)).href, name: "data" }] };
});

// text joins a result's text contents; the SDK has already validated the
// result against the tool's outputSchema, if it has one.
const text = (res) => res.content.filter((c) => c.type === "text").map((c) => c.text).join("\n");

async function step(name, tool, args) {
  const started = Date.now();
  const res = await client.callTool({ name: tool, arguments: args }, undefined, { timeout: 120_000 });
  report.steps[name] = {
    tool,
    isError: res.isError === true,
    text: text(res),
    meta: res._meta ?? null,
    ms: Date.now() - started,
  };
  return res;
}

try {
  report.listChanged = 0;
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
    report.listChanged++;
  });
  await client.connect(transport);
  report.server = client.getServerVersion();
  // scratchpad-mcp answers at once and adds the upstream's tools when it
  // is ready (announced with notifications/tools/list_changed), as a
  // client that keeps its tool list current would see them.
  let tools = [];
  for (const deadline = Date.now() + 30_000; Date.now() < deadline; ) {
    ({ tools } = await client.listTools());
    if (tools.some((t) => t.name === "read_text_file")) break;
    await new Promise((r) => setTimeout(r, 200));
  }
  report.tools = tools.map((t) => t.name).sort();
  const waitRoots = async (n, ms) => {
    for (const deadline = Date.now() + ms; report.rootsAsked < n && Date.now() < deadline; ) {
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  if (mode === "stdio") {
    // Over stdio the upstreams start with this client and see its
    // capabilities: server-filesystem asks for roots at once.
    await waitRoots(1, 10_000);
    report.rootsAskedAtStart = report.rootsAsked;
  }
  const before = report.rootsAsked;
  await client.sendRootsListChanged();
  await waitRoots(before + 1, 20_000);
  report.readTextFileHasOutputSchema = tools.some((t) => t.name === "read_text_file" && t.outputSchema);

  await step("small_read", "read_text_file", { path: file, head: 3 });
  const big = await step("big_read", "read_text_file", { path: file });
  const stored = big._meta?.["scratchpad/diverted"]?.file;
  if (!stored) {
    throw new Error("large read was not diverted: " + text(big).slice(0, 300));
  }
  report.stored = stored;
  await step("schema", "schema", { file: stored });
  await step("iterate_over", "iterate_over", { file: stored, path: "$.items", fields: "id,status,owner.name", offset: 10, limit: 5 });
  await step("grep", "grep", { file: stored, pattern: '"status": "failed"', context: 0, max_matches: 3 });
  await step("over_cap", "read", { file: stored });
} catch (err) {
  console.error("e2e client:", err?.stack ?? err);
  console.log(JSON.stringify(report));
  await client.close().catch(() => {});
  process.exit(1);
}
console.log(JSON.stringify(report));
await client.close();
