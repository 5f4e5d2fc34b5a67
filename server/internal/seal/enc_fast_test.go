package seal

import (
	"bytes"
	"encoding/base64"
	"testing"
)

// TestOpenEncWithoutString holds Open's reading of enc from claims in
// Seal's form (decoded without a string, verifyInto) to its reading of
// the same enc through the library: the same state, or the same refusal.
func TestOpenEncWithoutString(t *testing.T) {
	s := testSealer(t, SealerOptions{})
	b := testBinding(t)
	tok := seal(t, s, b)
	raw := mustClaims(t, tok)
	enc := claimsMap(t, raw)["enc"].(string)
	if !bytes.Contains(raw, []byte(`"enc":"`+enc+`"`)) {
		t.Fatalf("claims %s: no enc", raw)
	}
	nt, _ := base64.RawURLEncoding.DecodeString(enc)
	b64s := base64.RawURLEncoding.EncodeToString
	for name, e := range map[string]string{
		"as sealed":        enc,
		"not base64url":    "*" + enc[1:],
		"one character":    "A",
		"short":            b64s(nt[:20]),
		"one byte long":    b64s(append(append([]byte{}, nt...), 0)),
		"48 bytes":         b64s(bytes.Repeat([]byte{7}, 48)),
		"49 bytes":         b64s(bytes.Repeat([]byte{7}, 49)),
		"another tag":      b64s(append(append([]byte{}, nt[:12]...), bytes.Repeat([]byte{1}, 16)...)),
		"padded":           b64s(nt) + "=",
		"standard base64":  base64.StdEncoding.EncodeToString(nt),
		"whole content":    b64s(bytes.Repeat([]byte{9}, 200)),
		"trailing garbage": enc + "AB",
	} {
		t.Run(name, func(t *testing.T) {
			fast := resignRaw(t, s, tok, func(c []byte) []byte {
				return bytes.Replace(c, []byte(`"enc":"`+enc+`"`), []byte(`"enc":"`+e+`"`), 1)
			})
			lib := resign(t, s, tok, func(m map[string]any) { m["enc"] = e })
			if _, ok := canonicalClaims(mustClaims(t, fast)); !ok {
				t.Fatalf("the edited claims are not in Seal's form")
			}
			if _, ok := canonicalClaims(mustClaims(t, lib)); ok {
				t.Fatalf("the library's claims are in Seal's form")
			}
			st1, err1 := openBound(s, fast, b)
			st2, err2 := openBound(s, lib, b)
			if (err1 == nil) != (err2 == nil) || err1 != nil && err1.Error() != err2.Error() {
				t.Fatalf("Seal's form: %v; the library's: %v", err1, err2)
			}
			if err1 == nil && (st1.ID != st2.ID || !bytes.Equal(st1.Payload, st2.Payload)) {
				t.Fatalf("states differ: %+v, %+v", st1, st2)
			}
			if name == "as sealed" && err1 != nil {
				t.Fatal(err1)
			}
		})
	}
}
