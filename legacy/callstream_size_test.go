package legacy

import (
	"testing"
	"unsafe"

	"github.com/baton-mcp/baton/internal/sse"
)

// A call's kept stream, its SSE stream and its peer are one allocation
// (newCallStream) of the 320-byte size class: more would be a larger
// class for every call in a session, and for each parked call.
func TestCallStreamSize(t *testing.T) {
	size := unsafe.Sizeof(struct {
		k  keptStream
		st sse.Stream
		p  peer
	}{})
	if size > 320 {
		t.Errorf("newCallStream allocates %d bytes, over the 320-byte size class", size)
	}
}
