package payment

import (
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// unknownClient is the allowance key of a request whose address cannot be
// read: such clients share one allowance.
const unknownClient = "unknown"

// ClientID is the allowance key of r's client: its IP address, IPv6 cut to
// its /64 (one subscriber's usual prefix, so a client cannot mint fresh
// addresses for fresh allowances). With trustProxy, the address is the last
// entry of X-Forwarded-For, the one the nearest (trusted) proxy appended;
// without it, X-Forwarded-For is ignored.
func ClientID(r *http.Request, trustProxy bool) string {
	if trustProxy {
		if xff := lastForwardedFor(r.Header.Values("X-Forwarded-For")); xff != "" {
			return ClientIDOf(xff)
		}
	}
	return ClientIDOf(r.RemoteAddr)
}

// ClientIDOf is the allowance key of a client address ("host:port" or a
// bare IP), as [ClientID] computes it: for transports that carry the
// address rather than the request (MCP tool calls).
func ClientIDOf(addr string) string {
	addr = strings.TrimSpace(addr)
	if host, _, err := net.SplitHostPort(addr); err == nil {
		addr = host
	}
	ip, err := netip.ParseAddr(strings.Trim(addr, "[]"))
	if err != nil {
		return unknownClient
	}
	ip = ip.Unmap().WithZone("")
	if ip.Is4() {
		return ip.String()
	}
	p, err := ip.Prefix(64)
	if err != nil {
		return unknownClient
	}
	return p.String()
}

// lastForwardedFor is the last address of the X-Forwarded-For header lines.
func lastForwardedFor(lines []string) string {
	for i := len(lines) - 1; i >= 0; i-- {
		parts := strings.Split(lines[i], ",")
		for j := len(parts) - 1; j >= 0; j-- {
			if p := strings.TrimSpace(parts[j]); p != "" {
				if host, _, err := net.SplitHostPort(p); err == nil {
					return host
				}
				return strings.Trim(p, "[]")
			}
		}
	}
	return ""
}
