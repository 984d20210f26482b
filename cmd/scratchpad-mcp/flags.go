package main

import (
	"errors"
	"flag"
)

// parseMixed parses args with fs where flags may come before, between or
// after the positional arguments (flag.Parse stops at the first
// non-flag, so it parses piecewise), and returns the positional ones.
// When parsing fails it returns the exit code: 0 for -h, 2 otherwise.
func parseMixed(fs *flag.FlagSet, args []string) (pos []string, code int, ok bool) {
	for rest := args; ; {
		if err := fs.Parse(rest); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, 0, false
			}
			return nil, 2, false
		}
		if fs.NArg() == 0 {
			return pos, 0, true
		}
		pos = append(pos, fs.Arg(0))
		rest = fs.Args()[1:]
	}
}
