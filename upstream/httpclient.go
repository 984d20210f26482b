package upstream

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// dialTimeout bounds opening a TCP connection (and a TLS handshake) to a
// remote upstream: a server that is down fails the call in seconds
// instead of hanging it.
const dialTimeout = 10 * time.Second

// newHTTPClient is the HTTP client of a remote upstream. It has no
// overall timeout, because event streams live as long as the session and
// a tool call as long as its server's timeout: every request carries a
// context that bounds it instead. Connecting is bounded here, redirects
// stay on the upstream's origin (the configured headers may be
// credentials), and proxies come from the environment. wrap, when set,
// wraps the transport (authorization).
func newHTTPClient(wrap func(http.RoundTripper) http.RoundTripper) *http.Client {
	tr := &http.Transport{Proxy: http.ProxyFromEnvironment}
	if dt, ok := http.DefaultTransport.(*http.Transport); ok {
		tr = dt.Clone()
	}
	tr.DialContext = (&net.Dialer{Timeout: dialTimeout, KeepAlive: 30 * time.Second}).DialContext
	tr.TLSHandshakeTimeout = dialTimeout
	tr.IdleConnTimeout = 90 * time.Second
	var rt http.RoundTripper = tr
	if wrap != nil {
		rt = wrap(tr)
	}
	return &http.Client{Transport: rt, CheckRedirect: sameOriginRedirect}
}

// sameOriginRedirect refuses a redirect to another origin: the config
// names the upstream's server, and the headers sent with every request
// may be its credentials.
func sameOriginRedirect(req *http.Request, via []*http.Request) error {
	if !sameOrigin(via[0].URL, req.URL) {
		return fmt.Errorf("redirect to another origin (%s) refused", origin(req.URL))
	}
	if len(via) >= 10 {
		return errors.New("stopped after 10 redirects")
	}
	return nil
}

// sameOrigin compares scheme, host and port, with default ports filled in.
func sameOrigin(a, b *url.URL) bool {
	return strings.EqualFold(a.Scheme, b.Scheme) && strings.EqualFold(a.Hostname(), b.Hostname()) && port(a) == port(b)
}

func port(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	switch strings.ToLower(u.Scheme) {
	case "http":
		return "80"
	case "https":
		return "443"
	}
	return ""
}

func origin(u *url.URL) string {
	if u.Hostname() == "" {
		return fmt.Sprintf("%q (no host)", u.Scheme+":")
	}
	return strings.ToLower(u.Scheme) + "://" + net.JoinHostPort(strings.ToLower(u.Hostname()), port(u))
}
