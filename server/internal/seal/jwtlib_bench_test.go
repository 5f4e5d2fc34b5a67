package seal

import (
	"errors"
	"strings"
	"testing"

	"github.com/golang-jwt/jwt/v5"
)

// libClaims are the same claims decoded by golang-jwt's own machinery
// (encoding/json through reflection, its NumericDate), for comparison.
type libClaims struct {
	jwt.RegisteredClaims
	Enc string `json:"enc,omitempty"`
}

// BenchmarkVerifyPath compares the token half of Open (form, header, key
// id, signature, claims, times) done as verify does it with the same work
// done by golang-jwt's Parser and Token.SignedString, on one token and key.
// The decryption, the same either way, is left out. The figures are in
// the comment on verify.
func BenchmarkVerifyPath(b *testing.B) {
	s := testSealer(b, SealerOptions{})
	bind := testBinding(b)
	tok := seal(b, s, bind)
	key := s.ring.Load().signing()
	keyfunc := func(t *jwt.Token) (any, error) {
		kid, _ := t.Header["kid"].(string)
		k, ok := s.ring.Load().lookup(kid)
		if !ok {
			return nil, errors.New("unknown key id")
		}
		return k.mac, nil
	}
	parser := jwt.NewParser(jwt.WithValidMethods([]string{"HS256"}), jwt.WithExpirationRequired(),
		jwt.WithIssuedAt(), jwt.WithLeeway(s.leeway), jwt.WithTimeFunc(s.now))

	b.Run("verify", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, _, _, err := s.verify(tok); err != nil {
				b.Fatal(err)
			}
		}
	})
	// The JWS the library can parse: the token without its fourth
	// segment, the ciphertext, which verify returns undecoded.
	jws := tok
	if strings.Count(tok, ".") == 3 {
		jws = tok[:strings.LastIndexByte(tok, '.')]
	}
	b.Run("jwt.Parser", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var c libClaims
			if _, err := parser.ParseWithClaims(jws, &c, keyfunc); err != nil {
				b.Fatal(err)
			}
		}
	})

	c, _, _, err := s.verify(tok)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("sign", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			claims, err := c.MarshalJSON()
			if err != nil {
				b.Fatal(err)
			}
			signing := append([]byte(key.header+"."), b64.AppendEncode(nil, claims)...)
			if _, err := jwt.SigningMethodHS256.Sign(string(signing), key.mac); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("jwt.SignedString", func(b *testing.B) {
		lc := libClaims{RegisteredClaims: jwt.RegisteredClaims{ID: c.ID,
			IssuedAt: jwt.NewNumericDate(s.now()), ExpiresAt: jwt.NewNumericDate(s.now().Add(s.ttl))}, Enc: c.Enc}
		b.ReportAllocs()
		for b.Loop() {
			t := jwt.NewWithClaims(jwt.SigningMethodHS256, lc)
			t.Header["kid"] = key.id
			if _, err := t.SignedString(key.mac); err != nil {
				b.Fatal(err)
			}
		}
	})
}
