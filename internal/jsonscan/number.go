package jsonscan

import (
	"errors"
	"strconv"
)

// maxExponentDigits bounds the significant digits of a number's exponent,
// written and normalised, so that exponent arithmetic fits an int64 and a
// canonical form is accepted again.
const maxExponentDigits = 18

var errExponentRange = errors.New("number exponent out of range")

// AppendNumber appends the canonical form of the JSON number literal lit
// to dst, or reports an error if lit is not a JSON number (RFC 8259: no
// leading '+', no leading zeros, no bare '.', no hex) or its exponent,
// written or normalised, has more than 18 digits.
//
// The canonical form is exact: mathematically equal literals (1, 1.0,
// 1e0, 10e-1, -0 and 0) have one form, and different values always have
// different forms, however many digits they carry (no float rounding). It
// is the text ECMAScript's Number.prototype.toString writes (the RFC 8785
// form of numbers) with the literal's significant digits instead of the
// shortest digits of a float64: with D the digits without leading or
// trailing zeros, k their count, and the value D×10^(n-k),
//
//	k ≤ n ≤ 21     D and n-k zeros          1000, 123
//	0 < n ≤ 21     D with a point after n   1.5, 12345.678
//	-6 < n ≤ 0     "0.", -n zeros, D        0.001
//	otherwise      d[.ddd]e±(n-1)           1e+21, 1.5e-7, 1.2345678901234567890123e+22
//
// and 0 for zero. So a literal that is already the shortest form of a
// float64 keeps its RFC 8785 spelling. The work is linear in len(lit): no
// big-number arithmetic, however large the exponent.
//
// It is one function (over 100 lines) because it is the table above,
// read off the literal in one pass: the digits' positions it finds are
// what every row writes from, and pieces would pass them all around.
func AppendNumber[T string | []byte](dst []byte, lit T) ([]byte, error) {
	s := lit
	i := 0
	neg := i < len(s) && s[i] == '-'
	if neg {
		i++
	}
	intStart := i
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	intLen := i - intStart
	if intLen == 0 || (s[intStart] == '0' && intLen > 1) {
		return nil, errNotNumber
	}
	fracStart, fracLen := i, 0
	if i < len(s) && s[i] == '.' {
		i++
		fracStart = i
		for i < len(s) && isDigit(s[i]) {
			i++
		}
		if fracLen = i - fracStart; fracLen == 0 {
			return nil, errNotNumber
		}
	}
	var exp int64
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		expNeg := i < len(s) && s[i] == '-'
		if i < len(s) && (s[i] == '-' || s[i] == '+') {
			i++
		}
		start := i
		for i < len(s) && isDigit(s[i]) {
			i++
		}
		if i == start {
			return nil, errNotNumber
		}
		for start < i-1 && s[start] == '0' {
			start++
		}
		if i-start > maxExponentDigits {
			return nil, errExponentRange
		}
		for j := start; j < i; j++ {
			exp = exp*10 + int64(s[j]-'0')
		}
		if expNeg {
			exp = -exp
		}
	}
	if i != len(s) {
		return nil, errNotNumber
	}

	// The digits are the integer part then the fraction; digit(j) reads
	// position j of that sequence.
	total := intLen + fracLen
	digit := func(j int) byte {
		if j < intLen {
			return s[intStart+j]
		}
		return s[fracStart+j-intLen]
	}
	lo, hi := 0, total
	for lo < total && digit(lo) == '0' {
		lo++
	}
	if lo == total {
		return append(dst, '0'), nil
	}
	for digit(hi-1) == '0' {
		hi--
	}
	k := int64(hi - lo)
	n := k + exp - int64(fracLen) + int64(total-hi)
	if n-1 <= -1e18 || n-1 >= 1e18 {
		return nil, errExponentRange
	}
	appendDigits := func(dst []byte, from, to int) []byte {
		if from < intLen {
			end := min(to, intLen)
			dst = append(dst, s[intStart+from:intStart+end]...)
			from = end
		}
		if from < to {
			dst = append(dst, s[fracStart+from-intLen:fracStart+to-intLen]...)
		}
		return dst
	}
	if neg {
		dst = append(dst, '-')
	}
	switch {
	case k <= n && n <= 21:
		dst = appendDigits(dst, lo, hi)
		for range n - k {
			dst = append(dst, '0')
		}
	case 0 < n && n <= 21:
		dst = appendDigits(dst, lo, lo+int(n))
		dst = append(dst, '.')
		dst = appendDigits(dst, lo+int(n), hi)
	case -6 < n && n <= 0:
		dst = append(dst, '0', '.')
		for range -n {
			dst = append(dst, '0')
		}
		dst = appendDigits(dst, lo, hi)
	default:
		dst = appendDigits(dst, lo, lo+1)
		if k > 1 {
			dst = append(dst, '.')
			dst = appendDigits(dst, lo+1, hi)
		}
		dst = append(dst, 'e')
		if n-1 >= 0 {
			dst = append(dst, '+')
		}
		dst = strconv.AppendInt(dst, n-1, 10)
	}
	return dst, nil
}

var errNotNumber = errors.New("not a JSON number")

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
