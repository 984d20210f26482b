// An MCP Apps host, as the spec has one work (SEP-1865,
// @modelcontextprotocol/ext-apps 2.0.4): the TypeScript SDK v2 client
// declaring the io.modelcontextprotocol/ui extension (or not, --no-ui),
// ext-apps' host side (AppBridge) and the view side (App) joined by an
// in-memory transport where a browser would put an iframe's postMessage.
// It prints one JSON object, for the Go test to judge:
//
//   node apps.mjs --era legacy|pin [--no-ui] --tool T --poll P -- CMD ARG...
//
// The steps, each recorded under its name (a failed step has "error"):
//   connect  the negotiated protocol version and era
//   tools    tools/list as listed (name, outputSchema, _meta)
//   page     resources/read of T's _meta.ui.resourceUri (mimeType, bytes,
//            sha256 of its text)
//   model    the host calls T for the model: the result as received (the
//            SDK validates structuredContent against T's outputSchema)
//   view     with --no-ui absent: the page is given the model's result
//            (ui/notifications/tool-result) and what the App received is
//            recorded under "received"
//   poll     P's result: called by the page (App.callServerTool, forwarded
//            by AppBridge to the server) or, with --no-ui, by the host
//            itself (a host without the extension shows every tool to its
//            model)
//   budget   head on T's stored output ("before"), P called three times,
//            head again ("after"): the exploration footers say what the
//            agent's budget has left each time
//   byModel  when call_tool is listed (search mode): P called through it,
//            as the model would
// Exit status 0 when it connected, 1 when not, 2 on bad usage.

import { Client, InMemoryTransport } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { AppBridge } from "@modelcontextprotocol/ext-apps/app-bridge";
import { App } from "@modelcontextprotocol/ext-apps";
import { createHash } from "node:crypto";
import { commandLine, errorOf, print, usageExit } from "./cli.mjs";

const usage = usageExit("apps.mjs", "node apps.mjs --era legacy|pin [--no-ui] --tool T --poll P -- CMD ARG...");
const { values, cmd } = commandLine(
  { era: { type: "string" }, tool: { type: "string" }, poll: { type: "string" }, "no-ui": { type: "boolean" } },
  usage,
);
const opts = { ...values, ui: !values["no-ui"] };
if (!["legacy", "pin"].includes(opts.era)) usage("--era must be legacy or pin");
if (!opts.tool || !opts.poll || cmd.length === 0) usage("--tool, --poll and a command are required");

const UI = "io.modelcontextprotocol/ui";
const out = {};
// A failed step is {error, code}: the Go test reads "error" as a string.
const failure = (e) => ({ error: errorOf(e).message, code: e?.code });
const timeout = 30_000;
const step = async (name, f) => {
  try {
    out[name] = await f();
  } catch (e) {
    out[name] = failure(e);
  }
};
const within = (p, ms, what) =>
  Promise.race([p, new Promise((_, reject) => setTimeout(() => reject(new Error(`${what}: nothing within ${ms} ms`)), ms))]);

const capabilities = opts.ui ? { extensions: { [UI]: { mimeTypes: ["text/html;profile=mcp-app"] } } } : {};
const client = new Client(
  { name: "scratchpad-e2e-apps-host", version: "1.0.0" },
  { capabilities, versionNegotiation: { mode: opts.era === "pin" ? { pin: "2026-07-28" } : "legacy" } },
);
const transport = new StdioClientTransport({ command: cmd[0], args: cmd.slice(1), stderr: "inherit" });
try {
  await client.connect(transport);
} catch (e) {
  print({ connect: failure(e) });
  process.exit(1);
}
out.connect = { protocolVersion: client.getNegotiatedProtocolVersion() ?? null, era: client.getProtocolEra() ?? null };

let tools = [];
await step("tools", async () => {
  // The proxy lists an upstream once it is up: wait for the tool.
  const deadline = Date.now() + 20_000;
  for (;;) {
    ({ tools } = await client.listTools(undefined, { cacheMode: "refresh", timeout }));
    if (tools.some((t) => t.name === opts.tool) || Date.now() > deadline) break;
    await new Promise((r) => setTimeout(r, 200));
  }
  return tools.map((t) => ({ name: t.name, outputSchema: t.outputSchema ?? null, _meta: t._meta ?? null }));
});
const tool = tools.find((t) => t.name === opts.tool);
const uri = tool?._meta?.ui?.resourceUri;

await step("page", async () => {
  if (!uri) throw new Error(`${opts.tool} names no page`);
  const r = await client.readResource({ uri }, { timeout });
  const c = r.contents?.[0] ?? {};
  const text = c.text ?? "";
  return { uri: c.uri, mimeType: c.mimeType, bytes: Buffer.byteLength(text), sha256: createHash("sha256").update(text).digest("hex") };
});

let result;
await step("model", async () => {
  result = await client.callTool({ name: opts.tool, arguments: {} }, { timeout });
  return result;
});

// poll calls P as the page does (through AppBridge) or, for a host
// without the extension, as its model would.
let poll = async () => await client.callTool({ name: opts.poll, arguments: {} }, { timeout });
let closeView = async () => {};
if (opts.ui && result) {
  await step("view", async () => {
    const bridge = new AppBridge(
      client,
      { name: "scratchpad-e2e-apps-host", version: "1.0.0" },
      { serverTools: {}, serverResources: {} },
    );
    const [viewSide, hostSide] = InMemoryTransport.createLinkedPair();
    const app = new App({ name: "scratchpad-e2e-view", version: "1.0.0" }, {}, { autoResize: false });
    const got = new Promise((resolve) => {
      app.ontoolresult = (params) => resolve(params);
    });
    const initialized = new Promise((resolve) => {
      bridge.oninitialized = () => resolve();
    });
    await bridge.connect(hostSide);
    await app.connect(viewSide);
    await within(initialized, 10_000, "ui/notifications/initialized");
    await bridge.sendToolInput({ arguments: {} });
    await bridge.sendToolResult(result);
    const received = await within(got, 10_000, "ui/notifications/tool-result");
    poll = async () => await app.callServerTool({ name: opts.poll, arguments: {} });
    closeView = async () => {
      await app.close().catch(() => {});
      await bridge.close().catch(() => {});
    };
    return { received };
  });
}
await step("poll", poll);

// budget: head on the diverted output twice, P called three times in
// between; each head's footer says its cost and the budget left.
await step("budget", async () => {
  const file = result?._meta?.["scratchpad/diverted"]?.file;
  if (!file) throw new Error(`${opts.tool} was not diverted`);
  const head = async () => {
    const r = await client.callTool({ name: "head", arguments: { file, lines: 2 } }, { timeout });
    return r.content?.map((c) => c.text ?? "").join("\n") ?? "";
  };
  const before = await head();
  for (let i = 0; i < 3; i++) await poll();
  const after = await head();
  return { before, after };
});
await closeView();

// byModel: with [catalogue] mode = "search", the model's call_tool naming P.
if (tools.some((t) => t.name === "call_tool")) {
  await step("byModel", async () => await client.callTool({ name: "call_tool", arguments: { name: opts.poll, arguments: {} } }, { timeout }));
}

print(out);
await client.close().catch(() => {});
process.exit(0);
