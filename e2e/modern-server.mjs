// A modern-only MCP upstream (protocol revision 2026-07-28 and nothing
// else): the TypeScript SDK v2's createMcpHandler(factory, {legacy:
// "reject"}) on node:http, through fetch-server.mjs's node:http → fetch
// adapter. A 2025 client's initialize is refused with -32022.
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
import { McpServer, createMcpHandler, fromJsonSchema, inputRequired, acceptedContent } from "@modelcontextprotocol/server";
import { listenAddress, serveFetch } from "./fetch-server.mjs";

const { host, port } = listenAddress(process.argv[2], "usage: node modern-server.mjs HOST:PORT");
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
serveFetch({ host, port, name: "modern-server", handle: (request) => handler.fetch(request) });
