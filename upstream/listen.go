package upstream

// covered reports whether the live subscriptions/listen stream tells
// when listing k changes, so its ttl need not be watched; u.mu is held.
func (u *Upstream) covered(k ListKind) bool { return u.listening&k != 0 }

// listenChanged wakes the listen loop: the resource subscriptions changed.
func (u *Upstream) listenChanged() {
	select {
	case u.listenWake <- struct{}{}:
	default:
	}
}
