package legacy

import (
	"net/http"
	"net/netip"
	"strings"
	"testing"
)

func TestClientAddress(t *testing.T) {
	proxies := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("127.0.0.1/32"), netip.MustParsePrefix("2001:db8:1::/48")}
	for _, tc := range []struct {
		name    string
		remote  string
		xff     []string
		trusted []netip.Prefix
		want    string
	}{
		{"no proxy configured: the header is ignored", "198.51.100.1:4000", []string{"203.0.113.9"}, nil, "198.51.100.1"},
		{"an untrusted peer's header is ignored", "198.51.100.1:4000", []string{"203.0.113.9"}, proxies, "198.51.100.1"},
		{"a trusted proxy without the header", "10.1.2.3:4000", nil, proxies, "10.1.2.3"},
		{"one trusted proxy", "10.1.2.3:4000", []string{"203.0.113.9"}, proxies, "203.0.113.9"},
		{"a spoofed entry left of the real one is not believed", "10.1.2.3:4000", []string{"192.0.2.66, 203.0.113.9"}, proxies, "203.0.113.9"},
		{"a chain of trusted proxies", "127.0.0.1:4000", []string{"192.0.2.66, 203.0.113.9, 10.9.9.9"}, proxies, "203.0.113.9"},
		{"several header lines, read from the last", "10.1.2.3:4000", []string{"192.0.2.66", "203.0.113.9, 10.2.2.2"}, proxies, "203.0.113.9"},
		{"only trusted hops: the leftmost", "10.1.2.3:4000", []string{"10.4.4.4, 10.5.5.5"}, proxies, "10.4.4.4"},
		{"an entry with a port", "10.1.2.3:4000", []string{"203.0.113.9:5555"}, proxies, "203.0.113.9"},
		{"IPv6 with a port", "[2001:db8:1::5]:443", []string{"[2001:db8:2::7]:1234"}, proxies, "2001:db8:2::7"},
		{"an IPv4-mapped peer", "[::ffff:10.1.2.3]:4000", []string{"203.0.113.9"}, proxies, "203.0.113.9"},
		{"garbage stops at the last trusted hop", "10.1.2.3:4000", []string{"203.0.113.9, not-an-ip"}, proxies, "10.1.2.3"},
		{"empty entries are skipped", "10.1.2.3:4000", []string{"203.0.113.9, , "}, proxies, "203.0.113.9"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &http.Request{RemoteAddr: tc.remote, Header: http.Header{}}
			for _, v := range tc.xff {
				r.Header.Add("X-Forwarded-For", v)
			}
			if got := clientAddress(r, tc.trusted).String(); got != tc.want {
				t.Errorf("clientAddress = %s, want %s", got, tc.want)
			}
		})
	}
}

// A header of many trusted hops is read only so far: a client cannot make
// the server walk an unbounded list.
func TestClientAddressBoundsTheWalk(t *testing.T) {
	proxies := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}
	hops := strings.Repeat("10.0.0.1, ", 100000) + "10.0.0.2"
	r := &http.Request{RemoteAddr: "10.1.2.3:4000", Header: http.Header{"X-Forwarded-For": {"203.0.113.9, " + hops}}}
	if got := clientAddress(r, proxies).String(); got != "10.0.0.1" {
		t.Errorf("clientAddress = %s, want the %dth hop from the right, 10.0.0.1", got, maxForwardedHops)
	}
}

// FuzzClientAddress reads hostile X-Forwarded-For headers: the address
// found is the peer's or one written in the header, never anything else,
// and nothing panics. Its seeds are in testdata/fuzz/FuzzClientAddress.
func FuzzClientAddress(f *testing.F) {
	proxies := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("2001:db8:1::/48")}
	f.Fuzz(func(t *testing.T, remote, xff string) {
		r := &http.Request{RemoteAddr: remote, Header: http.Header{"X-Forwarded-For": {xff}}}
		got := clientAddress(r, proxies)
		if got == peerAddr(remote) {
			return
		}
		for _, e := range strings.Split(xff, ",") {
			if a, ok := parseForwarded(strings.TrimSpace(e)); ok && a == got {
				return
			}
		}
		t.Errorf("clientAddress(%q, %q) = %v: neither the peer nor an entry of the header", remote, xff, got)
	})
}
