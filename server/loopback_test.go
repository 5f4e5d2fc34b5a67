package server

import (
	"net"
	"strings"
	"testing"
)

// isLoopbackHostNet is isLoopbackHost as it was with net.ParseIP.
func isLoopbackHostNet(h string) bool {
	if strings.EqualFold(h, "localhost") || strings.HasSuffix(strings.ToLower(h), ".localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// FuzzIsLoopbackHost holds isLoopbackHost (netip, no allocation) to its
// earlier form with net.ParseIP.
func FuzzIsLoopbackHost(f *testing.F) {
	for _, h := range []string{"127.0.0.1", "127.1.2.3", "::1", "::ffff:127.0.0.1", "::ffff:7f00:1", "fe80::1%lo", "::1%lo", "0:0:0:0:0:0:0:1",
		"localhost", "LOCALHOST", "a.localhost", "example.com", "10.0.0.1", "127.000.000.001", "0127.0.0.1", "127.0.0.1.", "", "::", "1.2.3.4%x", "[::1]"} {
		f.Add(h)
	}
	f.Fuzz(func(t *testing.T, h string) {
		if got, want := isLoopbackHost(h), isLoopbackHostNet(h); got != want {
			t.Fatalf("isLoopbackHost(%q) = %v, want %v", h, got, want)
		}
	})
}

func TestIsLoopbackHostAllocs(t *testing.T) {
	if n := testing.AllocsPerRun(100, func() { isLoopbackHost(hostname("127.0.0.1:8080")) }); n != 0 {
		t.Errorf("isLoopbackHost allocates %v times", n)
	}
}

// FuzzLoopbackHostPort holds loopbackHostPort, the fast path of the Host
// check on a loopback listener, to the general check: whatever it accepts,
// isLoopbackHost(hostname(h)) accepts too.
func FuzzLoopbackHostPort(f *testing.F) {
	f.Fuzz(func(t *testing.T, h string) {
		if loopbackHostPort(h) && !isLoopbackHost(hostname(h)) {
			t.Fatalf("loopbackHostPort(%q) is true, the general check false", h)
		}
	})
}

// TestLoopbackHostPort: the usual Host headers take the fast path; the
// rest are left to the general check.
func TestLoopbackHostPort(t *testing.T) {
	for h, want := range map[string]bool{
		"127.0.0.1:8080": true, "localhost:1": true, "[::1]:443": true,
		"127.0.0.1": false, "127.0.0.1:": false, "localhost:80x": false, "localhost:8:8": false,
		"[::1]": false, "LOCALHOST:80": false, "127.0.0.2:80": false, "example.com:80": false, "": false,
	} {
		if got := loopbackHostPort(h); got != want {
			t.Errorf("loopbackHostPort(%q) = %v, want %v", h, got, want)
		}
		if want && !isLoopbackHost(hostname(h)) {
			t.Errorf("%q: the general check refuses it", h)
		}
	}
}
