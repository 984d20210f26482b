package budget

import (
	"fmt"
	"math"
)

// Options size an agent's budget. The zero value is not usable on its own:
// it needs a Model the built-in table knows or a ContextWindow.
type Options struct {
	// Model names the agent's model, looked up with [ContextWindowFor]
	// when ContextWindow is zero.
	Model string

	// ContextWindow, in tokens, overrides the table. Zero means "look up
	// Model".
	ContextWindow int

	// SafetyMargin is the share of the window kept free for the model's
	// own output and the conversation around tool results, in [0, 1).
	// Zero means none: the same meaning as config's context_safety_margin,
	// whose default (0.20) config applies.
	SafetyMargin float64
}

// Window returns the context window: ContextWindow if set, else the table
// entry for Model. It fails with [ErrUnknownModel] when neither is known.
func (o Options) Window() (int, error) {
	switch {
	case o.ContextWindow < 0:
		return 0, fmt.Errorf("budget: context_window %d is negative: %w", o.ContextWindow, ErrInvalidOptions)
	case o.ContextWindow > 0:
		return o.ContextWindow, nil
	}
	if w, ok := ContextWindowFor(o.Model); ok {
		return w, nil
	}
	return 0, fmt.Errorf("budget: model %q: %w", o.Model, ErrUnknownModel)
}

// Usable returns window × (1 − margin), rounded down: the tokens an agent
// may spend on what this server returns to it, starting from what it
// already carries (see [NewAgent]).
func (o Options) Usable() (int, error) {
	w, err := o.Window()
	if err != nil {
		return 0, err
	}
	m := o.SafetyMargin
	if m < 0 || m >= 1 || math.IsNaN(m) {
		return 0, fmt.Errorf("budget: context_safety_margin %v is not in [0, 1): %w", o.SafetyMargin, ErrInvalidOptions)
	}
	return int(float64(w) * (1 - m)), nil
}
