package seal

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
	"unicode/utf8"

	"github.com/baton-mcp/baton/internal/jsonw"
)

// FuzzCanonicalClaims: whatever canonicalClaims accepts, the library path
// (stateClaims.UnmarshalJSON, through strictjson) decodes to the same
// claims.
func FuzzCanonicalClaims(f *testing.F) {
	for _, c := range []stateClaims{
		{ExpiresAtMs: 1767225900123, IssuedAtMs: 1767225600123, ID: "AAECAwQFBgcICQoL", Enc: "bm9uY2UtYW5kLXRhZw"},
		{ExpiresAtMs: 1767225900000, IssuedAtMs: 1767225600000, ID: "x", Audience: []string{"https://a.example/mcp"}, Enc: "e"},
		{ExpiresAtMs: 253402300799999, IssuedAtMs: 1, ID: "", Enc: "e"},
	} {
		b, err := c.MarshalJSON()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"exp":1767225900.1,"iat":1767225600,"jti":"a","enc":"b"}`))
	f.Add([]byte(`{"exp":1e12,"iat":1767225600,"jti":"a","enc":"b"}`))
	f.Add([]byte(`{"exp":1767225900,"iat":1767225600,"jti":"a\u0041","enc":"b"}`))
	f.Add([]byte(`{"exp":01767225900,"iat":1767225600,"jti":"a","enc":"b"}`)) // a leading zero: not JSON
	f.Add([]byte(`{"exp":1767225900.000,"iat":0.001,"jti":"a","enc":"b"}`))   // not as Seal writes them, read alike
	f.Add([]byte(`{"exp":1767225900,"iat":1767225600,"jti":"a","enc":"b"} `)) // trailing space
	f.Add([]byte(`{"exp":1767225900,"iat":1767225600,"jti":"<&>","aud":[""],"enc":"~"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		fast, ok := canonicalClaims(b)
		if !ok {
			return
		}
		var slow stateClaims
		if err := slow.UnmarshalJSON(b); err != nil {
			t.Fatalf("canonicalClaims read %q, which the library path refuses: %v", b, err)
		}
		if !reflect.DeepEqual(fast, &slow) {
			t.Fatalf("canonicalClaims read %q as\n%+v\nthe library path as\n%+v", b, *fast, slow)
		}
	})
}

// TestCanonicalClaimsSealed: the claims Seal writes, with an audience or
// without, take the fast path.
func TestCanonicalClaimsSealed(t *testing.T) {
	for _, aud := range []string{"", "https://mcp.example/x"} {
		s := testSealer(t, SealerOptions{Audience: aud})
		tok := seal(t, s, testBinding(t))
		c, _, _, err := s.verify(tok)
		if err != nil {
			t.Fatal(err)
		}
		b, err := c.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := canonicalClaims(b); !ok {
			t.Fatalf("audience %q: the claims Seal writes, %s, miss the fast path", aud, b)
		}
	}
}

// FuzzAppendB64String: appendB64String writes what jsonw.String writes
// (the claims' strings as Seal wrote them before it) for any string, and
// its result decodes, with encoding/json, to the string itself when it is
// valid UTF-8.
func FuzzAppendB64String(f *testing.F) {
	f.Add("q6Xp8z5DgUBBNn6y", "")
	f.Add("OhPYxzlIE4SpkoVVXlfmk5DIyCe5XOhGKHjs1g", `{"jti":`)
	f.Add(`a"b\c`, "")
	f.Add("tab\there\u2028\xff", "x")
	f.Add("", "")
	f.Fuzz(func(t *testing.T, s, prefix string) {
		want := jsonw.String([]byte(prefix), s)
		got := appendB64String([]byte(prefix), s)
		if !bytes.Equal(got, want) {
			t.Fatalf("appendB64String(%q) = %s, want %s", s, got, want)
		}
		if utf8.ValidString(s) {
			var back string
			if err := json.Unmarshal(got[len(prefix):], &back); err != nil || back != s {
				t.Fatalf("appendB64String(%q) = %s: decodes to %q, %v", s, got, back, err)
			}
		}
	})
}

// TestCanonicalClaimsNumbers: a number with a leading zero (not JSON) is
// left to the library path, which refuses it; three zero decimals, which
// Seal never writes, are read as the library reads them.
func TestCanonicalClaimsNumbers(t *testing.T) {
	if _, ok := canonicalClaims([]byte(`{"exp":01767225900,"iat":1767225600,"jti":"a","enc":"b"}`)); ok {
		t.Fatal("a leading zero took the fast path")
	}
	b := []byte(`{"exp":1767225900.000,"iat":1767225600.010,"jti":"a","enc":"b"}`)
	fast, ok := canonicalClaims(b)
	if !ok || fast.ExpiresAtMs != 1767225900000 || fast.IssuedAtMs != 1767225600010 {
		t.Fatalf("canonicalClaims(%s) = %+v, %v", b, fast, ok)
	}
	var slow stateClaims
	if err := slow.UnmarshalJSON(b); err != nil || !reflect.DeepEqual(fast, &slow) {
		t.Fatalf("library path: %+v, %v; fast %+v", slow, err, *fast)
	}
}
