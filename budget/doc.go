// Package budget keeps each agent's context budget and accounts for what
// the server intercepted and extracted on its behalf. It knows nothing
// about MCP: the server maps sessions to [Agent] values and calls in.
//
// # Basics
//
// Size an agent from its model, then create it with what it already
// carries (the tool definitions it was listed and the server
// instructions):
//
//	usable, err := budget.Options{Model: "gpt-4o", SafetyMargin: 0.15}.Usable()
//	if err != nil { // errors.Is(err, budget.ErrUnknownModel): ask for context_window
//		return fmt.Errorf("agent %q: %w", name, err)
//	}
//	a := budget.NewAgent(budget.Identity{AgentName: name, Role: "worker"}, usable, toolTokens)
//
// Every exploration result is charged before it is returned, with one
// atomic check-and-charge ([Agent.TryCharge]); when it does not fit the
// tool returns its *_too_large object with [Agent.Remaining]. Outputs
// diverted to disk are recorded with [Agent.AddIntercepted] and cost no
// budget. When the client reports the model's real usage,
// [Agent.ObserveUsage] raises the used count to it (never lowers it).
//
// When the agent finishes, [Events.Finish] appends one scratchpad_usage
// record ([Usage]) to its owner's usage.jsonl (0600, written through
// memory_dir's root: see package memdir) and streams it to GET /events
// subscribers ([Events.ServeSSE]). [ReadUsage] and [FormatTable]
// back the `scratchpad-mcp usage` command.
//
// # Caveats
//
//   - [ContextWindowFor] is conservative where providers publish two
//     figures (gpt-5: 272k input of 400k; claude-sonnet-4: 200k, 1M only
//     in beta). Set context_window to use more.
//   - [Options.SafetyMargin] zero means no margin, as context_safety_margin
//     = 0 does in the config; the default of 0.20 is config's.
//   - A budget only counts what this server returns. Conversation text and
//     other servers' results reach the model unseen; the client's usage
//     reports ([Agent.ObserveUsage]) are what corrects for them.
//   - Finish is decided by its first call per agent: an agent idle then
//     is never reported, even if it is used afterwards.
//   - Replicas serving one agent share its budget only with
//     [Agent.Share]; without it each process counts alone.
//   - A GET /events subscriber that falls 64 records behind misses records;
//     usage.jsonl is the complete log.
package budget
