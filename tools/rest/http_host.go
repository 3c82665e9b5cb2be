package rest

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"

	"github.com/verifier-dev/verifier/engine"
	"github.com/verifier-dev/verifier/tools"
	"github.com/verifier-dev/verifier/tools/mcpwire"
)

// AllowedHostFlag is the server flag that adds a name to those a loopback
// listener answers for; the refusals of hostGuard name it in their fix.
const AllowedHostFlag = "--allowed-host"

// hostGuard is the DNS-rebinding and cross-origin defence of every route,
// /mcp included — one rule, checked before any route runs:
//
//   - On a connection to a loopback address, the Host header must name
//     a loopback host (localhost, 127.0.0.0/8, ::1: the rule the MCP SDK
//     applies to /mcp, which this replaces; and 0.0.0.0 or ::, which reach
//     a wildcard listener from this host), the host of the public URL
//     (--public-url), or a name of --allowed-host. A page on another name
//     that a DNS rebinding pointed at 127.0.0.1 sends its own name, and
//     is refused: without the check it could read the local server's
//     history and spend its allowance.
//   - A present Origin header must be the server's own origin on /mcp
//     (any method, as the MCP transport spec requires) and on every
//     request that may change state (any method but GET, HEAD and
//     OPTIONS; the pages' forms and scripts POST): the origin of the Host
//     it was sent to, a loopback origin on a loopback connection, the
//     public URL's origin, or one whose host is a name of --allowed-host.
//
// A refusal is a 403 `forbidden` that names the header and the flag and
// echoes neither header; /mcp gets it as a JSON-RPC error.
type hostGuard struct {
	names        map[string]bool // lower-cased host names, without port
	publicOrigin string          // scheme://host[:port] of the public URL, lower-cased
}

// newHostGuard allows publicURL's host and origin and the names of
// allowed (each a host name or IP address, without scheme or port).
func newHostGuard(publicURL string, allowed []string) *hostGuard {
	g := &hostGuard{names: map[string]bool{}}
	if u, err := url.Parse(publicURL); err == nil && u.Host != "" {
		g.names[hostOnly(u.Host)] = true
		g.publicOrigin = strings.ToLower(u.Scheme + "://" + u.Host)
	}
	for _, name := range allowed {
		g.names[hostOnly(name)] = true
	}
	return g
}

// refused answers r with a 403 and reports true when the rule refuses it.
func (g *hostGuard) refused(w http.ResponseWriter, r *http.Request) bool {
	loopback := onLoopback(r)
	header := ""
	switch {
	case loopback && !g.allowedHost(r.Host):
		header = "Host"
	case r.Header.Get("Origin") != "" && (r.URL.Path == "/mcp" || !safeMethod(r.Method)) &&
		!g.allowedOrigin(r.Header.Get("Origin"), r.Host, loopback):
		header = "Origin"
	default:
		return false
	}
	if r.URL.Path == "/mcp" {
		mcpwire.WriteRefusal(w, http.StatusForbidden, fmt.Sprintf(
			"Forbidden: the %s header names a site this server does not answer for (DNS-rebinding and cross-origin defence). %s Nothing was run or charged.",
			header, foreignFix))
		return true
	}
	writeError(w, forbidden(header))
	return true
}

// foreignFix is the fix of a hostGuard refusal.
const foreignFix = "Send the request to a loopback name (localhost, 127.0.0.1, [::1]) or to --public-url's host, from a page of the same origin; " +
	"an operator who serves this server under another name (a reverse proxy, a LAN name) starts it with " + AllowedHostFlag + " NAME (repeatable) or --public-url."

// forbidden is the 403 of a request whose header (Host or Origin) names a
// site the server does not answer for.
func forbidden(header string) *tools.Error {
	e := tools.NewError(tools.CodeForbidden, http.StatusForbidden, fmt.Sprintf(
		"The %s header names a site this server does not answer for (DNS-rebinding and cross-origin defence). Nothing was run or charged.", header))
	e.NextActions[0].Action = "use_allowed_host"
	problem := "names a host this server does not answer for on a loopback address"
	if header == "Origin" {
		problem = "names an origin other than this server's"
	}
	e.Fields = []engine.FieldProblem{{Field: header, Problem: problem, Fix: foreignFix}}
	return e
}

// allowedHost reports whether a Host header (host or host:port) names a
// loopback host or an allowed name.
func (g *hostGuard) allowedHost(hostport string) bool {
	host := hostOnly(hostport)
	return isLoopbackHost(host) || g.names[host]
}

// allowedOrigin reports whether an Origin header is the server's own
// origin for a request sent to Host host.
func (g *hostGuard) allowedOrigin(origin, host string, loopback bool) bool {
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Path != "" || u.User != nil {
		return false // "null" (a sandboxed or file: page), or not an origin
	}
	name := hostOnly(u.Host)
	switch {
	case strings.EqualFold(u.Host, host):
		return true // same origin as the Host it was sent to
	case loopback && isLoopbackHost(name):
		return true
	case g.publicOrigin != "" && strings.ToLower(u.Scheme+"://"+u.Host) == g.publicOrigin:
		return true
	}
	return g.names[name] && name != ""
}

// onLoopback reports whether r came in on a loopback address of this
// host, as the MCP SDK decides it (the connection's local address).
func onLoopback(r *http.Request) bool {
	addr, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok || addr == nil {
		return false
	}
	return isLoopbackHost(hostOnly(addr.String()))
}

// hostOnly is the host of host[:port] as names compare: lower-cased,
// without IPv6 brackets or a final dot.
func hostOnly(hostport string) string {
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		host = hostport
	}
	return strings.TrimSuffix(strings.ToLower(strings.Trim(host, "[]")), ".")
}

// isLoopbackHost reports whether host (no port, no brackets) is localhost,
// a loopback IP address, or the unspecified address (0.0.0.0, ::), which a
// client on this host may use to reach a wildcard listener. None of them
// is a name a rebinding page can send: its Host is its own name.
func isLoopbackHost(host string) bool {
	if host == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && (ip.Unmap().IsLoopback() || ip.IsUnspecified())
}

// safeMethod reports whether method does not change state.
func safeMethod(method string) bool {
	return method == http.MethodGet || method == http.MethodHead || method == http.MethodOptions
}
