// An MCP Apps server that lists its page's tool only to a host declaring
// the io.modelcontextprotocol/ui extension, as ext-apps documents it
// (getUiCapability, then registerAppTool or a text-only fallback): what a
// proxy must pass on for such a server's tools to reach an Apps host.
//
//   node apps-server.mjs --stdio      2025 (SDK v1 over stdio): decided once,
//                                     at initialize
//   node apps-server.mjs HOST:PORT    2026-07-28 only (SDK v2 createMcpHandler,
//                                     streamable HTTP): decided per request,
//                                     from its clientCapabilities; prints
//                                     "listening http://HOST:PORT/mcp"
// Tools:
//   weather       (to an Apps host) names ui://weather/view.html
//   weather-text  (to any other) the text-only fallback
//   caps          the client capabilities this request (2026) or this
//                 session (2025) declared, as JSON text
import { AsyncLocalStorage } from "node:async_hooks";
import { getUiCapability, registerAppTool, registerAppResource, RESOURCE_MIME_TYPE } from "@modelcontextprotocol/ext-apps/server";
import { listenAddress, serveFetch } from "./fetch-server.mjs";

const page = "<!doctype html><title>weather</title><p>sunny</p>";
const weather = { content: [{ type: "text", text: "sunny" }], structuredContent: { sky: "sunny" } };

// tools registers the tools for a client that declared caps.
function tools(server, caps) {
  const ui = getUiCapability(caps)?.mimeTypes?.includes(RESOURCE_MIME_TYPE);
  if (ui) {
    registerAppTool(server, "weather", { description: "the weather, with a view", _meta: { ui: { resourceUri: "ui://weather/view.html" } } }, async () => weather);
    registerAppResource(server, "weather view", "ui://weather/view.html", {}, async () => ({
      contents: [{ uri: "ui://weather/view.html", mimeType: RESOURCE_MIME_TYPE, text: page }],
    }));
  } else {
    server.registerTool("weather-text", { description: "the weather, as text" }, async () => weather);
  }
}

if (process.argv[2] === "--stdio") {
  const { McpServer } = await import("@modelcontextprotocol/sdk/server/mcp.js");
  const { StdioServerTransport } = await import("@modelcontextprotocol/sdk/server/stdio.js");
  const server = new McpServer({ name: "apps-2025", version: "1.0.0" });
  // Registered before connecting, so that the tools capability is declared.
  server.registerTool("caps", { description: "the client's capabilities" }, async () => ({
    content: [{ type: "text", text: JSON.stringify(server.server.getClientCapabilities() ?? {}) }],
  }));
  server.server.oninitialized = () => tools(server, server.server.getClientCapabilities());
  await server.connect(new StdioServerTransport());
} else {
  const { McpServer, createMcpHandler } = await import("@modelcontextprotocol/server");
  const { host, port } = listenAddress(process.argv[2], "usage: node apps-server.mjs --stdio | HOST:PORT");
  const requestBody = new AsyncLocalStorage();
  const factory = async () => {
    // Capabilities are per request in 2026-07-28: read from its envelope.
    // (The factory is not given the request's body: the HTTP wrapper
    // below keeps it for the request's async context.)
    let caps = {};
    try {
      const body = JSON.parse(requestBody.getStore() ?? "null");
      caps = body?.params?._meta?.["io.modelcontextprotocol/clientCapabilities"] ?? {};
    } catch {
      // no body, or not JSON
    }
    const s = new McpServer({ name: "apps-2026", version: "1.0.0" });
    s.registerTool("caps", { description: "the client's capabilities" }, async () => ({ content: [{ type: "text", text: JSON.stringify(caps) }] }));
    tools(s, caps);
    return s;
  };
  const handler = createMcpHandler(factory, { legacy: "reject" });
  serveFetch({
    host,
    port,
    name: "apps-server",
    handle: (request, body) => requestBody.run(body.toString("utf8"), () => handler.fetch(request)),
  });
}
