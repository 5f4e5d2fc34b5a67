package server

import (
	"net/http"
	"testing"
)

// TestHeaderKeysCanonical: headerValue and headerGet index the header map
// with the name as given, which finds what net/http filed only when the
// name is in canonical form. Every name they are given must be.
func TestHeaderKeysCanonical(t *testing.T) {
	for _, k := range []string{HeaderMethod, HeaderName, HeaderSessionID, protocolVersionKey, "Content-Type", "Origin"} {
		if c := http.CanonicalHeaderKey(k); c != k {
			t.Errorf("%q is not canonical (%q)", k, c)
		}
	}
	h := http.Header{}
	h.Set(HeaderProtocolVersion, " 2026-07-28 ")
	h.Set("mcp-method", "tools/call")
	h.Add(HeaderName, "a")
	h.Add(HeaderName, "b")
	if v, ok, err := headerValue(h, HeaderProtocolVersion); v != "2026-07-28" || !ok || err != nil {
		t.Errorf("protocol version: %q %v %v", v, ok, err)
	}
	if v, ok, err := headerValue(h, HeaderMethod); v != "tools/call" || !ok || err != nil {
		t.Errorf("method: %q %v %v", v, ok, err)
	}
	if _, ok, err := headerValue(h, HeaderName); !ok || err == nil {
		t.Errorf("a repeated name: %v %v, want an error", ok, err)
	}
	if _, ok, err := headerValue(h, HeaderSessionID); ok || err != nil {
		t.Errorf("an absent header: %v %v", ok, err)
	}
	if got, want := headerGet(h, HeaderName), h.Get(HeaderName); got != want {
		t.Errorf("headerGet = %q, Header.Get %q", got, want)
	}
	if got := headerGet(h, "Origin"); got != "" {
		t.Errorf("headerGet of an absent header = %q", got)
	}
}
