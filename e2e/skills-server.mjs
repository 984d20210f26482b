// A stdio MCP upstream that serves Agent Skills (SEP-2640) with the
// TypeScript SDK v2's own implementation (@modelcontextprotocol/server
// ext/skills, 2.4.0): SkillsExtension.load over in-memory files, attached
// to an McpServer. It declares io.modelcontextprotocol/skills with
// directoryRead and answers skills/list (one skill per page, to exercise
// cursors), skills/get, resources/directory/read and resources/read of
// skill:// files. The same skill paths are served by every instance;
// FLAVOR (default "a") is written into each file, so two instances under
// two names serve different bytes at the same upstream URI.
//
//   FLAVOR=b [SECRET=ghp_…] node skills-server.mjs
//
// NODIR=1 serves them without directoryRead (a SkillSource of the same
// entries and files, without readDirectory).
// SECRET, when set, is written into git-workflow's references/GUIDE.md (a
// credential the proxy's redaction must keep from the client).
// Skills: skill://git-workflow (SKILL.md, references/GUIDE.md,
// templates/pr.md, templates/regional/eu.md) and skill://acme/billing/refunds
// (SKILL.md, examples/email.md). One tool: echo {text}.
import { McpServer, fromJsonSchema } from "@modelcontextprotocol/server";
import { StdioServerTransport } from "@modelcontextprotocol/server/stdio";
import { SkillsExtension, memorySkillFiles } from "@modelcontextprotocol/server/ext/skills";

const flavor = process.env.FLAVOR ?? "a";
const files = memorySkillFiles({
  "git-workflow/SKILL.md": `---\nname: git-workflow\ndescription: Follow this team's Git conventions (flavor ${flavor})\nlicense: Apache-2.0\n---\n\n# Git workflow (${flavor})\n\nRead references/GUIDE.md, then pick a template from templates/.\n`,
  "git-workflow/references/GUIDE.md": `# Guide (${flavor})\n\nBranch from main; one change per commit.\n${process.env.SECRET ? `Push with token ${process.env.SECRET}\n` : ""}`,
  "git-workflow/templates/pr.md": `# Pull request template (${flavor})\n`,
  "git-workflow/templates/regional/eu.md": `# EU template (${flavor})\n`,
  "acme/billing/refunds/SKILL.md": `---\nname: refunds\ndescription: Process customer refund requests per company policy (${flavor})\n---\n\n# Refunds (${flavor})\n\nSee examples/email.md.\n`,
  "acme/billing/refunds/examples/email.md": `Dear customer, (${flavor})\n`,
});
const catalog = await SkillsExtension.load(files, { pageSize: 1, strict: true });

const server = new McpServer({ name: `skills-${flavor}`, version: "1.0.0" });
server.registerTool("echo", { description: "echo text", inputSchema: fromJsonSchema({ type: "object", properties: { text: { type: "string" } }, required: ["text"] }) },
  async ({ text }) => ({ content: [{ type: "text", text }] }));
// NODIR: the same skills from a SkillSource without readDirectory, so
// the server does not declare directoryRead.
let ext = catalog;
if (process.env.NODIR) {
  const byUri = new Map(catalog.entries.map((e) => [e.uri, e]));
  ext = new SkillsExtension({
    source: {
      async list() { return { skills: [...catalog.entries] }; },
      async get(uri) { return byUri.get(uri); },
      async read(uri) {
        const path = uri.slice("skill://".length);
        try {
          return { text: new TextDecoder().decode(await files.read(path)), mimeType: path.endsWith(".md") ? "text/markdown" : "text/plain" };
        } catch {
          return undefined;
        }
      },
    },
  });
}
ext.attach(server);
await server.connect(new StdioServerTransport());
