// A modern-only MCP upstream (protocol revision 2026-07-28 and nothing
// else): the TypeScript SDK v2's createMcpHandler(factory, {legacy:
// "reject"}) on node:http, through a small node:http → fetch adapter
// (instead of @modelcontextprotocol/node). A 2025 client's initialize is
// refused with -32022.
//
//   node modern-server.mjs 127.0.0.1:0
//
// prints "listening http://HOST:PORT/mcp" on stdout once it listens (port 0
// picks a free one) and serves until killed. Tools:
//   echo {text}    the text back
//   big {n}        n JSON objects (default 5000), one per line: big enough
//                  to be diverted by any threshold below ~50 tokens × n
//   confirm        asks for confirmation with an input-required result
//                  (an elicitation, form mode, {ok: boolean}); answers
//                  "confirmed" when the retry carries ok: true, and
//                  "declined" when it carries anything else.
import http from "node:http";
import { McpServer, createMcpHandler, fromJsonSchema, inputRequired, acceptedContent } from "@modelcontextprotocol/server";

const arg = process.argv[2] ?? "127.0.0.1:0";
const i = arg.lastIndexOf(":");
const host = arg.slice(0, i), port = Number(arg.slice(i + 1));
if (!host || !Number.isInteger(port)) {
  console.error("usage: node modern-server.mjs HOST:PORT");
  process.exit(2);
}
const obj = (props, req = []) => fromJsonSchema({ type: "object", properties: props, required: req });

function factory() {
  const s = new McpServer({ name: "modern-only", version: "1.0.0" });
  s.registerTool("echo", { description: "echo text", inputSchema: obj({ text: { type: "string" } }, ["text"]) },
    async ({ text }) => ({ content: [{ type: "text", text }] }));
  s.registerTool("big", { description: "n JSON lines", inputSchema: obj({ n: { type: "integer" } }) },
    async ({ n }) => ({
      content: [{
        type: "text",
        text: Array.from({ length: n ?? 5000 }, (_, i) => JSON.stringify({ i, name: "item-" + i, tags: ["a", "b"] })).join("\n"),
      }],
    }));
  s.registerTool("confirm", { description: "asks for confirmation", inputSchema: obj({}) }, async (_args, ctx) => {
    const answer = ctx.mcpReq.inputResponses?.confirm;
    if (!answer) {
      return inputRequired({
        inputRequests: {
          confirm: inputRequired.elicit({
            message: "Proceed?",
            requestedSchema: { type: "object", properties: { ok: { type: "boolean" } }, required: ["ok"] },
          }),
        },
      });
    }
    const ok = acceptedContent(ctx.mcpReq.inputResponses, "confirm");
    return { content: [{ type: "text", text: ok?.ok === true ? "confirmed" : "declined" }] };
  });
  return s;
}

const handler = createMcpHandler(factory, { legacy: "reject" });
const server = http.createServer(async (req, res) => {
  const chunks = [];
  for await (const c of req) chunks.push(c);
  const body = Buffer.concat(chunks);
  const ac = new AbortController();
  res.on("close", () => ac.abort());
  const request = new Request(`http://${req.headers.host}${req.url}`, {
    method: req.method,
    headers: req.headers,
    body: req.method === "GET" || req.method === "HEAD" ? undefined : body,
    signal: ac.signal,
  });
  let r;
  try {
    r = await handler.fetch(request);
  } catch (e) {
    console.error("modern-server:", e?.stack ?? e);
    res.writeHead(500).end();
    return;
  }
  res.writeHead(r.status, Object.fromEntries(r.headers));
  if (!r.body) return res.end();
  try {
    for await (const c of r.body) res.write(c);
  } catch {
    // the client went away mid-stream
  }
  res.end();
});
// Node closes an idle keep-alive socket after 5 s, which races a client
// (undici's fetch, Go's transport) reusing it on a loaded machine: the
// request fails with "fetch failed". Idle sockets are the client's to close.
server.keepAliveTimeout = 120_000;
server.headersTimeout = 125_000;
server.listen(port, host, () => {
  const a = server.address();
  console.log(`listening http://${a.family === "IPv6" ? `[${a.address}]` : a.address}:${a.port}/mcp`);
});
