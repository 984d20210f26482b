// A client driver for both protocol eras: the TypeScript SDK v2 client
// (@modelcontextprotocol/client, the 2026-07-28 client) or, with --era
// legacy, the v1 SDK (@modelcontextprotocol/sdk, the 2025 client) runs a
// script of operations against a server and prints one JSON line per
// result, for the Go tests to assert on.
//
//   node modern.mjs --era pin|auto|legacy --transport http --url URL [--token T] --ops JSON
//   node modern.mjs --era pin|auto|legacy --transport stdio --ops JSON -- CMD ARG...
//
// --era pin pins 2026-07-28 (server/discover must offer it, no fallback);
// auto probes with server/discover and falls back to initialize (2025);
// legacy is SDK v1's initialize handshake (2025-11-25), nothing else.
// The first line is the connection:
//   {"op":"connect","protocolVersion":"2026-07-28","era":"modern","server":{…}}
// then one line per op, {"op":…, "result":…} or {"op":…, "error":{"message","code","data","reason"}};
// an op that fails does not stop the script. Ops (JSON array):
//   {"op":"list"}                          tools/list → result.tools (names)
//   {"op":"list","until":"NAME","ms":30000} polls tools/list (bypassing the
//                                          client's cache) until NAME is listed
//   {"op":"call","name":"T","args":{…}}    tools/call → the result as received,
//                                          plus "elicited": elicitations answered during it;
//                                          a string "$diverted" anywhere in the arguments (nested
//                                          objects and arrays too) is the file of the last result
//                                          diverted (its _meta "scratchpad/diverted".file),
//                                          "$diverted0", "$diverted1", … the first, second, …
//   {"op":"listResources"}                 resources/list → the result
//   {"op":"readResource","uri":"U"}        resources/read → the result
//   {"op":"discover"}                      server/discover → the result (SDK v2 only)
//   {"op":"pause"}                         prints {"op":"paused"} and waits for a line on
//                                          stdin (a test acts between two ops: kills a replica)
// --served-by NAME adds "servedBy" to each op's line: that response header
// of the last POST answered (a balancer names the replica in it).
// --token T sends Authorization: Bearer T with every HTTP request (the
// token's owner is who calls).
// --extensions JSON declares capabilities.extensions (by id, e.g.
// {"io.modelcontextprotocol/ui":{"mimeTypes":["text/html;profile=mcp-app"]}}).
// The client declares elicitation (form) and accepts every elicitation with
// content made from the requested schema (booleans true, strings "yes",
// numbers 1, enums their first value), whether the server asked with a
// 2025 elicitation/create request or a 2026 input-required result (the
// SDK fulfils those through the same handler and retries the call).
// Exit status: 0 when it connected (even if ops failed), 1 when connecting
// failed (the connect line then carries the error), 2 on bad usage.

import { commandLine, errorOf, print, usageExit } from "./cli.mjs";

const usage = usageExit("modern.mjs", "node modern.mjs --era pin|auto|legacy --transport http|stdio --ops JSON (--url URL | -- CMD ARG...)");
const string = { type: "string" };
const { values: opts, cmd } = commandLine(
  { era: string, transport: string, url: string, ops: string, "served-by": string, token: string, extensions: string },
  usage,
);
if (!["pin", "auto", "legacy"].includes(opts.era)) usage("--era must be pin, auto or legacy");
const legacy = opts.era === "legacy";
// The two SDKs' classes: v1 registers handlers by schema and takes a
// result schema before the options in callTool; v2 by method name.
const sdk = legacy
  ? {
      ...(await import("@modelcontextprotocol/sdk/client/index.js")),
      ...(await import("@modelcontextprotocol/sdk/client/streamableHttp.js")),
      ...(await import("@modelcontextprotocol/sdk/client/stdio.js")),
      ...(await import("@modelcontextprotocol/sdk/types.js")),
    }
  : { ...(await import("@modelcontextprotocol/client")), ...(await import("@modelcontextprotocol/client/stdio")) };
let ops;
try {
  ops = JSON.parse(opts.ops ?? "[]");
} catch (e) {
  usage(`--ops is not JSON: ${e.message}`);
}
if (!Array.isArray(ops)) usage("--ops must be a JSON array");

// servedBy is the --served-by header of the last POST answered: ops run
// one at a time, so it is the replica that answered the op's request.
let servedBy = null;
const servedByFetch = async (url, init) => {
  if (opts.token) {
    const headers = new Headers(init?.headers);
    headers.set("Authorization", `Bearer ${opts.token}`);
    init = { ...init, headers };
  }
  const res = await fetch(url, init);
  if (opts["served-by"] && (init?.method ?? "GET") === "POST") servedBy = res.headers.get(opts["served-by"]);
  return res;
};

