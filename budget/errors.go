package budget

import "errors"

// Sentinel errors. Functions wrap them with %w and add context (the model
// name, the file path), so compare with [errors.Is].
var (
	// ErrUnknownModel reports that [Options] named a model the built-in
	// table does not know and gave no ContextWindow. The caller should
	// name the agent and ask for an explicit context_window.
	ErrUnknownModel = errors.New("no context window known for this model: set context_window")

	// ErrInvalidOptions reports a negative context window or a safety
	// margin of 1 or more (which would leave nothing usable).
	ErrInvalidOptions = errors.New("invalid budget options")

	// ErrEventsClosed is returned by [Events.Finish] after [Events.Close].
	ErrEventsClosed = errors.New("usage events closed")
)
