package legacy

import "testing"

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
