package frontdoor

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// ReboundHost reports a request that reached a loopback address under a
// name that is not loopback: a web page's DNS rebinding. Every endpoint of
// a loopback server refuses such a request, not only MCP's.
func ReboundHost(r *http.Request) bool {
	local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	return ok && local != nil && loopback(local.String()) && !loopback(r.Host)
}

// RefuseRebound answers 403 to a rebound request ([ReboundHost]) and
// reports whether it did.
func RefuseRebound(w http.ResponseWriter, r *http.Request) bool {
	if !ReboundHost(r) {
		return false
	}
	http.Error(w, fmt.Sprintf("Forbidden: invalid Host header %q", r.Host), http.StatusForbidden)
	return true
}

func loopback(hostport string) bool {
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		host = strings.Trim(hostport, "[]")
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}
