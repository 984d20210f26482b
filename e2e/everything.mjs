// Conformance client: the official TypeScript MCP SDK drives
// @modelcontextprotocol/server-everything, directly or through
// scratchpad-mcp, and prints what it saw as one JSON report. e2e_test.go
// runs it both ways and compares the reports: through the proxy a client
// must see exactly what it sees directly.
//
//   node everything.mjs stdio BIN ARG...   spawn BIN ARG... and talk over stdio
//   node everything.mjs http URL           talk streamable HTTP to URL
//   node everything.mjs sse URL            talk legacy SSE to URL
//
// The client declares sampling, elicitation (form and URL) and roots, and
// answers them with fixed values, so the server's requests are part of
// the report. It exits non-zero only when the SDK itself fails.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
  LoggingMessageNotificationSchema,
  ResourceUpdatedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";

const [mode, ...rest] = process.argv.slice(2);
let transport;
if (mode === "stdio") {
  transport = new StdioClientTransport({ command: rest[0], args: rest.slice(1), stderr: "ignore" });
} else if (mode === "http") {
  transport = new StreamableHTTPClientTransport(new URL(rest[0]));
} else if (mode === "sse") {
  transport = new SSEClientTransport(new URL(rest[0]));
} else {
  console.error("usage: node everything.mjs stdio BIN ARG... | http URL | sse URL");
  process.exit(2);
}

const client = new Client(
  { name: "scratchpad-everything", version: "1.0.0" },
  { capabilities: { sampling: {}, elicitation: { form: {}, url: {} }, roots: { listChanged: true } } },
);
const report = { mode, steps: {}, asked: [] };
const asked = (what) => report.asked.push(what);

client.setRequestHandler(CreateMessageRequestSchema, (req) => {
  const first = req.params.messages[0]?.content;
  asked("sampling " + (first?.text ?? first?.type));
  return { role: "assistant", content: { type: "text", text: "sampled: " + (first?.text ?? "") }, model: "e2e-model", stopReason: "endTurn" };
});
client.setRequestHandler(ElicitRequestSchema, (req) => {
  asked("elicitation " + (req.params.mode ?? "form"));
  return req.params.mode === "url" ? { action: "accept" } : { action: "decline" };
});
client.setRequestHandler(ListRootsRequestSchema, () => {
  asked("roots");
  return { roots: [{ uri: "file:///tmp/e2e-root", name: "e2e-root" }] };
});
let logs = 0;
client.setNotificationHandler(LoggingMessageNotificationSchema, () => {
  logs++;
});
const updated = new Set();
client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
  updated.add(n.params.uri);
});

// stable masks what a dynamic resource generates afresh on every read
// (it says the time), so that two runs compare equal.
const stable = (v) =>
  JSON.parse(JSON.stringify(v ?? null), (k, x) => {
    if (k === "elicitationId" && /^[0-9a-f-]{36}$/.test(x)) return "<random uuid>";
    if (x && typeof x === "object" && typeof x.uri === "string" && x.uri.includes("/dynamic/")) {
      if ("text" in x) x.text = "<generated>";
      if ("blob" in x) x.blob = "<generated>";
    }
    return x;
  });

// record keeps a step's outcome: the result as JSON, or the error's code,
// message and data.
async function record(name, f) {
  try {
    report.steps[name] = { result: stable(await f()) };
  } catch (err) {
    report.steps[name] = { error: { code: err?.code ?? null, message: String(err?.message ?? err), data: stable(err?.data) } };
  }
}

async function all(list, key) {
  const out = [];
  let cursor;
  do {
    const page = await list(cursor ? { cursor } : {});
    out.push(...page[key]);
    cursor = page.nextCursor;
  } while (cursor);
  return out;
}

const call = (name, args, opts) => client.callTool({ name, arguments: args }, undefined, { timeout: 60_000, ...opts });
const wait = (ms) => new Promise((r) => setTimeout(r, ms));