let transport;
if (opts.transport === "http") {
  if (!opts.url) usage("--transport http needs --url");
  transport = new sdk.StreamableHTTPClientTransport(new URL(opts.url), { fetch: servedByFetch });
} else if (opts.transport === "stdio") {
  if (cmd.length === 0) usage("--transport stdio needs -- CMD ARG...");
  transport = new sdk.StdioClientTransport({ command: cmd[0], args: cmd.slice(1), stderr: "inherit" });
} else {
  usage("--transport must be http or stdio");
}

const capabilities = { elicitation: { form: {} } };
if (opts.extensions) {
  try {
    capabilities.extensions = JSON.parse(opts.extensions);
  } catch (e) {
    usage(`--extensions is not JSON: ${e.message}`);
  }
}
const client = legacy
  ? new sdk.Client({ name: "scratchpad-e2e-legacy", version: "1.0.0" }, { capabilities })
  : new sdk.Client(
      { name: "scratchpad-e2e-modern", version: "1.0.0" },
      { versionNegotiation: { mode: opts.era === "pin" ? { pin: "2026-07-28" } : "auto" }, capabilities },
    );
// SDK v1 has no getter for the negotiated version: it tells the transport.
let negotiated;
if (legacy) {
  const set = transport.setProtocolVersion?.bind(transport);
  transport.setProtocolVersion = (v) => {
    negotiated = v;
    set?.(v);
  };
}

let elicited = 0;
// answer fills a requested schema with accepting values.
function answer(schema) {
  const content = {};
  for (const [k, p] of Object.entries(schema?.properties ?? {})) {
    if (Array.isArray(p.enum) && p.enum.length > 0) content[k] = p.enum[0];
    else if (p.type === "boolean") content[k] = true;
    else if (p.type === "number" || p.type === "integer") content[k] = 1;
    else content[k] = "yes";
  }
  return content;
}
const onElicit = async (req) => {
  elicited++;
  return { action: "accept", content: answer(req.params.requestedSchema) };
};
client.setRequestHandler(legacy ? sdk.ElicitRequestSchema : "elicitation/create", onElicit);

try {
  await client.connect(transport);
} catch (e) {
  print({ op: "connect", error: errorOf(e) });
  await client.close().catch(() => {});
  process.exit(1);
}
print({
  op: "connect",
  protocolVersion: (legacy ? negotiated : client.getNegotiatedProtocolVersion()) ?? null,
  era: legacy ? "legacy" : (client.getProtocolEra() ?? null),
  server: client.getServerVersion() ?? null,
});

// Below the Go side's 50 s for the whole run, so a request that hangs is
// reported as that op's error.
const timeout = 30_000;
let diverted = null;
const divertedAll = [];
// v2's cacheable verbs take cacheMode; refresh so a poll sees changes.
const ro = legacy ? { timeout } : { cacheMode: "refresh", timeout };
async function run(op) {
  switch (op.op) {
    case "list": {
      const deadline = Date.now() + (op.ms ?? 30_000);
      for (;;) {
        const { tools } = await client.listTools(undefined, ro);
        const names = tools.map((t) => t.name);
        if (!op.until || names.includes(op.until) || Date.now() > deadline) return { tools: names };
        await new Promise((r) => setTimeout(r, 200));
      }
    }
    case "call": {
      const before = elicited;
      const file = (v) => (v === "$diverted" ? diverted : /^\$diverted\d+$/.test(v) ? (divertedAll[Number(v.slice(9))] ?? null) : v);
      const deep = (v) =>
        typeof v === "string" ? file(v) : Array.isArray(v) ? v.map(deep) : v && typeof v === "object" ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, deep(x)])) : v;
      const args = deep(op.args ?? {});
      const params = { name: op.name, arguments: args };
      const res = legacy ? await client.callTool(params, undefined, { timeout }) : await client.callTool(params, { timeout });
      const d = res?._meta?.["scratchpad/diverted"]?.file;
      if (d) divertedAll.push((diverted = d));
      return { ...res, elicited: elicited - before };
    }
    case "listResources":
      return await client.listResources(undefined, ro);
    case "readResource":
      return await client.readResource({ uri: op.uri }, ro);
    case "discover":
      return await client.discover({ timeout });
    case "pause":
      print({ op: "paused" });
      await nextLine();
      return {};
    default:
      throw new Error(`unknown op ${JSON.stringify(op.op)}`);
  }
}
// nextLine resolves at the next line on stdin (made on first use: stdin
// is read only by scripts that pause).
let lines = null;
async function nextLine() {
  lines ??= (await import("node:readline")).createInterface({ input: process.stdin })[Symbol.asyncIterator]();
  return lines.next();
}
const by = () => (opts["served-by"] ? { servedBy } : {});
for (const op of ops) {
  servedBy = null;
  try {
    const result = await run(op);
    print({ op: op.op, name: op.name, result, ...by() });
  } catch (e) {
    print({ op: op.op, name: op.name, error: errorOf(e), ...by() });
  }
}
await client.close().catch(() => {});
process.exit(0);
