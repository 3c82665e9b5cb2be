package format

import "net/netip"

// validIPv4 checks a dotted-quad IPv4 address (RFC 2673 §3.2): four decimal
// octets, no leading zeros, nothing else.
func validIPv4(s string) bool {
	a, err := netip.ParseAddr(s)
	return err == nil && a.Is4()
}

// validIPv6 checks an RFC 4291 §2.2 IPv6 address, with an optional trailing
// dotted-quad, and without a zone.
func validIPv6(s string) bool {
	a, err := netip.ParseAddr(s)
	return err == nil && a.Is6() && a.Zone() == ""
}
