// Package clientaddr reads the address of the client that sent an HTTP
// request, believing X-Forwarded-For only from trusted proxies: whom an
// anonymous caller's quotas (2025-11-25 sessions, tasks) count against.
package clientaddr

import (
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// MaxHops bounds how many X-Forwarded-For entries are read, from
// the right: a chain of trusted proxies is short, and the header is the
// client's to fill.
const MaxHops = 16

// Of returns the address of the client that sent r: the peer's
// IP, or, when the peer is a trusted proxy, the address that proxy read in
// X-Forwarded-For. Entries are read from the right (each proxy appends the
// address it saw), skipping those of trusted proxies; the first address
// that is not a trusted proxy's is the client. Anything left of it was
// written by the client or an untrusted hop and is never believed. An
// entry that does not parse ends the walk at the last trusted hop.
func Of(r *http.Request, trusted []netip.Prefix) netip.Addr {
	addr := Peer(r.RemoteAddr)
	if !isTrusted(addr, trusted) {
		return addr
	}
	values := r.Header.Values("X-Forwarded-For")
	hops := 0
	for i := len(values) - 1; i >= 0; i-- {
		v := values[i]
		for v != "" && hops < MaxHops {
			var entry string
			if j := strings.LastIndexByte(v, ','); j >= 0 {
				entry, v = v[j+1:], v[:j]
			} else {
				entry, v = v, ""
			}
			entry = strings.TrimSpace(entry)
			if entry == "" {
				continue
			}
			hops++
			a, ok := ParseForwarded(entry)
			if !ok {
				return addr
			}
			addr = a
			if !isTrusted(addr, trusted) {
				return addr
			}
		}
	}
	return addr
}

// Peer parses net/http's RemoteAddr ("ip:port"); an address it cannot
// read is the zero Addr, which is one address like any other.
func Peer(remote string) netip.Addr {
	host := remote
	if h, _, err := net.SplitHostPort(remote); err == nil {
		host = h
	}
	a, _ := netip.ParseAddr(host)
	return a.Unmap()
}

// ParseForwarded reads one X-Forwarded-For entry: an IP address, possibly
// with a port ("1.2.3.4:5678", "[2001:db8::1]:443").
func ParseForwarded(s string) (netip.Addr, bool) {
	if a, err := netip.ParseAddr(s); err == nil {
		return a.Unmap(), true
	}
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return ap.Addr().Unmap(), true
	}
	return netip.Addr{}, false
}

func isTrusted(a netip.Addr, trusted []netip.Prefix) bool {
	if !a.IsValid() {
		return false
	}
	for _, p := range trusted {
		if p.Contains(a) {
			return true
		}
	}
	return false
}
