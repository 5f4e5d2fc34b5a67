package elicit

import (
	"sync"
	"testing"
)

// TestDigestMemo checks that the digest remembered by a schema is handed
// back only for a request with the same fields: a request that differs in
// any field the digest covers gets its own, as if computed afresh.
func TestDigestMemo(t *testing.T) {
	form, err := NewForm("Proceed?", Boolean("ok").Required())
	if err != nil {
		t.Fatal(err)
	}
	fresh := func(r *Request) [32]byte { return r.digest() }
	first := form.Digest()
	if first != fresh(form) || form.Digest() != first {
		t.Fatal("memoised digest differs from the computed one")
	}
	variants := []func(r *Request){
		func(r *Request) { r.Message = "Proceed now?" },
		func(r *Request) { r.Mode = "" }, // normalised to form: the same digest
		func(r *Request) { r.URL = "https://example.com/x" },
		func(r *Request) { r.ElicitationID = "e1" },
	}
	for i, change := range variants {
		r := *form
		change(&r)
		got := r.Digest()
		if got != fresh(&r) {
			t.Fatalf("variant %d: digest %x, computed %x", i, got, fresh(&r))
		}
		if i != 1 && got == first {
			t.Fatalf("variant %d: a changed request kept the first digest", i)
		}
		if form.Digest() != first { // and back: the first request's own
			t.Fatalf("variant %d: the first request's digest changed", i)
		}
	}
	// Concurrent askers of different questions over one schema.
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := *form
			if i%2 == 1 {
				r.Message = "other"
			}
			want := fresh(&r)
			for range 200 {
				if r.Digest() != want {
					t.Error("wrong digest under concurrency")
					return
				}
			}
		}()
	}
	wg.Wait()
}
