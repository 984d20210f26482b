// Runs the CLI of @modelcontextprotocol/conformance (what
// node_modules/.bin/conformance runs) with this script's arguments:
//
//   node conformance.mjs server --url http://127.0.0.1:8931/mcp --suite all -o results
//
// CONFORMANCE_ENTRY picks the bundle, relative to this directory (or
// absolute); the default is 0.1.16, the 2025 suite. The 2026-07-28 suite
// is installed under the npm alias conformance-2026:
//
//   CONFORMANCE_ENTRY=node_modules/conformance-2026/dist/index.js \
//     node conformance.mjs server --url … --requirements 2026-07-28 -o results
//
// Both bundles import fs.globSync, which Node.js has from 22 on, at their
// top, for their tier-check command alone. On an older node (the e2e tests
// need 20) a resolve hook gives the bundle node:fs plus a globSync that
// throws, so the server command runs; on node >= 22 nothing is hooked. The
// hook matches the bundle's package directory, whatever name it is
// installed under.
import { register } from "node:module";
import { fileURLToPath, pathToFileURL } from "node:url";
import { dirname, resolve } from "node:path";

const here = dirname(fileURLToPath(import.meta.url));
const entryPath = resolve(here, process.env.CONFORMANCE_ENTRY || "node_modules/@modelcontextprotocol/conformance/dist/index.js");
const entry = pathToFileURL(entryPath);
// The package directory: the bundle is its dist/index.js.
const pkgDir = pathToFileURL(dirname(dirname(entryPath))).href + "/";

if (Number(process.versions.node.split(".")[0]) < 22) {
  const shim =
    "export * from 'node:fs'; export { default } from 'node:fs';" +
    "export function globSync() { throw new Error('fs.globSync needs Node.js >= 22'); }";
  const hooks = `
export async function resolve(specifier, context, next) {
  if ((specifier === "fs" || specifier === "node:fs") && context.parentURL?.startsWith(${JSON.stringify(pkgDir)})) {
    return { url: ${JSON.stringify("data:text/javascript," + encodeURIComponent(shim))}, shortCircuit: true };
  }
  return next(specifier, context);
}`;
  register("data:text/javascript," + encodeURIComponent(hooks));
}

// The CLI parses process.argv as if node had run it directly.
process.argv.splice(1, 1, entryPath);
await import(entry.href);
