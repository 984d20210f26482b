package divert

// funcs is an [Account] of functions, each optional: what a test watches.
// left nil is no bound.
type funcs struct {
	left        func() int
	charged     func(int)
	intercepted func(int)
	track       func() func()
}

func (f funcs) Left() int {
	if f.left == nil {
		return -1
	}
	return f.left()
}

func (f funcs) Charge(n int) {
	if f.charged != nil {
		f.charged(n)
	}
}

func (f funcs) Intercepted(n int) {
	if f.intercepted != nil {
		f.intercepted(n)
	}
}

func (funcs) Masked(map[string]int) {}
func (funcs) Stored(string)         {}
func (funcs) Reserve(int64) error   { return nil }

func (f funcs) Track() func() {
	if f.track == nil {
		return func() {}
	}
	return f.track()
}
