//go:build race

package redact

// raceOn: the race detector makes sync.Pool drop items at random, so
// allocation counts mean nothing.
const raceOn = true
