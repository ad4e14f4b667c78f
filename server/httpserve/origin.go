package httpserve

import (
	"fmt"
	"net"
	"net/http"
	"strings"
)

// checkOrigin applies the Host and Origin allow-lists; it returns why a request is refused,
// or "".
func (h *Handler) checkOrigin(r *http.Request) string {
	if !hostAllowed(r.Host, h.opts.AllowedHosts) {
		return fmt.Sprintf("Host %q is not allowed; the operator can add it with --allowed-hosts.", r.Host)
	}
	if o := r.Header.Get("Origin"); o != "" && !originAllowed(o, r.Host, h.opts.AllowedOrigins) {
		return fmt.Sprintf("Origin %q is not allowed; the operator can add it with --allowed-origins.", o)
	}
	return ""
}

func hostAllowed(hostport string, allowed []string) bool {
	host := hostOnly(hostport)
	if host == "localhost" || isLoopbackIP(host) {
		return true
	}
	for _, a := range allowed {
		if a == "*" || strings.EqualFold(hostOnly(a), host) {
			return true
		}
	}
	return false
}

func originAllowed(origin, host string, allowed []string) bool {
	for _, a := range allowed {
		if a == "*" || strings.EqualFold(strings.TrimRight(a, "/"), origin) {
			return true
		}
	}
	// A page served by this very host (same origin) may call it.
	return strings.EqualFold(origin, "http://"+host) || strings.EqualFold(origin, "https://"+host)
}

func hostOnly(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return strings.ToLower(h)
	}
	return strings.ToLower(strings.Trim(hostport, "[]"))
}

func isLoopbackIP(host string) bool {
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
