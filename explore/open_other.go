//go:build !unix

package explore

// nonblock: opening a named pipe does not block here.
const nonblock = 0
