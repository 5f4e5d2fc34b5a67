package sse

import "testing"

// AcceptsSSE takes the usual header and the others as the media types
// they name say.
func TestAcceptsSSE(t *testing.T) {
	for accept, want := range map[string]bool{
		"application/json, text/event-stream":  true,
		"text/event-stream, application/json":  true,
		"application/json,text/event-stream":   true,
		"application/json":                     false,
		"*/*":                                  true,
		"text/*;q=0.5":                         true,
		"":                                     false,
		"application/json, text/event-streams": true, // contains the name, as before
		"text/html, image/*":                   false,
	} {
		if got := AcceptsSSE(accept); got != want {
			t.Errorf("AcceptsSSE(%q) = %v, want %v", accept, got, want)
		}
	}
}
