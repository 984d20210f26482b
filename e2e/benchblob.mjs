// The wire bench's upstream in Node.js, the common case behind a proxy
// (cmd/scratchpad-mcp/bench_wire_test.go, WIRE_PATHS=node>stdio): the
// official TypeScript SDK (v1) over stdio, one tool "blob" {mb, format}
// that returns the text the Go bench upstream would (written by the
// bench into DIR as FORMAT-MB.txt before it starts), read once and kept,
// so that a call's time is the transport's.
//
//   node benchblob.mjs DIR
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { z } from "zod";

const dir = process.argv[2];
const cache = new Map();
const server = new McpServer({ name: "benchblob-node", version: "1.0.0" });
server.tool("blob", "returns about mb MB of format", { mb: z.number(), format: z.string().optional() }, async ({ mb, format }) => {
  const key = `${format ?? "json"}-${mb}`;
  if (!cache.has(key)) cache.set(key, readFileSync(join(dir, `${key}.txt`), "utf8"));
  return { content: [{ type: "text", text: cache.get(key) }] };
});
await server.connect(new StdioServerTransport());
