// Package dashboard serves the page that shows what scratchpad-mcp kept
// out of the model's context: tokens diverted over time by server and
// tool, each live agent's budget as a bar, the biggest diverted outputs
// and the recent calls with their latency.
//
// [Handler] serves the page (plain HTML, a small embedded script drawing
// on <canvas>, nothing from a CDN: it works offline) and its data.json,
// computed by [Build] from the calls' audit records
// ([telemetry.Provider.Calls] in the server, [telemetry.ReadAudit] in the
// dashboard command) and the finished agents' usage records
// ([budget.ReadUsage]). [Options.Owner] is the caller's owner as the
// server proved it: an owner sees only its own calls and agents.
package dashboard
