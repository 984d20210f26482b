// Package testflood holds a flood of silent sockets for the tests of
// connection bounds (server's and the binary's).
package testflood

import (
	"context"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// Silent holds n sockets to addr that never send a byte, opening a new
// one for each the server closes, until the returned stop is called; stop
// reports how many it opened.
func Silent(addr string, n int) (stop func() int64) {
	ctx, cancel := context.WithCancel(context.Background())
	var opened atomic.Int64
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			buf := make([]byte, 512)
			for ctx.Err() == nil {
				c, err := (&net.Dialer{}).DialContext(ctx, "tcp", addr)
				if err != nil {
					time.Sleep(time.Millisecond) // out of ports or stopping
					continue
				}
				opened.Add(1)
				stopRead := context.AfterFunc(ctx, func() { c.Close() })
				for {
					if _, err := c.Read(buf); err != nil {
						break // closed by the server, or a 503 read to its end
					}
				}
				stopRead()
				c.Close()
			}
		})
	}
	return func() int64 { cancel(); wg.Wait(); return opened.Load() }
}
