package main

import (
	"bytes"
	"strconv"
	"testing"
)

// BenchmarkRounds runs the rounds scenario's flow in-process (see
// BenchmarkServers): Baton's ask tool asking n questions in sequence, one
// whole flow (n input_required rounds and the final one) per iteration.
// It reports the state's size at the last round and allocations per flow.
func BenchmarkRounds(b *testing.B) {
	handlers, _, err := newHandlers()
	if err != nil {
		b.Fatal(err)
	}
	h := handlers["baton"]
	for _, n := range []int{1, 2, 4, 8, 16} {
		b.Run("n="+strconv.Itoa(n), func(b *testing.B) {
			b.ReportAllocs()
			args := `"arguments":{"n":` + strconv.Itoa(n) + `},`
			var body []byte
			stateLen := 0
			for b.Loop() {
				params := args
				for k := 1; k <= n+1; k++ {
					body = append(append(append(body[:0], `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ask",`...), params...), metaJSON+`}}`...)
					out := serveOnce(h, askTool, body)
					if k == n+1 {
						if !bytes.Contains(out, []byte(`"text":"done `+strconv.Itoa(n)+`"`)) {
							b.Fatalf("round %d: %.300s", k, out)
						}
						break
					}
					state := stateIn(out)
					if state == nil {
						b.Fatalf("round %d: %.300s", k, out)
					}
					stateLen = len(state)
					key := "q" + strconv.Itoa(k)
					params = args + `"inputResponses":{"` + key + `":{"action":"accept","content":{"ok":true}}},"requestState":"` + string(state) + `",`
				}
			}
			b.ReportMetric(float64(stateLen), "state-bytes")
		})
	}
}
