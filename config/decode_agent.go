package config

// maxContextWindow bounds context_window: larger is a typo, not a model.
const maxContextWindow = 100_000_000

func (d *decoder) agent(p keyPath, v any, a *Agent) {
	m, ok := d.table(p, v)
	if !ok {
		return
	}
	d.checkKeys(p, m, "model", "provider", "context_window", "scratchpad")
	if v, ok := m["model"]; ok {
		a.Model, _ = d.nonEmpty(p.key("model"), v)
	}
	if v, ok := m["provider"]; ok {
		a.Provider, _ = d.nonEmpty(p.key("provider"), v)
	}
	if v, ok := m["context_window"]; ok {
		a.ContextWindow, _ = d.integer(p.key("context_window"), v, 1, maxContextWindow)
	}
	if v, ok := m["scratchpad"]; ok {
		o := d.scratchpad(p.key("scratchpad"), v)
		a.Scratchpad = o.apply(a.Scratchpad)
	}
}

// scratchpad decodes [agent.scratchpad] or a worker's override of it; both
// have the same keys, and only the keys present are set.
func (d *decoder) scratchpad(p keyPath, v any) ScratchpadOverride {
	var o ScratchpadOverride
	m, ok := d.table(p, v)
	if !ok {
		return o
	}
	d.checkKeys(p, m, "enabled", "context_safety_margin", "max_extraction_tokens", "turn_depth_bonus", "result_view", "memory_tool")
	if v, ok := m["enabled"]; ok {
		if b, ok := d.boolean(p.key("enabled"), v); ok {
			o.Enabled = &b
		}
	}
	if v, ok := m["context_safety_margin"]; ok {
		if f, ok := d.fraction(p.key("context_safety_margin"), v); ok {
			o.ContextSafetyMargin = &f
		}
	}
	if v, ok := m["max_extraction_tokens"]; ok {
		if n, ok := d.integer(p.key("max_extraction_tokens"), v, 1, maxContextWindow); ok {
			o.MaxExtractionTokens = &n
		}
	}
	if v, ok := m["turn_depth_bonus"]; ok {
		if n, ok := d.integer(p.key("turn_depth_bonus"), v, 0, 1000); ok {
			o.TurnDepthBonus = &n
		}
	}
	if v, ok := m["result_view"]; ok {
		if s, ok := d.oneOf(p.key("result_view"), v, ViewText, ViewStructured); ok {
			o.ResultView = &s
		}
	}
	if v, ok := m["memory_tool"]; ok {
		if s, ok := d.str(p.key("memory_tool"), v); ok {
			if why := memoryToolProblem(s); why != "" {
				d.fail(p.key("memory_tool"), "%q: %s", s, why)
			} else {
				o.MemoryTool = &s
			}
		}
	}
	return o
}

// apply returns s with every field o sets replaced.
func (o ScratchpadOverride) apply(s Scratchpad) Scratchpad {
	if o.Enabled != nil {
		s.Enabled = *o.Enabled
	}
	if o.ContextSafetyMargin != nil {
		s.ContextSafetyMargin = *o.ContextSafetyMargin
	}
	if o.MaxExtractionTokens != nil {
		s.MaxExtractionTokens = *o.MaxExtractionTokens
	}
	if o.TurnDepthBonus != nil {
		s.TurnDepthBonus = *o.TurnDepthBonus
	}
	if o.ResultView != nil {
		s.ResultView = *o.ResultView
	}
	if o.MemoryTool != nil {
		s.MemoryTool = *o.MemoryTool
	}
	return s
}

func (d *decoder) orchestration(p keyPath, v any, o *Orchestration) {
	m, ok := d.table(p, v)
	if !ok {
		return
	}
	d.checkKeys(p, m, "worker")
	wv, ok := m["worker"]
	if !ok {
		return
	}
	wp := p.key("worker")
	workers, ok := d.table(wp, wv)
	if !ok {
		return
	}
	for _, name := range d.sortedKeys(wp, workers) {
		if w, ok := d.worker(wp.key(name), name, workers[name]); ok {
			o.Workers[name] = w
		}
	}
}

func (d *decoder) worker(p keyPath, name string, v any) (Worker, bool) {
	w := Worker{Name: name}
	m, ok := d.table(p, v)
	if !ok {
		return w, false
	}
	if name == "" {
		d.fail(p, "worker name must not be empty")
	}
	d.checkKeys(p, m, "model", "provider", "context_window", "scratchpad")
	if v, ok := m["model"]; ok {
		w.Model, _ = d.nonEmpty(p.key("model"), v)
	}
	if v, ok := m["provider"]; ok {
		w.Provider, _ = d.nonEmpty(p.key("provider"), v)
	}
	if v, ok := m["context_window"]; ok {
		w.ContextWindow, _ = d.integer(p.key("context_window"), v, 1, maxContextWindow)
	}
	if v, ok := m["scratchpad"]; ok {
		w.Scratchpad = d.scratchpad(p.key("scratchpad"), v)
	}
	return w, true
}
