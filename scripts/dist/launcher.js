#!/usr/bin/env node
// scratchpad-mcp's launcher (the npm package scratchpad-mcp): it runs the
// binary of the platform package npm installed for this machine (an
// optional dependency chosen by its os and cpu fields), passing the
// arguments, stdin, stdout and stderr (MCP's stdio), signals and the exit
// status through. It writes nothing to stdout itself: that is the
// protocol's.
"use strict";

const { spawn } = require("node:child_process");
const path = require("node:path");

const pkg = `@scratchpad-mcp/${process.platform}-${process.arch}`;
const exe = process.platform === "win32" ? "scratchpad-mcp.exe" : "scratchpad-mcp";

let bin;
try {
  bin = path.join(path.dirname(require.resolve(`${pkg}/package.json`)), "bin", exe);
} catch {
  process.stderr.write(
    `scratchpad-mcp: no binary for ${process.platform}-${process.arch}: its package ${pkg} is not installed. ` +
      "npm installs it with scratchpad-mcp unless optional dependencies are left out (--omit=optional); " +
      "packages exist for linux, darwin and win32 on x64 and arm64. " +
      "Otherwise use a release archive: https://github.com/scratchpad-mcp/scratchpad-mcp/releases\n",
  );
  process.exit(1);
}

const child = spawn(bin, process.argv.slice(2), { stdio: "inherit", windowsHide: true });
const forward = (sig) => () => child.kill(sig);
for (const sig of ["SIGINT", "SIGTERM", "SIGHUP"]) {
  process.on(sig, forward(sig));
}
child.on("error", (err) => {
  process.stderr.write(`scratchpad-mcp: ${bin}: ${err.message}\n`);
  process.exit(1);
});
child.on("exit", (code, signal) => {
  if (signal) {
    // Die of the same signal, so the caller sees what the binary saw.
    process.removeAllListeners(signal);
    process.kill(process.pid, signal);
    return;
  }
  process.exit(code === null ? 1 : code);
});
