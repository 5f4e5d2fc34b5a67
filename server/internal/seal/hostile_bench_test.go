package seal

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// objectOfKeys returns a JSON object of n members "k0".."kn-1", each val.
func objectOfKeys(n int, val string) string {
	var b strings.Builder
	b.WriteByte('{')
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"k%d":%s`, i, val)
	}
	b.WriteByte('}')
	return b.String()
}

// BenchmarkArgumentsDigest digests the usual small arguments, and hostile
// arguments beside benign ones of about their size (compare MB/s).
func BenchmarkArgumentsDigest(b *testing.B) {
	for _, c := range []struct{ name, args string }{
		{"usual", `{"to":"bob","amount":25,"memo":"rent","tags":["a","b"]}`},
		{"benign-500B", objectOfKeys(20, "12345678")},
		{"exp-big-20", objectOfKeys(20, "1e999999")},
		{"exp-small-20", objectOfKeys(20, "1e-999999")},
		{"benign-430KB", `{"text":"` + strings.Repeat("a", 430<<10) + `"}`},
		{"benign-430KB-ints", `{"list":[` + strings.Repeat("1234567,", 430<<10/8) + `0]}`},
		{"keys-40000", objectOfKeys(40000, "1")},
		{"floats-430KB", `{"list":[` + strings.Repeat("0.1234567,", 430<<10/10) + `0]}`},
		{"deep-55x4000", `{"deep":[` + strings.Repeat(strings.Repeat("[", 55)+strings.Repeat("]", 55)+",", 3999) + "[]]}"},
		{"keys-200x200", objectOfKeys(200, objectOfKeys(200, "1"))},
	} {
		b.Run(c.name, func(b *testing.B) {
			args := json.RawMessage(c.args)
			b.SetBytes(int64(len(args)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := ArgumentsDigest(args); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkParseResponses reads inputResponses: the usual one answer, and
// 40,000 keys beside one answer of about their size (compare MB/s).
