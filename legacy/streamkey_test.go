package legacy

import (
	"encoding/base64"
	"encoding/binary"
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
	// Every length and place: the 8-byte steps and the bytes after them.
	for n := 1; n <= 20; n++ {
		for pos := 0; pos < n; pos++ {
			b := []byte(alphabet[:n])
			if !base64URL(string(b)) {
				t.Fatalf("base64URL refuses %q", b)
			}
			b[pos] = '='
			if base64URL(string(b)) {
				t.Fatalf("base64URL takes %q", b)
			}
		}
	}
	if !base64URL("") || !base64URL(alphabet) {
		t.Error("base64URL refuses the empty string or the alphabet")
	}
}

// TestStreamKeysEncoding: next is base64url of the prefix and the count,
// as EncodeToString of the 12 bytes gives it, across the count's bytes.
func TestStreamKeysEncoding(t *testing.T) {
	k := newStreamKeys()
	for _, n := range []uint32{0, 1, 0xfe, 0xff, 0x100, 0xffff, 0x10000, 0xfffffe, 0xffffffff} {
		k.n.Store(n)
		var b [12]byte
		copy(b[:], k.prefix[:])
		binary.BigEndian.PutUint32(b[8:], n+1)
		if got, want := k.next(), base64.RawURLEncoding.EncodeToString(b[:]); got != want {
			t.Errorf("count %d: key %q, want %q", n+1, got, want)
		}
	}
}
