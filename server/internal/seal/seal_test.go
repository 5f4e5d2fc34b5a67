package seal

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/baton-mcp/baton/mrtr"
	"github.com/golang-jwt/jwt/v5"
)

func testKey(id string, fill byte) mrtr.Key {
	return mrtr.Key{ID: id, Secret: []byte(strings.Repeat(string(fill), mrtr.MinKeySize))}
}

func testRing(t testing.TB, keys ...mrtr.Key) *mrtr.KeyRing {
	t.Helper()
	r, err := mrtr.NewKeyRing(keys...)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func testSealer(t testing.TB, opts SealerOptions, keys ...mrtr.Key) *Sealer {
	t.Helper()
	if len(keys) == 0 {
		keys = []mrtr.Key{testKey("k1", 'a')}
	}
	s, err := NewSealer(testRing(t, keys...), opts)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func testBinding(t testing.TB) Binding {
	t.Helper()
	d, err := ArgumentsDigest(json.RawMessage(`{"to":"bob","amount":25}`))
	if err != nil {
		t.Fatal(err)
	}
	return Binding{Method: "tools/call", Target: "confirm_transfer", Arguments: d, Principal: "alice"}
}

func seal(t testing.TB, s *Sealer, b Binding) string {
	t.Helper()
	tok, err := s.Seal(&State{Binding: b, Issued: Issued{{"confirm", Digest{1, 2, 3}}}, Payload: json.RawMessage(`{"round":1}`)})
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// openBound opens tok and checks it against b, as a server does with
// State.Check (whose digest b already holds).
func openBound(s *Sealer, tok string, b Binding) (*State, error) {
	st, err := s.Open(tok)
	if err != nil {
		return nil, err
	}
	if err := st.checkRequest(b.Method, b.Target, b.Principal); err != nil {
		return nil, err
	}
	if err := st.checkArguments(b.Arguments); err != nil {
		return nil, err
	}
	return st, nil
}

// wantRefused asserts that err is a *StateError whose reason contains want.
// wantMismatch checks that err refuses a state issued for another request
// with the one reason the client sees, and detail in the log's Detail.
func wantMismatch(t *testing.T, err error, detail string) {
	t.Helper()
	wantRefused(t, err, "it was not issued for this request")
	var se *StateError
	errors.As(err, &se)
	if !strings.Contains(se.Detail, detail) {
		t.Fatalf("Detail = %q, want it to contain %q", se.Detail, detail)
	}
}

func wantRefused(t *testing.T, err error, want string) {
	t.Helper()
	var se *StateError
	if !errors.As(err, &se) {
		t.Fatalf("error = %v, want a *StateError", err)
	}
	if !strings.Contains(se.Reason, want) {
		t.Fatalf("reason = %q, want it to contain %q", se.Reason, want)
	}
	if rpc := se.RPCError(); rpc.Code != -32602 || !strings.Contains(rpc.Message, want) {
		t.Fatalf("RPCError = %+v, want -32602 naming %q", rpc, want)
	}
}

func TestSealOpenRoundTrip(t *testing.T) {
	s := testSealer(t, SealerOptions{TTL: time.Minute})
	b := testBinding(t)
	tok := seal(t, s, b)
	st, err := openBound(s, tok, b)
	if err != nil {
		t.Fatal(err)
	}
	if st.Binding != b {
		t.Fatalf("binding = %+v, want %+v", st.Binding, b)
	}
	if !issuedIs(st.Issued, "confirm", Digest{1, 2, 3}) || len(st.Issued) != 1 {
		t.Fatalf("issued = %v", st.Issued)
	}
	if string(st.Payload) != `{"round":1}` {
		t.Fatalf("payload = %s", st.Payload)
	}
	if st.ID == "" || st.ExpiresAt.Sub(st.IssuedAt) != time.Minute {
		t.Fatalf("id %q, issued %v, expires %v", st.ID, st.IssuedAt, st.ExpiresAt)
	}
	if tok2 := seal(t, s, b); tok2 == tok {
		t.Fatal("two seals of the same state gave the same token; the jti must differ")
	}
}

func TestOpenRefusesTampering(t *testing.T) {
	for _, plain := range []bool{false, true} {
		t.Run(map[bool]string{false: "encrypted", true: "plaintext"}[plain], func(t *testing.T) {
			testTampering(t, testSealer(t, SealerOptions{Plaintext: plain}), plain)
		})
	}
}

func testTampering(t *testing.T, s *Sealer, plain bool) {
	b := testBinding(t)
	tok := seal(t, s, b)
	parts := strings.Split(tok, ".")
	if want := map[bool]int{false: 4, true: 3}[plain]; len(parts) != want {
		t.Fatalf("token has %d parts, want %d", len(parts), want)
	}
	tail := "" // the ciphertext segment, if any
	if len(parts) == 4 {
		tail = "." + parts[3]
	}
	claims := func() map[string]any { return claimsMap(t, mustClaims(t, tok)) }
	encode := func(v any) string {
		raw, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return base64.RawURLEncoding.EncodeToString(raw)
	}

	t.Run("suffix", func(t *testing.T) {
		_, err := openBound(s, tok+"-TAMPERED", b)
		wantRefused(t, err, "")
	})
	t.Run("flipped signature byte", func(t *testing.T) {
		sig := []byte(parts[2])
		if sig[0] == 'A' {
			sig[0] = 'B'
		} else {
			sig[0] = 'A'
		}
		_, err := openBound(s, parts[0]+"."+parts[1]+"."+string(sig)+tail, b)
		wantRefused(t, err, "signature")
	})
	t.Run("expiry extended", func(t *testing.T) {
		m := claims()
		m["exp"] = 4102444800
		_, err := openBound(s, parts[0]+"."+encode(m)+"."+parts[2]+tail, b)
		wantRefused(t, err, "signature")
	})
	t.Run("content edited", func(t *testing.T) {
		m := claims()
		if plain {
			st := m["st"].(map[string]any)
			st["tgt"] = "other_tool"
			st["pld"] = map[string]any{"round": 99}
		} else {
			enc := []byte(m["enc"].(string))
			enc[len(enc)/2] ^= 1
			m["enc"] = string(enc)
		}
		_, err := openBound(s, parts[0]+"."+encode(m)+"."+parts[2]+tail, b)
		wantRefused(t, err, "signature")
	})
	t.Run("re-signed with none", func(t *testing.T) {
		m := claims()
		none := jwt.NewWithClaims(jwt.SigningMethodNone, jwt.MapClaims(m))
		none.Header["kid"] = "k1"
		forged, err := none.SignedString(jwt.UnsafeAllowNoneSignatureType)
		if err != nil {
			t.Fatal(err)
		}
		_, err = openBound(s, forged, b)
		wantRefused(t, err, "signing method none is invalid")
	})
	t.Run("re-signed with HS512 and the right secret", func(t *testing.T) {
		m := claims()
		other := jwt.NewWithClaims(jwt.SigningMethodHS512, jwt.MapClaims(m))
		other.Header["kid"] = "k1"
		forged, err := other.SignedString(s.ring.Load().signing().mac)
		if err != nil {
			t.Fatal(err)
		}
		_, err = openBound(s, forged, b)
		wantRefused(t, err, "HS512 is invalid")
	})
	t.Run("signed with another key under the same id", func(t *testing.T) {
		other := testSealer(t, SealerOptions{}, testKey("k1", 'b'))
		_, err := openBound(s, seal(t, other, b), b)
		wantRefused(t, err, "signature")
	})
	t.Run("unknown key id", func(t *testing.T) {
		other := testSealer(t, SealerOptions{}, testKey("k9", 'a'))
		_, err := openBound(s, seal(t, other, b), b)
		wantRefused(t, err, `unknown key id "k9"`)
	})
	t.Run("not a JWT", func(t *testing.T) {
		_, err := openBound(s, "hello", b)
		wantRefused(t, err, "malformed")
	})
	t.Run("empty", func(t *testing.T) {
		_, err := openBound(s, "", b)
		wantRefused(t, err, "malformed")
	})
}

func TestOpenRefusesOtherBindings(t *testing.T) {
	s := testSealer(t, SealerOptions{})
	b := testBinding(t)
	tok := seal(t, s, b)
	otherArgs, err := ArgumentsDigest(json.RawMessage(`{"to":"mallory","amount":25}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		edit   func(*Binding)
		reason string
	}{
		{"other method", func(b *Binding) { b.Method = "prompts/get" }, "issued for tools/call, not prompts/get"},
		{"other tool", func(b *Binding) { b.Target = "other_tool" }, `issued for "confirm_transfer", not "other_tool"`},
		{"other arguments", func(b *Binding) { b.Arguments = otherArgs }, "different arguments"},
		{"other principal", func(b *Binding) { b.Principal = "mallory" }, `issued to principal "alice", not "mallory"`},
		{"anonymous", func(b *Binding) { b.Principal = "" }, `issued to principal "alice", not ""`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := b
			tc.edit(&want)
			_, err := openBound(s, tok, want)
			// One reason toward the client for every mismatch, naming
			// nothing the state was issued for; the difference is in
			// Detail, for the log.
			wantRefused(t, err, "it was not issued for this request")
			var se *StateError
			errors.As(err, &se)
			if !strings.Contains(se.Detail, tc.reason) {
				t.Errorf("Detail = %q, want it to contain %q", se.Detail, tc.reason)
			}
			msg := se.RPCError().Message
			for _, leak := range []string{"tools/call", "confirm_transfer", "alice", "arguments for", "principal \""} {
				if strings.Contains(msg, leak) {
					t.Errorf("the client's message %q tells %q", msg, leak)
				}
			}
		})
	}
}

// Check compares the arguments last: arguments that cannot even be
// canonicalised cost nothing when the state is for another call.
func TestCheckComparesArgumentsLast(t *testing.T) {
	s := testSealer(t, SealerOptions{})
	b := testBinding(t)
	st, err := s.Open(seal(t, s, b))
	if err != nil {
		t.Fatal(err)
	}
	d, err := st.Check("tools/call", "confirm_transfer", "alice", json.RawMessage(`{ "amount": 25.0, "to": "bob" }`))
	if err != nil || d != b.Arguments {
		t.Fatalf("Check = %x, %v; want the digest %x", d, err, b.Arguments)
	}
	dup := json.RawMessage(`{"to":"bob","to":"mallory","amount":25}`)
	_, err = st.Check("tools/call", "other_tool", "alice", dup)
	wantMismatch(t, err, `not "other_tool"`)
	_, err = st.Check("tools/call", "confirm_transfer", "mallory", dup)
	wantMismatch(t, err, `to principal "alice", not "mallory"`)
	_, err = st.Check("tools/call", "confirm_transfer", "alice", dup)
	var se *StateError
	if err == nil || errors.As(err, &se) || !strings.Contains(err.Error(), "duplicate key") {
		t.Fatalf("Check(duplicate keys) = %v, want a canonicalisation error", err)
	}
	_, err = st.Check("tools/call", "confirm_transfer", "alice", json.RawMessage(`{"to":"mallory","amount":25}`))
	wantMismatch(t, err, "different arguments")
}

func TestOpenRefusesExpired(t *testing.T) {
	past := time.Now().Add(-time.Hour)
	old := testSealer(t, SealerOptions{TTL: time.Minute, Now: func() time.Time { return past }})
	b := testBinding(t)
	tok := seal(t, old, b)
	_, err := openBound(testSealer(t, SealerOptions{}), tok, b)
	wantRefused(t, err, "expired")
}

func TestOpenRefusesFutureState(t *testing.T) {
	future := time.Now().Add(time.Hour)
	ahead := testSealer(t, SealerOptions{Now: func() time.Time { return future }})
	b := testBinding(t)
	_, err := openBound(testSealer(t, SealerOptions{}), seal(t, ahead, b), b)
	wantRefused(t, err, "future")
}

func TestAudience(t *testing.T) {
	b := testBinding(t)
	a := testSealer(t, SealerOptions{Audience: "fleet-a"})
	tok := seal(t, a, b)
	if _, err := openBound(a, tok, b); err != nil {
		t.Fatalf("same audience: %v", err)
	}
	_, err := openBound(testSealer(t, SealerOptions{Audience: "fleet-b"}), tok, b)
	wantRefused(t, err, "another audience")
	_, err = openBound(a, seal(t, testSealer(t, SealerOptions{}), b), b)
	wantRefused(t, err, "another audience")
}

func TestKeyRotation(t *testing.T) {
	b := testBinding(t)
	s := testSealer(t, SealerOptions{}, testKey("old", 'o'))
	oldTok := seal(t, s, b)

	// Rotate: the new key signs, the old one still verifies.
	if err := s.SetKeys(testRing(t, testKey("new", 'n'), testKey("old", 'o'))); err != nil {
		t.Fatal(err)
	}
	if _, err := openBound(s, oldTok, b); err != nil {
		t.Fatalf("state signed before the rotation: %v", err)
	}
	newTok := seal(t, s, b)
	jws := strings.Join(strings.Split(newTok, ".")[:3], ".") // without the ciphertext segment
	tok, _, err := jwt.NewParser().ParseUnverified(jws, jwt.MapClaims{})
	if err != nil {
		t.Fatal(err)
	}
	if kid := tok.Header["kid"]; kid != "new" {
		t.Fatalf("new state signed with %v, want the newest key", kid)
	}

	// Retire the old key: its state is refused, the new state is not.
	if err := s.SetKeys(testRing(t, testKey("new", 'n'))); err != nil {
		t.Fatal(err)
	}
	_, err = openBound(s, oldTok, b)
	wantRefused(t, err, `unknown key id "old"`)
	if _, err := openBound(s, newTok, b); err != nil {
		t.Fatal(err)
	}
}

func TestSizeLimit(t *testing.T) {
	s := testSealer(t, SealerOptions{MaxSize: 600})
	b := testBinding(t)
	big := json.RawMessage(`"` + strings.Repeat("x", 1000) + `"`)
	if _, err := s.Seal(&State{Binding: b, Payload: big}); err == nil || !strings.Contains(err.Error(), "600-byte limit") {
		t.Fatalf("Seal of oversized state: err = %v", err)
	}
	_, err := openBound(s, strings.Repeat("a", 601), b)
	wantRefused(t, err, "over the 600-byte limit")
}

func TestKeyRingValidation(t *testing.T) {
	for _, tc := range []struct {
		name string
		keys []mrtr.Key
		want string
	}{
		{"none", nil, "no keys"},
		{"short", []mrtr.Key{{ID: "a", Secret: []byte("short")}}, "at least 32"},
		{"no id", []mrtr.Key{{Secret: make([]byte, 32)}}, "no ID"},
		{"duplicate", []mrtr.Key{testKey("a", 'x'), testKey("a", 'y')}, "duplicate"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := mrtr.NewKeyRing(tc.keys...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
	}
	secret := make([]byte, 32)
	s, err := NewSealer(testRing(t, mrtr.Key{ID: "a", Secret: secret}), SealerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	b := testBinding(t)
	tok := seal(t, s, b)
	secret[0] = 1 // the caller reuses its buffer
	if _, err := openBound(s, tok, b); err != nil {
		t.Fatalf("the ring must not alias the caller's secret: %v", err)
	}
}

func BenchmarkSeal(b *testing.B) {
	s := testSealer(b, SealerOptions{})
	bind := testBinding(b)
	st := &State{Binding: bind, Issued: Issued{{"confirm", Digest{1}}}, Payload: json.RawMessage(`{"round":1}`)}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Seal(st); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkOpen(b *testing.B) {
	s := testSealer(b, SealerOptions{})
	bind := testBinding(b)
	tok := seal(b, s, bind)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := openBound(s, tok, bind); err != nil {
			b.Fatal(err)
		}
	}
}

func TestContentIsConfidential(t *testing.T) {
	b := testBinding(t)
	st := func() *State {
		return &State{Binding: b, Payload: json.RawMessage(`{"email":"alice@example.com"}`),
			Answers: []Recorded{{Key: "baton:0", Digest: Digest{9}, Answer: json.RawMessage(`{"action":"accept","content":{"name":"Alice Liddell"}}`)}}}
	}
	readable := func(tok string) string {
		parts := strings.Split(tok, ".")
		raw, err := base64.RawURLEncoding.DecodeString(parts[1])
		if err != nil {
			t.Fatal(err)
		}
		return string(raw)
	}
	enc := testSealer(t, SealerOptions{})
	tok, err := enc.Seal(st())
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{"Alice", "alice@example.com", "confirm_transfer", "tools/call"} {
		if strings.Contains(readable(tok), secret) {
			t.Fatalf("%q is readable in the encrypted state: %s", secret, readable(tok))
		}
	}
	got, err := openBound(enc, tok, b)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Answers) != 1 || got.Answers[0].Digest != (Digest{9}) || !strings.Contains(string(got.Answers[0].Answer), "Alice Liddell") {
		t.Fatalf("answers = %+v", got.Answers)
	}

	plain := testSealer(t, SealerOptions{Plaintext: true})
	ptok, err := plain.Seal(st())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(readable(ptok), "Alice Liddell") {
		t.Fatal("plaintext mode should leave the content readable")
	}
	// Either sealer opens either form: the signature is what authenticates.
	if _, err := openBound(enc, ptok, b); err != nil {
		t.Fatal(err)
	}
	// Content sealed under one key cannot be opened with another key of
	// the same id (the signature fails first).
	other := testSealer(t, SealerOptions{}, testKey("k1", 'z'))
	if _, err := openBound(other, tok, b); err == nil {
		t.Fatal("opened with another key")
	}
}

// Tokens signed with the right key but with content that is not a sealed
// state (as a leaked signing key could produce) are refused with a reason.
func TestOpenRefusesBadContent(t *testing.T) {
	s := testSealer(t, SealerOptions{})
	b := testBinding(t)
	sign := func(claims jwt.MapClaims) string {
		tok := jwt.NewWithClaims(jwt.SigningMethodHS256, claims)
		tok.Header["kid"] = "k1"
		out, err := tok.SignedString(s.ring.Load().signing().mac)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	base := func() jwt.MapClaims {
		now := time.Now().Unix()
		return jwt.MapClaims{"iat": now, "exp": now + 60, "jti": "x"}
	}
	c := base()
	_, err := openBound(s, sign(c), b)
	wantRefused(t, err, "exactly one of st and enc")
	c = base()
	c["enc"] = "AAAA"
	_, err = openBound(s, sign(c), b)
	wantRefused(t, err, "malformed encrypted content")
	c = base()
	c["enc"] = base64.RawURLEncoding.EncodeToString(make([]byte, 64))
	_, err = openBound(s, sign(c), b)
	wantRefused(t, err, "does not decrypt")
	c = base()
	c["st"] = map[string]any{"mth": "tools/call", "tgt": "confirm_transfer", "arg": "short"}
	_, err = openBound(s, sign(c), b)
	wantRefused(t, err, "malformed argument digest")
}
