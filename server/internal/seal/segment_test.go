package seal

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	"github.com/golang-jwt/jwt/v5"
)

// resign replaces the claims of tok (a token of s) with claims and signs
// them with s's key, keeping the other segments: what only a holder of
// the key can do.
func resign(t *testing.T, s *Sealer, tok string, edit func(m map[string]any)) string {
	t.Helper()
	return resignRaw(t, s, tok, func(raw []byte) []byte {
		m := claimsMap(t, raw)
		edit(m)
		out, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		return out
	})
}

// resignRaw is resign with the claims edited as bytes, so that an edit
// can keep the form Seal writes (which Open reads without the library).
func resignRaw(t *testing.T, s *Sealer, tok string, edit func([]byte) []byte) string {
	t.Helper()
	parts := strings.Split(tok, ".")
	raw := edit(mustClaims(t, tok))
	key := s.ring.Load().signing()
	signing := parts[0] + "." + base64.RawURLEncoding.EncodeToString(raw)
	sig, err := jwt.SigningMethodHS256.Sign(signing, key.mac)
	if err != nil {
		t.Fatal(err)
	}
	out := signing + "." + base64.RawURLEncoding.EncodeToString(sig)
	if len(parts) == 4 {
		out += "." + parts[3]
	}
	return out
}

// mustClaims returns the claims segment of tok, decoded.
func mustClaims(t *testing.T, tok string) []byte {
	t.Helper()
	raw, err := base64.RawURLEncoding.DecodeString(strings.Split(tok, ".")[1])
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// claimsMap decodes claims (mustClaims) into a map.
func claimsMap(t *testing.T, claims []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(claims, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestCiphertextSegment checks the encrypted state's fourth segment: the
// ciphertext, bound to the signed claims by the AES-GCM tag they carry. A
// changed, swapped, missing or extra segment is refused; a state in the
// form of earlier releases (the whole sealed content in the enc claim,
// three segments) still opens.
func TestCiphertextSegment(t *testing.T) {
	s := testSealer(t, SealerOptions{})
	b := testBinding(t)
	tok := seal(t, s, b)
	other := seal(t, s, b)
	parts := strings.Split(tok, ".")
	if len(parts) != 4 {
		t.Fatalf("token has %d segments, want 4", len(parts))
	}
	if _, err := openBound(s, tok, b); err != nil {
		t.Fatal(err)
	}
	head := strings.Join(parts[:3], ".")
	t.Run("flipped ciphertext byte", func(t *testing.T) {
		ct := []byte(parts[3])
		ct[len(ct)/2] ^= 1
		if ct[len(ct)/2] == '.' || ct[len(ct)/2] > 'z' {
			ct[len(ct)/2] = 'A'
		}
		_, err := openBound(s, head+"."+string(ct), b)
		wantRefused(t, err, "")
	})
	t.Run("ciphertext of another state", func(t *testing.T) {
		_, err := openBound(s, head+"."+strings.Split(other, ".")[3], b)
		wantRefused(t, err, "does not decrypt")
	})
	t.Run("ciphertext cut short", func(t *testing.T) {
		_, err := openBound(s, head+"."+parts[3][:len(parts[3])-4], b)
		wantRefused(t, err, "encrypted content")
	})
	t.Run("no ciphertext", func(t *testing.T) {
		_, err := openBound(s, head, b)
		wantRefused(t, err, "does not decrypt")
	})
	t.Run("empty ciphertext", func(t *testing.T) {
		_, err := openBound(s, head+".", b)
		wantRefused(t, err, "malformed")
	})
	t.Run("five segments", func(t *testing.T) {
		_, err := openBound(s, tok+".AAAA", b)
		wantRefused(t, err, "malformed")
	})
	t.Run("not base64url", func(t *testing.T) {
		_, err := openBound(s, head+".*"+parts[3][1:], b)
		wantRefused(t, err, "malformed encrypted content")
	})
	t.Run("a segment after plaintext content", func(t *testing.T) {
		p := testSealer(t, SealerOptions{Plaintext: true})
		_, err := openBound(p, seal(t, p, b)+"."+parts[3], b)
		wantRefused(t, err, "fourth segment")
	})
	t.Run("enc holding the whole content beside a segment", func(t *testing.T) {
		ct, err := base64.RawURLEncoding.DecodeString(parts[3])
		if err != nil {
			t.Fatal(err)
		}
		forged := resign(t, s, tok, func(m map[string]any) {
			nt, _ := base64.RawURLEncoding.DecodeString(m["enc"].(string))
			m["enc"] = base64.RawURLEncoding.EncodeToString(append(append(nt[:12:12], ct...), nt[12:]...))
		})
		_, err = openBound(s, forged, b)
		wantRefused(t, err, "malformed encrypted content")
	})
	t.Run("earlier releases' form", func(t *testing.T) {
		// The same sealed content, all of it in enc: nonce, ciphertext, tag.
		ct, err := base64.RawURLEncoding.DecodeString(parts[3])
		if err != nil {
			t.Fatal(err)
		}
		old := resign(t, s, tok, func(m map[string]any) {
			nt, _ := base64.RawURLEncoding.DecodeString(m["enc"].(string))
			m["enc"] = base64.RawURLEncoding.EncodeToString(append(append(nt[:12:12], ct...), nt[12:]...))
		})
		old = strings.Join(strings.Split(old, ".")[:3], ".")
		st, err := openBound(s, old, b)
		if err != nil {
			t.Fatalf("a state in the earlier form was refused: %v", err)
		}
		if string(st.Payload) != `{"round":1}` || !issuedIs(st.Issued, "confirm", Digest{1, 2, 3}) {
			t.Fatalf("opened %+v", st)
		}
	})
}

// TestTokenAlphabet checks that a token holds only base64url characters
// and dots, which the server writes into its JSON result unescaped.
func TestTokenAlphabet(t *testing.T) {
	b := testBinding(t)
	for _, plain := range []bool{false, true} {
		s := testSealer(t, SealerOptions{Plaintext: plain, Audience: `aud "quoted" \ é`})
		st := &State{Binding: b, Payload: json.RawMessage(`{"q":"\"\\\u2028é"}`), Answers: []Recorded{{Key: "k\"é", Answer: json.RawMessage(`{"a":"\n"}`)}}}
		tok, err := s.Seal(st)
		if err != nil {
			t.Fatal(err)
		}
		if i := strings.IndexFunc(tok, func(r rune) bool {
			return !(r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.')
		}); i >= 0 {
			t.Fatalf("plaintext=%v: token has %q at %d", plain, tok[i], i)
		}
	}
}
