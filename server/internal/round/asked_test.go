package round

import (
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/baton-mcp/baton/server/internal/seal"
)

// TestAskedTableMatchesMap holds askedTable, in its scanned and its
// indexed forms, to a map fed the same sets.
func TestAskedTableMatchesMap(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, keys := range []int{1, 3, askedScanMax, askedScanMax + 1, 40} {
		var tab askedTable
		tab.start(1)
		want := map[string]asked{}
		for op := range 400 {
			key := "k" + strconv.Itoa(rng.IntN(keys))
			if rng.IntN(2) == 0 {
				a := asked{digest: seal.Digest{byte(op)}}
				if rng.IntN(2) == 0 {
					a.answer = []byte(strconv.Itoa(op))
				}
				tab.set(key, a)
				want[key] = a
			}
			got, ok := tab.get(key)
			w, wok := want[key]
			if ok != wok || got.digest != w.digest || string(got.answer) != string(w.answer) {
				t.Fatalf("keys=%d op %d: get(%s) = %v, %v; want %v, %v", keys, op, key, got, ok, w, wok)
			}
		}
		if len(tab.list) != len(want) {
			t.Fatalf("keys=%d: %d entries, want %d", keys, len(tab.list), len(want))
		}
	}
}
