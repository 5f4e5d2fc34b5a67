package jsonscan

import (
	"encoding/json"
	"strings"
	"testing"
)

// skipValid reports whether data is one JSON value and whitespace, by
// SkipValue.
func skipValid(data []byte) bool {
	end, ok := SkipValue(data, 0)
	return ok && SkipSpace(data, end) == len(data)
}

func TestSkipValue(t *testing.T) {
	valid := []string{
		`0`, `-0`, `1.5e+3`, `-12.0E-07`, `"a"`, `"\"\\\/\b\f\n\r\t\u00e9\uD800"`, "\"\xff\x7f\"", `true`, `false`, `null`,
		`{}`, `[]`, ` { } `, `[ ]`, `{"a":1}`, `{ "a" : [ 1 , { "b" : null } ] , "c" : "d" }`, `[[[[]]],{}]`,
		strings.Repeat("[", 100) + strings.Repeat("]", 100),
	}
	invalid := []string{
		``, ` `, `01`, `-`, `1.`, `.5`, `1e`, `1e+`, `+1`, `0x1`, `tru`, `nul`, `"a`, `"\x"`, `"\u12"`, `"\u12g4"`, "\"\x01\"",
		`{`, `[`, `{"a"}`, `{"a":}`, `{"a":1,}`, `[1,]`, `[,1]`, `{,}`, `{1:2}`, `{"a" 1}`, `[1 2]`, `{"a":1]`, `[1}`, `}`, `]`,
		`1 2`, `{} {}`, `"a" "b"`, `[1]]`,
	}
	for _, s := range valid {
		if !skipValid([]byte(s)) || !json.Valid([]byte(s)) {
			t.Errorf("%q: SkipValue %v, json.Valid %v; want both true", s, skipValid([]byte(s)), json.Valid([]byte(s)))
		}
	}
	for _, s := range invalid {
		if skipValid([]byte(s)) || json.Valid([]byte(s)) {
			t.Errorf("%q: SkipValue %v, json.Valid %v; want both false", s, skipValid([]byte(s)), json.Valid([]byte(s)))
		}
	}
	// The end is just past the value, whatever follows.
	for _, tc := range []struct {
		in  string
		end int
	}{{`1,`, 1}, {`"a"}`, 3}, {` {"a":[1]} x`, 10}, {`true]`, 4}, {`-1.5e3 `, 6}} {
		if end, ok := SkipValue([]byte(tc.in), 0); !ok || end != tc.end {
			t.Errorf("SkipValue(%q) = %d, %v; want %d, true", tc.in, end, ok, tc.end)
		}
	}
}

func TestSkipValueAllocs(t *testing.T) {
	data := []byte(`{"a":[1,{"b":"c\n","d":[true,false,null]}],"e":-1.5e-3}`)
	if n := testing.AllocsPerRun(100, func() { SkipValue(data, 0) }); n != 0 {
		t.Errorf("SkipValue allocates %v times", n)
	}
}

// FuzzSkipValue compares SkipValue with json.Valid: they accept exactly
// the same documents.
func FuzzSkipValue(f *testing.F) {
	for _, s := range []string{`{"a":[1,{"b":null}],"c":"\u00e9"}`, `[1,2.5e3,-0]`, `"x"`, `{"a":1,}`, `01`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if got, want := skipValid(data), json.Valid(data); got != want {
			t.Fatalf("SkipValue says %v, json.Valid %v: %q", got, want, data)
		}
	})
}

// scanStringSlow is ScanString one byte at a time, as JSON's grammar says.
func scanStringSlow(b []byte, i int) (int, bool) {
	plain := true
	for j := i + 1; j < len(b); j++ {
		switch c := b[j]; {
		case c == '"':
			return j + 1, plain
		case c == '\\':
			plain = false
			j++
			if j >= len(b) {
				return -1, false
			}
			switch b[j] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if j+4 >= len(b) {
					return -1, false
				}
				for _, h := range b[j+1 : j+5] {
					if !strings.ContainsRune("0123456789abcdefABCDEF", rune(h)) {
						return -1, false
					}
				}
				j += 4
			default:
				return -1, false
			}
		case c < 0x20:
			return -1, false
		case c >= 0x80:
			plain = false
		}
	}
	return -1, false
}

func TestScanString(t *testing.T) {
	for _, tc := range []struct {
		in    string
		end   int
		plain bool
	}{
		{`""`, 2, true}, {`"abc"x`, 5, true}, {`"0123456789abcdefghij"`, 22, true}, {`"0123456\"89abcdefghij"`, 23, false},
		{"\"0123456789é\"", 14, false}, {`"0123456789\u00e9abcdefgh"`, 26, false}, {"\"01234567\x1f\"", -1, false},
		{`"0123456789abcdefghij`, -1, false}, {`"01234567\`, -1, false}, {`"\u12"`, -1, false}, {`"\q"`, -1, false},
		{"\"\x7f\x7f\x7f\x7f\x7f\x7f\x7f\x7f\x7f\"", 11, true},
	} {
		end, plain := ScanString([]byte(tc.in), 0)
		if end != tc.end || end > 0 && plain != tc.plain {
			t.Errorf("ScanString(%q) = %d, %v; want %d, %v", tc.in, end, plain, tc.end, tc.plain)
		}
	}
}

// TestScanStringEveryPlace puts each kind of byte that ends a plain run at
// every place of a long string, in and after the 8-byte and 32-byte loops.
func TestScanStringEveryPlace(t *testing.T) {
	for _, c := range []byte{'"', '\\', 0x00, 0x1f, 0x20, 0x21, 0x23, 0x5b, 0x5d, 0x7f, 0x80, 0xc3, 0xff} {
		for p := 1; p < 200; p++ {
			data := []byte("\"" + strings.Repeat("abcdefghijklmnopqrstuvwxyz0123456789-_", 6)[:205] + "\"")
			data[p] = c
			end, plain := ScanString(data, 0)
			wantEnd, wantPlain := scanStringSlow(data, 0)
			if end != wantEnd || end > 0 && plain != wantPlain {
				t.Fatalf("ScanString(%q) = %d, %v; want %d, %v", data, end, plain, wantEnd, wantPlain)
			}
		}
	}
}

// FuzzScanString compares ScanString (eight bytes at a time) with the
// grammar read one byte at a time.
func FuzzScanString(f *testing.F) {
	f.Add([]byte(`"0123456789\u00e9abc\"defgh"`))
	f.Add([]byte("\"abcdefgh\x80ijklmnop\x1f\""))
	f.Fuzz(func(t *testing.T, data []byte) {
		data = append([]byte{'"'}, data...)
		end, plain := ScanString(data, 0)
		wantEnd, wantPlain := scanStringSlow(data, 0)
		if end != wantEnd || end > 0 && plain != wantPlain {
			t.Fatalf("ScanString(%q) = %d, %v; want %d, %v", data, end, plain, wantEnd, wantPlain)
		}
	})
}

// BenchmarkScanString scans a string of 1,104 base64url characters, the
// shape of a requestState carrying about sixteen answers.
func BenchmarkScanString(b *testing.B) {
	const alpha = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	s := []byte{'"'}
	for i := range 1104 {
		s = append(s, alpha[i*7%64])
	}
	s = append(s, '"', ',')
	for b.Loop() {
		if end, plain := ScanString(s, 0); end != len(s)-1 || !plain {
			b.Fatal(end, plain)
		}
	}
}
