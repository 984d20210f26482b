package divert

// Account is the calling agent's side of a divert, typed: the budget it is
// charged to, its usage record, and what retention keeps. Package agents'
// agent is one ([Agent].Account); proxy wraps one to observe charges for
// telemetry. Its methods may be called from a background goroutine (a
// large output is counted after its answer is sent), so they must be safe
// for concurrent use.
type Account interface {
	// Left is how many tokens the budget has left; negative is no bound.
	// A result that does not fit is diverted whatever its threshold
	// ([Decide]): passing it would spend more context than the agent has.
	Left() int
	// Charge is told the exact token count of what the model receives of
	// a result ([Charge]): the budget is charged with it.
	Charge(tokens int)
	// Intercepted is told a diverted output's exact token count, once per
	// output, possibly after the pointer was returned (large outputs are
	// counted to the end in the background).
	Intercepted(tokens int)
	// Masked is told the credentials redaction masked in a result the
	// agent was given, by kind (its usage record counts them).
	Masked(counts map[string]int)
	// Stored is told a stored file's path before the pointer to it is
	// returned, so retention keeps it while the session lives.
	Stored(path string)
	// Reserve is told the bytes about to be stored; an error refuses
	// them: the output is then neither stored nor returned, and the model
	// reads the error (an owner at its bound of stored data).
	Reserve(n int64) error
	// Track is called before a count is left to the background and
	// returns the function to call once it was reported (Intercepted or
	// Charge), so that the end of the session can wait for it.
	Track() (done func())
}

// account is a's Account, nil for none.
func (a *Agent) account() Account {
	if a == nil {
		return nil
	}
	return a.Account
}

// left is the budget a has left, negative for no bound (no account).
func (a *Agent) left() int {
	if acc := a.account(); acc != nil {
		return acc.Left()
	}
	return -1
}

// Bounded reports whether a's budget bounds what passes: a result that
// does not fit what is left is diverted ([Decide]).
func (a *Agent) Bounded() bool { return a.left() >= 0 }

// charge tells a's account the cost of what the model receives, and
// reports whether there was an account to tell.
func (a *Agent) charge(tokens int) bool {
	if acc := a.account(); acc != nil {
		acc.Charge(tokens)
		return true
	}
	return false
}

// Masked tells a's account what redaction masked in a result it was
// given; nothing without an account.
func (a *Agent) Masked(counts map[string]int) {
	if acc := a.account(); acc != nil {
		acc.Masked(counts)
	}
}

// intercepted tells a's account a diverted output's exact count.
func (a *Agent) intercepted(tokens int) {
	if acc := a.account(); acc != nil {
		acc.Intercepted(tokens)
	}
}

// track is a's account's Track, or a no-op.
func (a *Agent) track() func() {
	if acc := a.account(); acc != nil {
		return acc.Track()
	}
	return func() {}
}
