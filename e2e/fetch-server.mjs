// A fetch handler ((Request) => Promise<Response>, as the TypeScript SDK
// v2's createMcpHandler makes one) served on node:http through a small
// node:http → fetch adapter (instead of @modelcontextprotocol/node), for
// the test upstreams apps-server.mjs and modern-server.mjs.
import http from "node:http";

// listenAddress parses HOST:PORT (port 0 picks a free one) from arg,
// 127.0.0.1:0 when absent; on a bad one it prints usage and exits 2.
export function listenAddress(arg, usage) {
  arg ??= "127.0.0.1:0";
  const i = arg.lastIndexOf(":");
  const host = arg.slice(0, i),
    port = Number(arg.slice(i + 1));
  if (!host || !Number.isInteger(port)) {
    console.error(usage);
    process.exit(2);
  }
  return { host, port };
}

// serveFetch serves handle(request, body) (body: the request's bytes, a
// Buffer) on host:port and prints "listening http://HOST:PORT/mcp" on
// stdout once it listens. name prefixes the handler's errors on stderr.
export function serveFetch({ host, port, name, handle }) {
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
      r = await handle(request, body);
    } catch (e) {
      console.error(`${name}:`, e?.stack ?? e);
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
  return server;
}
