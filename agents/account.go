package agents

// account is an agent's [divert.Account]: the budget a divert charges and
// bounds by, the usage record it counts in, the stored outputs retention
// keeps while the session lives, and the owner's quota of stored bytes.
type account struct{ a *Agent }

func (c account) Left() int {
	if b := c.a.Budget; b != nil && b.Limited() {
		return b.Remaining()
	}
	return -1
}

func (c account) Charge(tokens int)            { c.a.Budget.Charge(tokens) }
func (c account) Intercepted(tokens int)       { c.a.Budget.AddIntercepted(tokens) }
func (c account) Masked(counts map[string]int) { c.a.Budget.AddMasked(counts) }
func (c account) Stored(path string)           { c.a.point(path) }
func (c account) Track() (done func())         { return c.a.Budget.Track() }

func (c account) Reserve(n int64) error {
	return c.a.reg.quotas.reserve(c.a.ID.Owner, c.a.Layout.Base, n)
}
