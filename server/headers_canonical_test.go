package server

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// TestHeaderKeysCanonical: headerValue and headerGet index the header map
// with the name as given, which finds what net/http filed only when the
// name is in canonical form. Every name they are given must be.
func TestHeaderKeysCanonical(t *testing.T) {
	for _, k := range []string{headerMethod, headerName, headerSessionID, protocolVersionKey, "Content-Type", "Origin"} {
		if c := http.CanonicalHeaderKey(k); c != k {
			t.Errorf("%q is not canonical (%q)", k, c)
		}
	}
	h := http.Header{}
	h.Set(headerProtocolVersion, " 2026-07-28 ")
	h.Set("mcp-method", "tools/call")
	h.Add(headerName, "a")
	h.Add(headerName, "b")
	if v, ok, err := headerValue(h, headerProtocolVersion); v != "2026-07-28" || !ok || err != nil {
		t.Errorf("protocol version: %q %v %v", v, ok, err)
	}
	if v, ok, err := headerValue(h, headerMethod); v != "tools/call" || !ok || err != nil {
		t.Errorf("method: %q %v %v", v, ok, err)
	}
	if _, ok, err := headerValue(h, headerName); !ok || err == nil {
		t.Errorf("a repeated name: %v %v, want an error", ok, err)
	}
	if _, ok, err := headerValue(h, headerSessionID); ok || err != nil {
		t.Errorf("an absent header: %v %v", ok, err)
	}
	if got, want := headerGet(h, headerName), h.Get(headerName); got != want {
		t.Errorf("headerGet = %q, Header.Get %q", got, want)
	}
	if got := headerGet(h, "Origin"); got != "" {
		t.Errorf("headerGet of an absent header = %q", got)
	}
}

// headerValueRef is headerValue as it was, trimming with strings.Trim.
func headerValueRef(h http.Header, name string) (string, bool, error) {
	vs := h[name]
	if len(vs) == 0 {
		return "", false, nil
	}
	if len(vs) > 1 {
		return "", true, fmt.Errorf("header %s appears more than once", name)
	}
	v := strings.Trim(vs[0], " \t")
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < 0x20 && c != '\t' || c == 0x7f {
			return "", true, fmt.Errorf("header %s contains a control character", name)
		}
	}
	if strings.HasPrefix(v, "=?base64?") && strings.HasSuffix(v, "?=") && len(v) >= len("=?base64??=") {
		enc := v[len("=?base64?") : len(v)-len("?=")]
		dec, err := base64.StdEncoding.Strict().DecodeString(enc)
		if err != nil {
			return "", true, fmt.Errorf("header %s: invalid base64 value: %v", name, err)
		}
		return string(dec), true, nil
	}
	return v, true, nil
}

// FuzzHeaderValue holds headerValue, which trims by hand, to its earlier
// form with strings.Trim: the value, presence and error agree.
func FuzzHeaderValue(f *testing.F) {
	f.Fuzz(func(t *testing.T, raw string) {
		h := http.Header{headerMethod: {raw}}
		got, ok, err := headerValue(h, headerMethod)
		want, wantOK, wantErr := headerValueRef(h, headerMethod)
		if got != want || ok != wantOK || (err == nil) != (wantErr == nil) || err != nil && err.Error() != wantErr.Error() {
			t.Fatalf("headerValue(%q) = %q %v %v, want %q %v %v", raw, got, ok, err, want, wantOK, wantErr)
		}
	})
}

// controlFreeRef is controlFree byte by byte, as headerValue checked it.
func controlFreeRef(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 && c != '\t' || c == 0x7f {
			return false
		}
	}
	return true
}

// TestControlFree puts every byte at every position of values of 1 to 24
// bytes (the short loop, whole words, and the overlapping last word).
func TestControlFree(t *testing.T) {
	for n := 1; n <= 24; n++ {
		for pos := 0; pos < n; pos++ {
			b := []byte(strings.Repeat("a", n))
			for c := 0; c < 256; c++ {
				b[pos] = byte(c)
				if got, want := controlFree(string(b)), controlFreeRef(string(b)); got != want {
					t.Fatalf("controlFree(%q) = %v, want %v", b, got, want)
				}
			}
		}
	}
	if !controlFree("") {
		t.Error("empty value refused")
	}
}

// FuzzControlFree holds controlFree, eight bytes at a time, to the byte
// loop.
func FuzzControlFree(f *testing.F) {
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := controlFree(s), controlFreeRef(s); got != want {
			t.Fatalf("controlFree(%q) = %v, want %v", s, got, want)
		}
	})
}
