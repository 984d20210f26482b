package config

// AgentFor returns the agent settings of the orchestration worker named
// worker: [agent] and [agent.scratchpad] with every field that
// [orchestration.worker.<worker>] and its .scratchpad table set replaced,
// field by field. An override that sets only max_extraction_tokens keeps
// enabled, the margin and the bonus of [agent.scratchpad] (unlike the
// reference framework, where a partial table resets the rest). An unknown
// worker gets [agent] unchanged.
func (c *Config) AgentFor(worker string) Agent {
	a := c.Agent
	w, ok := c.Orchestration.Workers[worker]
	if !ok {
		return a
	}
	if w.Model != "" {
		a.Model = w.Model
		// A worker on another model must not inherit a window sized for
		// [agent]'s model: leave it to the model table unless it sets one.
		if w.ContextWindow == 0 && w.Model != c.Agent.Model {
			a.ContextWindow = 0
		}
	}
	if w.Provider != "" {
		a.Provider = w.Provider
	}
	if w.ContextWindow != 0 {
		a.ContextWindow = w.ContextWindow
	}
	a.Scratchpad = w.Scratchpad.apply(a.Scratchpad)
	return a
}
