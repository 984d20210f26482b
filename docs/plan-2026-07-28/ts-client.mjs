// node ts-client.mjs <auto|pin|legacy> <http URL | stdio cmd args...>
// Connects the TS SDK v2 client, prints the negotiated version, lists tools,
// calls test_simple_text; a probe of what a 2026 client sees.
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
const [mode, kind, ...rest] = process.argv.slice(2);
const vn = mode === "pin" ? { mode: { pin: "2026-07-28" } } : { mode };
const client = new Client({ name: "peers-probe", version: "1.0.0" }, { versionNegotiation: vn, capabilities: { elicitation: {} } });
const t = kind === "http" ? new StreamableHTTPClientTransport(new URL(rest[0]))
  : new StdioClientTransport({ command: rest[0], args: rest.slice(1), stderr: "ignore" });
const out = (k, v) => console.log(k + ": " + v);
try {
  await client.connect(t);
  out("negotiated", client.getNegotiatedProtocolVersion?.() ?? "(no getter)");
  const tl = await client.listTools();
  out("tools", tl.tools.length);
  const r = await client.callTool({ name: "test_simple_text", arguments: {} });
  out("call", JSON.stringify(r).slice(0, 160));
} catch (e) {
  out("error", (e?.message ?? String(e)).slice(0, 400));
}
await client.close().catch(() => {});
process.exit(0);
