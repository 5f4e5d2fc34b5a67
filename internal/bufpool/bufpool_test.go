package bufpool

import "testing"

// TestPool checks what Get and Put promise: a new buffer has length 0 and
// the capacity asked; Put keeps a grown buffer emptied (bp then points at
// it) and leaves one past max as it was.
func TestPool(t *testing.T) {
	var p Pool
	bp := p.Get(64)
	if len(*bp) != 0 || cap(*bp) < 64 {
		t.Fatalf("Get(64) = len %d cap %d", len(*bp), cap(*bp))
	}
	buf := append(*bp, make([]byte, 100)...) // grown past its first capacity
	p.Put(bp, buf, 1024)
	if len(*bp) != 0 || cap(*bp) != cap(buf) || &(*bp)[:1][0] != &buf[0] {
		t.Fatalf("after Put: len %d cap %d; want the grown buffer emptied (cap %d)", len(*bp), cap(*bp), cap(buf))
	}

	big := p.Get(8)
	before := *big
	huge := make([]byte, 0, 4096)
	p.Put(big, huge, 1024)
	if cap(*big) != cap(before) {
		t.Fatalf("Put kept a buffer of %d bytes past its max of 1024", cap(huge))
	}

	got := p.Get(16)
	if len(*got) != 0 {
		t.Fatalf("Get after Put: len %d, want 0", len(*got))
	}
}
