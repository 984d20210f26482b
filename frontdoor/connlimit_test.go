package frontdoor_test

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/scratchpad-mcp/scratchpad-mcp/frontdoor"
	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testflood"
	"github.com/scratchpad-mcp/scratchpad-mcp/internal/testwait"
)

// frontDoor is the bearer check of a server with tokens, as serve's is:
// a request with the token proves its connection, one without is
// answered 401 and its connection closed.
func frontDoor(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Authorization") != "Bearer good" {
		w.Header().Set("Connection", "close")
		http.Error(w, "missing or invalid bearer token", http.StatusUnauthorized)
		return
	}
	frontdoor.ProveConnection(r.Context())
	_, _ = io.WriteString(w, "ok")
}

// serveLimited serves frontDoor on a real listener bounded by lim.
func serveLimited(t *testing.T, lim frontdoor.ConnLimit) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	limited := frontdoor.LimitConnections(ln, lim, quietLogger())
	srv := &http.Server{Handler: http.HandlerFunc(frontDoor), ReadHeaderTimeout: 10 * time.Second, ConnContext: limited.ConnContext}
	go func() { _ = srv.Serve(limited) }()
	t.Cleanup(func() { _ = srv.Close() })
	return ln.Addr().String()
}

// rawRequest sends an authenticated GET on c and reads its answer's
// status.
func rawRequest(c net.Conn, br *bufio.Reader) (int, error) {
	return rawGet(c, br, "/", "x", "good", 5*time.Second)
}

// rawGet sends GET path with Host host and the bearer token on c, within
// timeout, and reads its answer's status (the body read to its end, so
// the connection may carry the next request).
func rawGet(c net.Conn, br *bufio.Reader, path, host, token string, timeout time.Duration) (int, error) {
	_ = c.SetDeadline(time.Now().Add(timeout))
	if _, err := fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\n\r\n", path, host, token); err != nil {
		return 0, err
	}
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		return 0, err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, nil
}

// Unauthenticated sockets cannot lock owners out: with bearer tokens
// (ConnLimit.Proving), a flood of silent sockets above max_connections,
// each reopened as soon as the server closes it, holds only the
// unproven share; clients that present a valid token on new connections
// are served, and connections proven before the flood keep their places.
// With one bound for all (today's without tokens) the same flood leaves
// nearly every new client a 503, which the test shows and does not
// assert.
func TestUnprovenConnectionsBounded(t *testing.T) {
	const max, attempts = 64, 40
	for _, c := range []struct {
		name    string
		proving bool
	}{{"one bound", false}, {"proving", true}} {
		t.Run(c.name, func(t *testing.T) {
			addr := serveLimited(t, frontdoor.ConnLimit{Max: max, Proving: c.proving})
			// Proven connections held across the flood.
			var held []net.Conn
			var heldR []*bufio.Reader
			for range 8 {
				conn, err := net.Dial("tcp", addr)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { conn.Close() })
				br := bufio.NewReader(conn)
				if code, err := rawRequest(conn, br); err != nil || code != http.StatusOK {
					t.Fatalf("a client before the flood: %d %v", code, err)
				}
				held, heldR = append(held, conn), append(heldR, br)
			}
			stop := testflood.Silent(addr, max+16)
			stopped := false
			defer func() {
				if !stopped {
					stop()
				}
			}()
			// The flood holds every place it can get before clients come.
			time.Sleep(200 * time.Millisecond)
			var ok atomic.Int64
			var wg sync.WaitGroup
			work := make(chan int)
			for range 8 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for range work {
						// A new client: a connection of its own.
						conn, err := net.Dial("tcp", addr)
						if err != nil {
							t.Logf("client: %v", err)
							continue
						}
						code, err := rawRequest(conn, bufio.NewReader(conn))
						conn.Close()
						switch {
						case err != nil:
							t.Logf("client: %v", err)
						case code != http.StatusOK:
							t.Logf("client: HTTP %d", code)
						default:
							ok.Add(1)
						}
					}
				}()
			}
			for i := range attempts {
				work <- i
			}
			close(work)
			wg.Wait()
			heldOK := 0
			for i, conn := range held {
				if code, err := rawRequest(conn, heldR[i]); err == nil && code == http.StatusOK {
					heldOK++
				}
			}
			opened := stop()
			stopped = true
			t.Logf("%s: %d of %d new authenticated clients served, %d of %d proven connections kept, under a flood of %d silent sockets (%d opened)",
				c.name, ok.Load(), attempts, heldOK, len(held), max+16, opened)
			if c.proving && (ok.Load() != attempts || heldOK != len(held)) {
				t.Errorf("with proving, %d of %d clients served and %d of %d proven connections kept; want all", ok.Load(), attempts, heldOK, len(held))
			}
		})
	}
}

// A connection that proved itself is never closed for a newcomer, even
// when proven connections take every place: the newcomer gets the 503.
func TestProvenConnectionsKeepTheirPlaces(t *testing.T) {
	const max = 8
	addr := serveLimited(t, frontdoor.ConnLimit{Max: max, Proving: true})
	var held []net.Conn
	for range max {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		if code, err := rawRequest(conn, bufio.NewReader(conn)); err != nil || code != http.StatusOK {
			t.Fatalf("client: %d %v", code, err)
		}
		held = append(held, conn)
	}
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetReadDeadline(time.Now().Add(testwait.Timeout))
	b, err := io.ReadAll(conn)
	if err != nil && !errors.Is(err, io.EOF) {
		t.Fatal(err)
	}
	if len(b) < 12 || string(b[:12]) != "HTTP/1.1 503" {
		t.Fatalf("a newcomer with every place proven: %q", b)
	}
	for i, c := range held {
		if code, err := rawRequest(c, bufio.NewReader(c)); err != nil || code != http.StatusOK {
			t.Fatalf("proven connection %d after the newcomer: %d %v", i, code, err)
		}
	}
}

// A newcomer past the unproven share takes the place of the oldest
// connection that sent nothing, not of an older one that began a
// request: that one still gets its answer.
func TestQuietConnectionsGoFirst(t *testing.T) {
	const max = 8 // an unproven share of 2
	addr := serveLimited(t, frontdoor.ConnLimit{Max: max, Proving: true})
	dial := func() net.Conn {
		t.Helper()
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	talking := dial()
	if _, err := io.WriteString(talking, "GET / HTTP/1.1\r\nHost: x\r\n"); err != nil {
		t.Fatal(err)
	}
	quiet := dial()
	newcomer := dial() // past the share: the quiet one goes
	_ = quiet.SetReadDeadline(time.Now().Add(testwait.Timeout))
	if n, err := quiet.Read(make([]byte, 1)); err == nil {
		t.Fatalf("the quiet connection was kept (read %d bytes)", n)
	} else if errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatal("the quiet connection was kept")
	}
	if _, err := io.WriteString(talking, "Authorization: Bearer good\r\n\r\n"); err != nil {
		t.Fatalf("the connection that spoke was closed: %v", err)
	}
	_ = talking.SetReadDeadline(time.Now().Add(testwait.Timeout))
	resp, err := http.ReadResponse(bufio.NewReader(talking), nil)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("the connection that spoke: %v %v", resp, err)
	}
	resp.Body.Close()
	if code, err := rawRequest(newcomer, bufio.NewReader(newcomer)); err != nil || code != http.StatusOK {
		t.Fatalf("the newcomer: %d %v", code, err)
	}
}
