package legacy

import (
	"strings"
	"testing"
)

// Stream keys have the form parseEventID reads, and differ.
func TestStreamKeys(t *testing.T) {
	a, b := newStreamKeys(), newStreamKeys()
	seen := map[string]bool{}
	for _, k := range []*streamKeys{a, b} {
		for range 1000 {
			key := k.next()
			if _, _, ok := parseEventID(eventID(key, "1")); !ok {
				t.Fatalf("stream key %q does not make an event id", key)
			}
			if seen[key] {
				t.Fatalf("stream key %q twice", key)
			}
			seen[key] = true
		}
	}
}

// TestBase64URLTable: base64URL takes exactly the base64url alphabet, each
// byte in every place of a session id.
func TestBase64URLTable(t *testing.T) {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	for c := 0; c < 256; c++ {
		want := strings.IndexByte(alphabet, byte(c)) >= 0
		for _, pos := range []int{0, 15, 31} {
			b := []byte(strings.Repeat("A", 32))
			b[pos] = byte(c)
			if got := base64URL(string(b)); got != want {
				t.Errorf("base64URL with byte %#x at %d: %v, want %v", c, pos, got, want)
			}
		}
	}
	if !base64URL("") || !base64URL(alphabet) {
		t.Error("base64URL refuses the empty string or the alphabet")
	}
}
