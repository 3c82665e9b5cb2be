package payment

import (
	"net/http/httptest"
	"testing"
)

func TestClientID(t *testing.T) {
	tests := []struct {
		name       string
		remote     string
		xff        []string
		trustProxy bool
		want       string
	}{
		{"ipv4", "203.0.113.7:5123", nil, false, "203.0.113.7"},
		{"ipv6 cut to /64", "[2001:db8:1:2:3:4:5:6]:443", nil, false, "2001:db8:1:2::/64"},
		{"ipv4-mapped ipv6", "[::ffff:203.0.113.7]:80", nil, false, "203.0.113.7"},
		{"zone dropped", "[fe80::1%eth0]:80", nil, false, "fe80::/64"},
		{"xff ignored without trust", "10.0.0.1:80", []string{"198.51.100.1"}, false, "10.0.0.1"},
		{"xff last entry with trust", "10.0.0.1:80", []string{"192.0.2.66, 198.51.100.1"}, true, "198.51.100.1"},
		{"xff last header line", "10.0.0.1:80", []string{"192.0.2.66", "198.51.100.2"}, true, "198.51.100.2"},
		{"xff with port", "10.0.0.1:80", []string{"198.51.100.3:4444"}, true, "198.51.100.3"},
		{"xff ipv6 bracketed", "10.0.0.1:80", []string{"[2001:db8::1]"}, true, "2001:db8::/64"},
		{"xff garbage", "10.0.0.1:80", []string{"not-an-ip"}, true, unknownClient},
		{"no xff with trust", "10.0.0.1:80", nil, true, "10.0.0.1"},
		{"unreadable remote", "pipe", nil, false, unknownClient},
		{"bare ip", "198.51.100.9", nil, false, "198.51.100.9"},
		{"bare ipv6", "2001:db8:1:2::9", nil, false, "2001:db8:1:2::/64"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest("POST", "/verify/schema", nil)
			r.RemoteAddr = tt.remote
			for _, v := range tt.xff {
				r.Header.Add("X-Forwarded-For", v)
			}
			if got := ClientID(r, tt.trustProxy); got != tt.want {
				t.Errorf("ClientID = %q, want %q", got, tt.want)
			}
			if len(tt.xff) == 0 {
				if got := ClientIDOf(tt.remote); got != tt.want {
					t.Errorf("ClientIDOf(%q) = %q, want %q", tt.remote, got, tt.want)
				}
			}
		})
	}
}