try {
  await client.connect(transport);
  report.capabilities = client.getServerCapabilities();

  // Upstream tools only: a proxy adds its own.
  const tools = await all((p) => client.listTools(p), "tools");
  // Their names come from the Go test (config's list), so that a new own
  // tool cannot make the comparison stale.
  const own = (process.env.SCRATCHPAD_OWN_TOOLS ?? "").split(",").filter(Boolean);
  if (own.length === 0) throw new Error("SCRATCHPAD_OWN_TOOLS is not set: the test passes the own tools' names");
  report.tools = tools.filter((t) => !own.includes(t.name))
    .sort((a, b) => a.name.localeCompare(b.name));

  await record("echo", () => call("echo", { message: "héllo <&> 👋" }));
  await record("get-sum", () => call("get-sum", { a: 2, b: 3.5 }));
  await record("get-sum bad args", () => call("get-sum", { a: "two" }));
  await record("unknown tool", () => call("no-such-tool", {}));
  await record("get-tiny-image", () => call("get-tiny-image", {}));
  await record("get-annotated-message", () => call("get-annotated-message", { messageType: "error", includeImage: true }));
  await record("get-resource-links", () => call("get-resource-links", { count: 3 }));
  await record("get-resource-reference text", () => call("get-resource-reference", { resourceType: "Text", resourceId: 2 }));
  await record("get-resource-reference blob", () => call("get-resource-reference", { resourceType: "Blob", resourceId: 3 }));
  await record("get-structured-content", () => call("get-structured-content", { location: "New York" }));
  await record("trigger-sampling-request", () => call("trigger-sampling-request", { prompt: "what is 2+2?", maxTokens: 10 }));
  await record("trigger-elicitation-request", () => call("trigger-elicitation-request", {}));
  await record("trigger-url-elicitation", () => call("trigger-url-elicitation", { url: "https://example.com/consent", elicitationId: "e2e-1" }));
  await record("trigger-url-elicitation error path", () => call("trigger-url-elicitation", { url: "https://example.com/consent", elicitationId: "e2e-2", errorPath: true }));
  await record("get-roots-list", () => call("get-roots-list", {}));
  const progress = [];
  await record("trigger-long-running-operation", () =>
    call("trigger-long-running-operation", { duration: 0.3, steps: 3 }, { onprogress: (p) => progress.push(p.progress) }));
  report.progress = progress;

  const resources = await all((p) => client.listResources(p), "resources");
  report.resources = resources.filter((r) => !r.uri.startsWith("scratchpad://"));
  report.templates = (await all((p) => client.listResourceTemplates(p), "resourceTemplates")).filter((t) => !t.uriTemplate.startsWith("scratchpad://"));
  await record("read static document", () => client.readResource({ uri: report.resources.find((r) => r.uri.includes("/static/"))?.uri ?? "none" }));
  await record("read dynamic blob", () => client.readResource({ uri: "demo://resource/dynamic/blob/1" }));
  await record("read unknown", () => client.readResource({ uri: "demo://resource/nope" }));

  report.prompts = (await all((p) => client.listPrompts(p), "prompts")).filter((p) => p.name !== "scratchpad");
  await record("simple-prompt", () => client.getPrompt({ name: "simple-prompt" }));
  await record("args-prompt", () => client.getPrompt({ name: "args-prompt", arguments: { city: "Paris", state: "Île-de-France" } }));
  await record("resource-prompt", () => client.getPrompt({ name: "resource-prompt", arguments: { resourceType: "Blob", resourceId: "4" } }));
  await record("complete department", () => client.complete({ ref: { type: "ref/prompt", name: "completable-prompt" }, argument: { name: "department", value: "E" } }));

  // Notifications the server sends on its own: logging at the level set,
  // and updates of a subscribed resource (both every 5 s).
  const sub = "demo://resource/dynamic/text/1";
  await client.setLoggingLevel("debug");
  await client.subscribeResource({ uri: sub });
  await call("toggle-simulated-logging", {});
  await call("toggle-subscriber-updates", {});
  for (const deadline = Date.now() + 12_000; (logs === 0 || !updated.has(sub)) && Date.now() < deadline; ) {
    await wait(100);
  }
  report.logged = logs > 0;
  report.updated = [...updated];
  await call("toggle-simulated-logging", {});
  await call("toggle-subscriber-updates", {});
  await client.unsubscribeResource({ uri: sub });
} catch (err) {
  console.error("everything client:", err?.stack ?? err);
  console.log(JSON.stringify(report));
  await client.close().catch(() => {});
  process.exit(1);
}
console.log(JSON.stringify(report));
await client.close();
process.exit(0);
