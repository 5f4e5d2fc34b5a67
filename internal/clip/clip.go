// Package clip shortens peer input before it is echoed in an error message
// or a log line. A peer chooses what it sends (a 40 KB key id, a tool name,
// a URI, an answer's key), and echoing it whole would let it make every
// error, and every log line about it, as large as a request.
package clip

import (
	"strconv"
	"unicode/utf8"
)

// Max is how many bytes of a peer's string are echoed.
const Max = 120

// String returns s when it is at most Max bytes long; otherwise its first
// Max bytes (cut at a rune boundary), "…" and the full length:
// "aaaa…(40960 bytes)".
func String(s string) string {
	if len(s) <= Max {
		return s
	}
	return cut(s) + "…(" + strconv.Itoa(len(s)) + " bytes)"
}

// Quote is strconv.Quote for an echoed string: a string over Max bytes is
// quoted cut, with its length outside the quotes: "aaaa"…(40960 bytes).
func Quote(s string) string {
	if len(s) <= Max {
		return strconv.Quote(s)
	}
	return strconv.Quote(cut(s)) + "…(" + strconv.Itoa(len(s)) + " bytes)"
}

// cut returns the first Max bytes of s, less a rune split by the cut.
func cut(s string) string {
	n := Max
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
