// A modern-only MCP upstream: TS SDK v2 createMcpHandler(factory, {legacy: "reject"})
// on node:http (a small fetch adapter instead of @modelcontextprotocol/node).
//   node modern-server.mjs 127.0.0.1:18950
// Tools: echo {text}; big {n} (n lines of JSON); confirm (input-required elicitation).
import http from "node:http";
import { McpServer, createMcpHandler, fromJsonSchema, inputRequired, acceptedContent } from "@modelcontextprotocol/server";
const [host, port] = (process.argv[2] ?? "127.0.0.1:18950").split(":");
const obj = (props, req = []) => fromJsonSchema({ type: "object", properties: props, required: req });
function factory() {
  const s = new McpServer({ name: "modern-only", version: "1.0.0" });
  s.registerTool("echo", { description: "echo text", inputSchema: obj({ text: { type: "string" } }, ["text"]) },
    async ({ text }) => ({ content: [{ type: "text", text }] }));
  s.registerTool("big", { description: "n JSON lines", inputSchema: obj({ n: { type: "integer" } }) },
    async ({ n }) => ({ content: [{ type: "text", text: JSON.stringify(Array.from({ length: n ?? 5000 }, (_, i) => ({ i, name: "item-" + i, tags: ["a", "b"] }))) }] }));
  s.registerTool("confirm", { description: "asks for confirmation", inputSchema: obj({}) }, async (_args, ctx) => {
    const ok = acceptedContent(ctx.mcpReq.inputResponses, "confirm");
    if (ok?.ok !== true) {
      return inputRequired({ inputRequests: { confirm: inputRequired.elicit({ message: "Proceed?", requestedSchema: { type: "object", properties: { ok: { type: "boolean" } }, required: ["ok"] } }) } });
    }
    return { content: [{ type: "text", text: "confirmed" }] };
  });
  return s;
}
const handler = createMcpHandler(factory, { legacy: "reject" });
http.createServer(async (req, res) => {
  const chunks = [];
  for await (const c of req) chunks.push(c);
  const body = Buffer.concat(chunks);
  const ac = new AbortController();
  res.on("close", () => ac.abort());
  const request = new Request(`http://${req.headers.host}${req.url}`, {
    method: req.method, headers: req.headers, body: req.method === "GET" || req.method === "HEAD" ? undefined : body, signal: ac.signal,
  });
  const r = await handler.fetch(request);
  res.writeHead(r.status, Object.fromEntries(r.headers));
  if (!r.body) return res.end();
  try { for await (const c of r.body) res.write(c); } catch {}
  res.end();
}).listen(Number(port), host, () => console.error(`modern-only MCP server on http://${host}:${port}/mcp`));
