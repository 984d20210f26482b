// What the e2e client scripts (apps.mjs, modern.mjs, skills.mjs) share:
// their command line (--name VALUE options and flags, then -- CMD ARG...
// for a stdio server) and their JSON output.
import { parseArgs } from "node:util";

// usageExit returns usage(message): prints "script: message" and the usage
// line on stderr and exits 2.
export const usageExit = (script, line) => (msg) => {
  console.error(`${script}: ${msg}\nusage: ${line}`);
  process.exit(2);
};

// commandLine parses the script's arguments by options (util.parseArgs'
// form: {name: {type: "string" | "boolean"}}) and returns the options'
// values and the command after "--" ([] without one). An unknown option,
// an option without its value, or an argument before "--" that is no
// option's calls usage with what is wrong.
export function commandLine(options, usage) {
  let parsed;
  try {
    parsed = parseArgs({ options, allowPositionals: true, strict: true, tokens: true });
  } catch (e) {
    usage(e.message);
  }
  const end = parsed.tokens.findIndex((t) => t.kind === "option-terminator");
  const stray = parsed.tokens.find((t, i) => t.kind === "positional" && (end < 0 || i < end));
  if (stray) usage(`unexpected argument ${stray.value}`);
  return { values: parsed.values, cmd: parsed.positionals };
}

// print writes o as one JSON line on stdout.
export const print = (o) => console.log(JSON.stringify(o));

// errorOf is a thrown error as the scripts print it: message, code, and
// data and reason when it has them (an McpError's data; a SkillsClient
// verification's reason).
export const errorOf = (e) => ({ message: String(e?.message ?? e), code: e?.code, data: e?.data, reason: e?.reason });
