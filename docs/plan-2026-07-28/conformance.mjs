// Runs the CLI of @modelcontextprotocol/conformance (what
// node_modules/.bin/conformance runs) with this script's arguments:
//
//   node conformance.mjs server --url http://127.0.0.1:8931/mcp --suite all -o results
//
// The 0.1.16 bundle imports fs.globSync, which Node.js has from 22 on, at its
// top, for its tier-check command alone. On an older node (the e2e tests need
// 20) a resolve hook gives the bundle node:fs plus a globSync that throws, so
// the server command runs; on node >= 22 nothing is hooked.
import { register } from "node:module";
import { fileURLToPath } from "node:url";

const entry = new URL("./node_modules/@modelcontextprotocol/conformance/dist/index.js", import.meta.url);

if (Number(process.versions.node.split(".")[0]) < 22) {
  const shim =
    "export * from 'node:fs'; export { default } from 'node:fs';" +
    "export function globSync() { throw new Error('fs.globSync needs Node.js >= 22'); }";
  const hooks = `
export async function resolve(specifier, context, next) {
  if ((specifier === "fs" || specifier === "node:fs") && context.parentURL?.includes("/@modelcontextprotocol/conformance/")) {
    return { url: ${JSON.stringify("data:text/javascript," + encodeURIComponent(shim))}, shortCircuit: true };
  }
  return next(specifier, context);
}`;
  register("data:text/javascript," + encodeURIComponent(hooks));
}

// The CLI parses process.argv as if node had run it directly.
process.argv.splice(1, 1, fileURLToPath(entry));
await import(entry.href);
