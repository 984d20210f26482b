// A skills host (SEP-2640) for the Go tests: the TypeScript SDK v2 client
// with its SkillsClient (@modelcontextprotocol/client ext/skills, 2.4.0),
// which checks every entry and verifies every file it reads (listed,
// size, sha256 digest, and for SKILL.md the frontmatter against the
// entry's). Prints one JSON line per step.
//
//   node skills.mjs --era pin|legacy [--no-ext] --transport http --url URL
//   node skills.mjs --era legacy [--no-ext] --transport sse --url URL   (…/sse: 2025 only)
//   node skills.mjs --era pin|legacy [--no-ext] --transport stdio -- CMD ARG...
//
// --era pin speaks 2026-07-28 (server/discover), legacy the 2025 handshake.
// The client declares io.modelcontextprotocol/skills unless --no-ext.
// Lines:
//   {"step":"connect","era":…,"extensions":{…}}   the server's capabilities.extensions
//   {"step":"resources","templates":[…],"uris":[…]}   resources/templates/list and resources/list
//   {"step":"list","skills":[{uri,name,resources}],"ttlMs":…}   every page walked
//   {"step":"get","uri":U,"skill":{…}}            skills/get of each listed skill
//   {"step":"read","uri":U,"verified":true,"text":…}   each listed file, verified
//   {"step":"dir","uri":U,"resources":[{uri,name,mimeType}]}   each directory below each skill root
//   {"step":"raw","method":M,"error":{code,message}} or "result"   a bare request: with
//                                                  --no-ext the three methods, else four that no
//                                                  skill answers (unknown skill, unknown server,
//                                                  a file as a directory, a cursor never given)
// A step that fails prints {"step":…, "error":{message,code,data,reason}} and the script goes on.
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { SSEClientTransport, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { SkillsClient } from "@modelcontextprotocol/client/ext/skills";
import * as z from "zod/v4";
import { commandLine, errorOf, print, usageExit } from "./cli.mjs";

const usage = usageExit("skills.mjs", "node skills.mjs --era pin|legacy [--no-ext] --transport http|sse|stdio (--url URL | -- CMD ARG...)");
const { values, cmd } = commandLine(
  { era: { type: "string" }, transport: { type: "string" }, url: { type: "string" }, "no-ext": { type: "boolean" } },
  usage,
);
const opts = { ...values, ext: !values["no-ext"] };

const transport = opts.transport === "http"
  ? new StreamableHTTPClientTransport(new URL(opts.url))
  : opts.transport === "sse"
    ? new SSEClientTransport(new URL(opts.url))
    : new StdioClientTransport({ command: cmd[0], args: cmd.slice(1), stderr: "inherit" });
const capabilities = opts.ext ? { extensions: { "io.modelcontextprotocol/skills": {} } } : {};
const client = new Client({ name: "scratchpad-e2e-skills", version: "1.0.0" },
  { versionNegotiation: { mode: opts.era === "pin" ? { pin: "2026-07-28" } : "legacy" }, capabilities });
try {
  await client.connect(transport);
} catch (e) {
  print({ step: "connect", error: errorOf(e) });
  process.exit(1);
}
print({ step: "connect", era: client.getProtocolEra?.() ?? null, extensions: client.getServerCapabilities()?.extensions ?? null });

const timeout = 30_000;
async function step(name, f) {
  try {
    const out = await f();
    print({ step: name, ...out });
  } catch (e) {
    print({ step: name, error: errorOf(e) });
  }
}

// Bare requests: without the extension, the three methods; with it, what
// no skill or directory answers (each -32602 by the SEP).
const bare = opts.ext
  ? [["skills/get", { uri: "skill://docs/nope/SKILL.md" }], ["skills/get", { uri: "skill://nowhere/x/SKILL.md" }],
     ["resources/directory/read", { uri: "skill://docs/git-workflow/SKILL.md" }], ["skills/list", { cursor: "not-a-cursor" }]]
  : [["skills/list", {}], ["skills/get", { uri: "skill://scratchpad-mcp/scratchpad-workflow/SKILL.md" }], ["resources/directory/read", { uri: "skill://scratchpad-mcp" }]];
async function raw() {
  for (const [method, params] of bare) {
    await step("raw", async () => {
      try {
        const result = await client.request({ method, params }, z.looseObject({}), { timeout });
        return { method, result };
      } catch (e) {
        return { method, error: errorOf(e) };
      }
    });
  }
}
if (!opts.ext) {
  await raw();
  await client.close();
  process.exit(0);
}

const sc = new SkillsClient(client);
let listed = [];
await step("list", async () => {
  const l = await sc.list(undefined, { timeout });
  listed = l.skills;
  return { skills: l.skills.map((s) => ({ uri: s.uri, name: s.frontmatter.name, resources: Array.isArray(s.resources) ? s.resources.map((r) => r.uri) : s.resources })), ttlMs: l.ttlMs ?? null, cacheScope: l.cacheScope ?? null };
});
// After the listing (which waits for every upstream starting), the
// resource listings name the same files as the skills methods do.
await step("resources", async () => ({
  templates: (await client.listResourceTemplates(undefined, { timeout })).resourceTemplates.map((x) => x.uriTemplate),
  uris: (await client.listResources(undefined, { timeout })).resources.map((x) => x.uri),
}));
for (const s of listed) {
  await step("get", async () => ({ uri: s.uri, skill: (await sc.get(s.uri, { timeout })).skill }));
  for (const r of Array.isArray(s.resources) ? s.resources : [{ uri: s.uri }]) {
    await step("read", async () => {
      const f = await sc.read(s, r.uri, { timeout });
      return { uri: r.uri, verified: f.verified, text: f.text ?? null };
    });
  }
  // Each directory named in the entry, from the skill's root down.
  const root = s.uri.slice(0, s.uri.lastIndexOf("/"));
  const dirs = new Set([root]);
  for (const r of Array.isArray(s.resources) ? s.resources : []) {
    let d = r.uri.slice(0, r.uri.lastIndexOf("/"));
    while (d.length > root.length) { dirs.add(d); d = d.slice(0, d.lastIndexOf("/")); }
  }
  for (const d of [...dirs].sort()) {
    await step("dir", async () => ({ uri: d, resources: (await sc.readDirectory(d, { timeout })).resources.map((x) => ({ uri: x.uri, name: x.name, mimeType: x.mimeType })) }));
  }
}
await raw();
await client.close();
