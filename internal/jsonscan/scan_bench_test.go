package jsonscan

import "testing"

// BenchmarkScanStringShort scans the short strings of a request envelope
// (keys and small values) where they stand in a body of some length, one
// pass over all of them per iteration.
func BenchmarkScanStringShort(b *testing.B) {
	var body []byte
	var at []int
	for _, s := range []string{`"jsonrpc"`, `"2.0"`, `"id"`, `"method"`, `"tools/call"`, `"params"`, `"name"`, `"ask"`,
		`"arguments"`, `"question"`, `"What is the colour of the sky today?"`, `"inputResponses"`, `"requestState"`,
		`"action"`, `"accept"`, `"content"`, `"ok"`, `"a string of medium length, 40 chars...."`} {
		at = append(at, len(body))
		body = append(body, s+`,`...)
	}
	for range 20 {
		body = append(body, `"padding, as the rest of a body would be: 0123456789",`...)
	}
	for b.Loop() {
		for _, i := range at {
			if end, _ := ScanString(body, i); end < 0 || body[end] != ',' {
				b.Fatal(end)
			}
		}
	}
}
