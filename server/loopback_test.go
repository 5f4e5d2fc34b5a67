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
