// drive.mjs FILE CHROMIUM BINARY ARGS...: a host of scratchpad-mcp's own
// MCP App, as a person's chat client is one. The official TypeScript MCP
// client (v2) runs BINARY ARGS over stdio, declaring the MCP Apps
// extension; the model's side calls `view` on FILE; ext-apps' AppBridge
// (the host side of SEP-1865) connects that client to the page served at
// the tool's ui:// resource, in a sandboxed iframe of headless Chromium.
// Then the test does what a person would: reads the table, sorts, filters,
// pages. It prints one JSON report; any failed check exits 1 with the
// reason. Run by appview_test.go.
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { AppBridge, isToolVisibilityAppOnly } from "@modelcontextprotocol/ext-apps/app-bridge";
import { chromium } from "playwright-core";

const [file, chromiumPath, ...server] = process.argv.slice(2);
const EXT = "io.modelcontextprotocol/ui", MIME = "text/html;profile=mcp-app";
const report = { checks: [] };
const fail = msg => { report.failed = msg; console.log(JSON.stringify(report)); process.exit(1); };
const check = (ok, what, got) => { report.checks.push(what); if (!ok) fail(`${what}: got ${JSON.stringify(got)}`); };

const client = new Client({ name: "appview-host", version: "1.0.0" }, { capabilities: { extensions: { [EXT]: { mimeTypes: [MIME] } } } });
await client.connect(new StdioClientTransport({ command: server[0], args: server.slice(1), stderr: "inherit" }));
let browser;
try {
  const { tools } = await client.listTools();
  const view = tools.find(t => t.name === "view"), page = tools.find(t => t.name === "view_page");
  check(view && view._meta?.ui?.resourceUri === "ui://scratchpad/view.html", "view names the page", view?._meta);
  check(page && isToolVisibilityAppOnly(page), "view_page is app-only", page?._meta);
  report.modelTools = tools.filter(t => !isToolVisibilityAppOnly(t)).map(t => t.name);

  // The model's call: a pointer-sized answer, nothing of the data.
  const t0 = Date.now();
  const opened = await client.callTool({ name: "view", arguments: { file } });
  check(!opened.isError && /can now see/.test(opened.content[0].text), "view answers the model in a line", opened);
  report.viewText = opened.content[0].text;

  const res = await client.readResource({ uri: view._meta.ui.resourceUri });
  const html = res.contents[0];
  check(html.mimeType === MIME && html.text.length < 100_000, "the page is an MCP App under 100 KB", { mime: html.mimeType, bytes: html.text.length });

  browser = await chromium.launch({ executablePath: chromiumPath, args: ["--no-sandbox", "--disable-gpu"] });
  const tab = await browser.newPage();
  const remote = [];
  tab.on("request", r => { if (!/^(about|data|blob):/.test(r.url())) remote.push(r.url()); });
  tab.on("pageerror", e => fail("page error: " + e.message));
  // The host page: the App in a sandboxed frame without same-origin, as hosts render it.
  await tab.setContent(`<!doctype html><body style="margin:0"><iframe id="app" sandbox="allow-scripts" style="width:1200px;height:800px;border:0"></iframe>
<script>window.addEventListener("message", e => { if (e.source === document.getElementById("app").contentWindow) window.toHost(e.data); });</script></body>`);
  // AppBridge's transport: the frame's messages come through the host page to here, and go back by postMessage.
  const transport = {
    async start() {},
    async send(msg) { await tab.evaluate(m => document.getElementById("app").contentWindow.postMessage(m, "*"), msg); },
    async close() { this.onclose?.(); },
  };
  await tab.exposeFunction("toHost", m => transport.onmessage?.(m));
  const bridge = new AppBridge(client, { name: "appview-host", version: "1.0.0" }, { serverTools: {}, serverResources: {} }, { hostContext: { theme: "light", displayMode: "inline" } });
  const initialized = new Promise(r => { bridge.oninitialized = r; });
  await bridge.connect(transport);
  await tab.evaluate(h => { document.getElementById("app").srcdoc = h; }, html.text);
  await initialized;
  await bridge.sendToolInput({ arguments: { file } });
  await bridge.sendToolResult(opened);
  const shown = Date.now();

  const app = tab.frameLocator("#app");
  const body = app.locator("body");
  let renders = 0;
  // settled waits for the page's next render with nothing in flight.
  const settled = async () => {
    for (let i = 0; i < 600; i++) {
      const n = +(await body.getAttribute("data-renders")) || 0;
      if (n > renders && (await body.getAttribute("data-busy")) === "0") { renders = n; return; }
      await new Promise(r => setTimeout(r, 50));
    }
    fail("the page did not render: " + (await app.locator("#err").textContent()));
  };
  const status = () => app.locator("#status").textContent();
  const err = () => app.locator("#err").textContent();
  const column = async name => app.locator("#tbl tbody tr").evaluateAll((rows, i) => rows.map(r => r.children[i].textContent),
    await app.locator("#tbl thead th").evaluateAll((ths, n) => ths.findIndex(th => th.dataset.col === n), name));
  const firstIndex = async () => +(await app.locator("#tbl tbody tr").first().getAttribute("data-index"));

  await settled();
  report.firstRenderMs = Date.now() - t0; // from the model's call: resource read, browser start, page load
  report.firstPageMs = Date.now() - shown; // from the host handing the page the result
  check((await status()) === "rows 1–100 of 20,000", "the table shows the first page of 20,000 rows", [await status(), await err()]);
  check((await app.locator("#tbl tbody tr").count()) === 100, "100 rows rendered", await app.locator("#tbl tbody tr").count());
  const cols = await app.locator("#tbl thead th").evaluateAll(ths => ths.map(t => t.dataset.col).filter(Boolean));
  check(["id", "name", "status", "size", "owner"].every(c => cols.includes(c)), "the columns are the items' keys", cols);
  check((await column("id"))[0] === "0", "in stored order", await column("id"));

  // Sort by size: a click, ascending; again, descending. The server sorts all 20,000.
  await app.locator('#tbl th[data-col="size"]').click(); await settled();
  let sizes = (await column("size")).map(Number);
  check(sizes[0] === 0 && sizes.every((v, i) => i === 0 || sizes[i - 1] <= v), "sorted ascending by size", sizes.slice(0, 5));
  await app.locator('#tbl th[data-col="size"]').click(); await settled();
  sizes = (await column("size")).map(Number);
  check(sizes[0] === 99_990 && sizes.every((v, i) => i === 0 || sizes[i - 1] >= v), "sorted descending by size", sizes.slice(0, 5));
  check((await app.locator('#tbl th[data-col="size"]').getAttribute("data-sort")) === "desc", "the header shows the order", null);

  // Filter with an RFC 9535 filter, as the exploration tools take it.
  await app.locator("#filter").fill("@.status == 'failed' && @.size >= 50000");
  await app.locator("#apply").click(); await settled();
  check((await status()) === "rows 1–100 of 1,000 matching, of 20,000", "filtered server-side", await status());
  const st = await column("status");
  check(st.every(s => s === "failed"), "every row matches", st.slice(0, 5));
  sizes = (await column("size")).map(Number);
  check(sizes.every(s => s >= 50_000) && sizes[0] >= sizes[99], "still sorted, descending", sizes.slice(0, 5));

  if (process.env.APPVIEW_SHOT) await tab.screenshot({ path: process.env.APPVIEW_SHOT }); // a look at it, for a person
  // Page: next, last, first.
  await app.locator("#next").click(); await settled();
  check((await status()) === "rows 101–200 of 1,000 matching, of 20,000", "next page", await status());
  await app.locator("#last").click(); await settled();
  check((await status()) === "rows 901–1,000 of 1,000 matching, of 20,000", "last page", await status());
  check(await app.locator("#next").isDisabled(), "no page after the last", null);
  await app.locator("#first").click(); await settled();
  check((await status()).startsWith("rows 1–100 "), "first page", await status());

  // A filter that does not parse: the explore package's message, shown.
  await app.locator("#filter").fill("@.size >");
  await app.locator("#apply").click(); await settled();
  check(/bad_filter/.test(await err()), "a bad filter says so", await err());
  // Clear it and sort off: stored order again, paged.
  await app.locator("#filter").fill("");
  await app.locator("#apply").click(); await settled();
  await app.locator('#tbl th[data-col="size"]').click(); await settled(); // desc -> off
  await app.locator("#last").click(); await settled();
  check((await status()) === "rows 19,901–20,000 of 20,000" && (await firstIndex()) === 19_900, "the last page of all", await status());

  // The tree: the same output, one level at a time.
  await app.locator("#m-node").click(); await settled();
  await app.locator('.tree [data-path="$.rows"]').click(); await settled();
  const treeRows = await app.locator('.tree [data-path^="$.rows["]').count();
  check(treeRows === 200, "the tree opens the array 200 items at a time", treeRows);

  // Text: the file's lines, searched.
  await app.locator("#m-lines").click(); await settled();
  await app.locator("#search").fill("\"name\": \"row-19999\"");
  await app.locator("#find").click(); await settled();
  check((await status()).startsWith("lines 1–1 of 1 matching"), "the text search finds the last row's line", await status());
  check((await app.locator("#lines mark").count()) === 1, "the match is marked", null);

  check(remote.length === 0, "nothing fetched from the network", remote);
  report.ok = true;
  console.log(JSON.stringify(report));
} catch (e) {
  fail(String(e && e.stack || e));
} finally {
  await browser?.close();
  await client.close();
}
