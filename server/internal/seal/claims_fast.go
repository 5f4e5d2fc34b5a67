package seal

import "bytes"

// canonicalClaims reads claims in exactly the form Seal writes them
// (stateClaims.appendJSON: exp, iat, jti, an optional one-element aud and
// enc, strings without escapes) without encoding/json's machinery, and
// reports false for anything else, which the caller decodes with
// stateClaims.UnmarshalJSON. It runs after the signature verified, so
// only a key holder's claims reach it. Why: decoding the claims through
// strictjson was 6 of the 16 allocations of opening a state
// (BenchmarkOpen, 2026-12-04) and the largest part of its reflection.
// It reads only what the library path reads the same way: members in
// that order without whitespace, numbers of JSON's grammar (digits
// without a leading zero, then exactly three decimals or none) and
// strings of printable ASCII without an escape; anything else goes to
// the library. FuzzCanonicalClaims holds the two equal on any input. (It
// used to check that by writing the claims again and comparing, about
// 2,000 instructions per state opened under valgrind, most of what it
// cost; BenchmarkMRTRTwoRounds, 2026-12-04.)
func canonicalClaims(b []byte) (*stateClaims, bool) {
	c := new(stateClaims)
	if !readCanonicalClaims(b, c) {
		return nil, false
	}
	return c, true
}

// readCanonicalClaims is canonicalClaims into c, which the caller
// provides (Open's, on its stack). c is left changed when it reports
// false.
func readCanonicalClaims(b []byte, c *stateClaims) bool {
	enc, ok := readCanonicalClaimsRaw(b, c)
	c.Enc = string(enc)
	return ok
}

// readCanonicalClaimsRaw is readCanonicalClaims that returns enc's text,
// a part of b, instead of setting c.Enc (Open decodes it without a
// string; see verifyInto).
func readCanonicalClaimsRaw(b []byte, c *stateClaims) ([]byte, bool) {
	p := claimsParser{b: b}
	if !p.lit(`{"exp":`) {
		return nil, false
	}
	c.ExpiresAtMs = p.date()
	if !p.lit(`,"iat":`) {
		return nil, false
	}
	c.IssuedAtMs = p.date()
	if !p.lit(`,"jti":`) {
		return nil, false
	}
	c.ID = p.str()
	if p.lit(`,"aud":[`) {
		c.Audience = []string{p.str()}
		if !p.lit(`]`) {
			return nil, false
		}
	}
	if !p.lit(`,"enc":`) {
		return nil, false
	}
	enc := p.bytes()
	return enc, p.lit(`}`) && !p.bad && len(p.b) == 0 && c.ExpiresAtMs != 0 && c.IssuedAtMs != 0 && len(enc) != 0
}

// claimsParser reads canonicalClaims' form; bad sticks once set.
type claimsParser struct {
	b   []byte
	bad bool
}

// lit consumes s if b begins with it.
func (p *claimsParser) lit(s string) bool {
	if p.bad || !bytes.HasPrefix(p.b, []byte(s)) {
		return false
	}
	p.b = p.b[len(s):]
	return true
}

// date reads a NumericDate as appendNumericDate writes it (whole seconds,
// then three decimals when the milliseconds are not zero) and returns it
// in milliseconds; out of range or another form sets bad.
func (p *claimsParser) date() int64 {
	var sec int64
	i := 0
	for ; i < len(p.b) && p.b[i] >= '0' && p.b[i] <= '9'; i++ {
		if i >= 12 {
			p.bad = true
			return 0
		}
		sec = sec*10 + int64(p.b[i]-'0')
	}
	if i == 0 || i > 1 && p.b[0] == '0' || sec > maxNumericDate { // JSON has no leading zeros
		p.bad = true
		return 0
	}
	ms := sec * 1000
	if i+4 <= len(p.b) && p.b[i] == '.' {
		for _, d := range p.b[i+1 : i+4] {
			if d < '0' || d > '9' {
				p.bad = true
				return 0
			}
		}
		ms += int64(p.b[i+1]-'0')*100 + int64(p.b[i+2]-'0')*10 + int64(p.b[i+3]-'0')
		i += 4
	}
	if ms > maxNumericDate*1000 { // the library path's range is in whole seconds
		p.bad = true
		return 0
	}
	p.b = p.b[i:]
	return ms
}

// str reads a JSON string of printable ASCII without escapes.
func (p *claimsParser) str() string {
	if b := p.bytes(); len(b) > 0 {
		return string(b)
	}
	return ""
}

// bytes is str without the copy: the string's text, a part of p.b.
func (p *claimsParser) bytes() []byte {
	if p.bad || len(p.b) == 0 || p.b[0] != '"' {
		p.bad = true
		return nil
	}
	for i := 1; i < len(p.b); i++ {
		switch c := p.b[i]; {
		case c == '"':
			s := p.b[1:i]
			p.b = p.b[i+1:]
			return s
		case c < 0x20 || c >= 0x7f || c == '\\':
			p.bad = true
			return nil
		}
	}
	p.bad = true
	return nil
}
