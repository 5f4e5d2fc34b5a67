package seal

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// t0 is the issue time of the states in these tests: a time with a
// millisecond fraction, so that truncation to seconds would show.
var t0 = time.Date(2026, 7, 28, 12, 0, 0, 987_000_000, time.UTC)

// at returns a clock that always reads t.
func at(t time.Time) func() time.Time { return func() time.Time { return t } }

// issuedAt seals a state for b on a sealer whose clock reads t0.
func issuedAt(t *testing.T, opts SealerOptions, b Binding) (string, *State) {
	t.Helper()
	opts.Now = at(t0)
	st := &State{Binding: b}
	tok, err := testSealer(t, opts).Seal(st)
	if err != nil {
		t.Fatal(err)
	}
	return tok, st
}

// openAt opens tok on a sealer whose clock reads now.
func openAt(t *testing.T, opts SealerOptions, now time.Time, tok string, b Binding) (*State, error) {
	t.Helper()
	opts.Now = at(now)
	return openBound(testSealer(t, opts), tok, b)
}

func TestLeewayOnIssuedAt(t *testing.T) {
	b := testBinding(t)
	tok, _ := issuedAt(t, SealerOptions{}, b)
	for _, tc := range []struct {
		name   string
		leeway time.Duration
		behind time.Duration // how far the verifier's clock is behind the issuer's
		refuse string        // "" when accepted
	}{
		{"same clock", 0, 0, ""},
		{"55 ms behind (the reported failure)", 0, 55 * time.Millisecond, ""},
		{"exactly at the default leeway", 0, DefaultLeeway, ""},
		{"1 ms past the default leeway", 0, DefaultLeeway + time.Millisecond, "issued in the future: its iat is 30.001s ahead of this server's clock, beyond the 30s leeway"},
		{"1 ns past the default leeway", 0, DefaultLeeway + 1, "its iat is 30.001s ahead of this server's clock, beyond the 30s leeway"},
		{"ahead of the issuer", 0, -time.Minute, ""},
		{"exactly at a 5 s leeway", 5 * time.Second, 5 * time.Second, ""},
		{"1 ms past a 5 s leeway", 5 * time.Second, 5*time.Second + time.Millisecond, "5.001s ahead of this server's clock, beyond the 5s leeway"},
		{"no leeway, same clock", -1, 0, ""},
		{"no leeway, 1 ms behind", -1, time.Millisecond, "issued in the future: its iat is 1ms ahead of this server's clock, beyond the 0s leeway"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, err := openAt(t, SealerOptions{Leeway: tc.leeway}, t0.Add(-tc.behind), tok, b)
			if tc.refuse == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				if !st.IssuedAt.Equal(t0) {
					t.Errorf("IssuedAt = %v, want %v", st.IssuedAt, t0)
				}
				return
			}
			wantRefused(t, err, tc.refuse)
			if !errors.Is(err, jwt.ErrTokenUsedBeforeIssued) {
				t.Errorf("%v does not wrap jwt.ErrTokenUsedBeforeIssued", err)
			}
		})
	}
}

// The failure the issue reports: an instance 55 ms behind the issuer, with
// the state issued 20 ms into a second. Truncated to whole seconds and
// checked with no leeway, its iat was 945 ms in the verifier's future.
func TestFiftyFiveMillisecondsBehind(t *testing.T) {
	b := testBinding(t)
	issued := time.Date(2026, 7, 28, 12, 0, 1, 20_000_000, time.UTC)
	tok, err := testSealer(t, SealerOptions{Now: at(issued)}).Seal(&State{Binding: b})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := openAt(t, SealerOptions{}, issued.Add(-55*time.Millisecond), tok, b); err != nil {
		t.Fatalf("default leeway: %v", err)
	}
	_, err = openAt(t, SealerOptions{Leeway: -1}, issued.Add(-55*time.Millisecond), tok, b)
	wantRefused(t, err, "its iat is 55ms ahead of this server's clock, beyond the 0s leeway")
}

func TestExpiryIsExact(t *testing.T) {
	b := testBinding(t)
	const ttl = time.Minute
	tok, sealed := issuedAt(t, SealerOptions{TTL: ttl}, b)
	exp := t0.Add(ttl)
	if !sealed.IssuedAt.Equal(t0) || !sealed.ExpiresAt.Equal(exp) {
		t.Fatalf("sealed iat %v exp %v, want %v and %v (to the millisecond)", sealed.IssuedAt, sealed.ExpiresAt, t0, exp)
	}
	for _, leeway := range []time.Duration{-1, 0, time.Hour} {
		opts := SealerOptions{Leeway: leeway}
		st, err := openAt(t, opts, exp.Add(-time.Millisecond), tok, b)
		if err != nil {
			t.Fatalf("leeway %v, 1 ms before exp: %v", leeway, err)
		}
		if !st.ExpiresAt.Equal(exp) {
			t.Errorf("ExpiresAt = %v, want %v", st.ExpiresAt, exp)
		}
		_, err = openAt(t, opts, exp, tok, b)
		wantRefused(t, err, "expired 0s ago by this server's clock")
		if !errors.Is(err, jwt.ErrTokenExpired) {
			t.Errorf("%v does not wrap jwt.ErrTokenExpired", err)
		}
		_, err = openAt(t, opts, exp.Add(time.Millisecond), tok, b)
		wantRefused(t, err, "expired 1ms ago")
	}
}

// claimsOf returns the decoded claims of a token, as JSON text and as a map.
func claimsOf(t *testing.T, tok string) (string, map[string]json.RawMessage) {
	t.Helper()
	parts := strings.Split(tok, ".")
	raw, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	return string(raw), m
}

func TestStateTimesOnTheWire(t *testing.T) {
	b := testBinding(t)
	tok, _ := issuedAt(t, SealerOptions{TTL: 90 * time.Second}, b)
	raw, m := claimsOf(t, tok)
	sec := t0.Unix()
	if got, want := string(m["iat"]), jsonInt(sec)+".987"; got != want {
		t.Errorf("iat = %s, want %s (%s)", got, want, raw)
	}
	if got, want := string(m["exp"]), jsonInt(sec+90)+".987"; got != want {
		t.Errorf("exp = %s, want %s (%s)", got, want, raw)
	}
	if _, ok := m["nbf"]; ok {
		t.Errorf("Seal wrote an nbf: %s", raw)
	}

	// A whole second is written without a fraction.
	whole := testSealer(t, SealerOptions{Now: at(t0.Truncate(time.Second).Add(5 * time.Millisecond))})
	tok2, err := whole.Seal(&State{Binding: b})
	if err != nil {
		t.Fatal(err)
	}
	if _, m := claimsOf(t, tok2); string(m["iat"]) != jsonInt(sec)+".005" {
		t.Errorf("iat = %s, want %s.005", m["iat"], jsonInt(sec))
	}
	whole = testSealer(t, SealerOptions{Now: at(t0.Truncate(time.Second))})
	if tok2, err = whole.Seal(&State{Binding: b}); err != nil {
		t.Fatal(err)
	}
	if _, m := claimsOf(t, tok2); string(m["iat"]) != jsonInt(sec) {
		t.Errorf("iat = %s, want %s", m["iat"], jsonInt(sec))
	}
}

func jsonInt(n int64) string { b, _ := json.Marshal(n); return string(b) }

// signClaims signs arbitrary claims with s's signing key, with a valid
// plaintext body for b, as an older Baton or a key holder could.
func signClaims(t *testing.T, s *Sealer, b Binding, claims jwt.MapClaims) string {
	t.Helper()
	claims["jti"] = "x"
	claims["st"] = plainBody(&State{Binding: b})
	tok := jwt.NewWithClaims(jwt.SigningMethodHS256, claims)
	tok.Header["kid"] = "k1"
	out, err := tok.SignedString(s.ring.Load().signing().mac)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestStateTimesFromClaims(t *testing.T) {
	b := testBinding(t)
	s := testSealer(t, SealerOptions{Now: at(t0)})
	secs := func(d time.Duration) float64 { return float64(t0.Add(d).UnixMilli()) / 1000 }
	for _, tc := range []struct {
		name   string
		claims jwt.MapClaims
		refuse string
	}{
		{"whole seconds, as older versions wrote", jwt.MapClaims{"iat": t0.Unix(), "exp": t0.Unix() + 60}, ""},
		{"nbf at the leeway", jwt.MapClaims{"iat": secs(0), "nbf": secs(DefaultLeeway), "exp": secs(time.Hour)}, ""},
		{"nbf 1 ms past the leeway", jwt.MapClaims{"iat": secs(0), "nbf": secs(DefaultLeeway + time.Millisecond), "exp": secs(time.Hour)},
			"not valid yet: its nbf is 30.001s ahead of this server's clock, beyond the 30s leeway"},
		{"no iat", jwt.MapClaims{"exp": secs(time.Minute)}, ""},
		{"no exp", jwt.MapClaims{"iat": secs(0)}, "a required claim is missing: exp"},
		{"exp zero", jwt.MapClaims{"iat": secs(0), "exp": 0}, "a required claim is missing: exp"},
		{"negative exp", jwt.MapClaims{"iat": secs(0), "exp": -5}, "malformed token: exp is not a time between 1970 and 9999"},
		{"exp past 9999", jwt.MapClaims{"iat": secs(0), "exp": 1e12}, "malformed token: exp is not a time between 1970 and 9999"},
		{"iat past 9999", jwt.MapClaims{"iat": 1e300, "exp": secs(time.Minute)}, "malformed token: iat is not a time"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, err := openBound(s, signClaims(t, s, b, tc.claims), b)
			if tc.refuse != "" {
				wantRefused(t, err, tc.refuse)
				return
			}
			if err != nil {
				t.Fatalf("refused: %v", err)
			}
			if st.ExpiresAt.IsZero() {
				t.Error("ExpiresAt is zero")
			}
		})
	}
}

func TestSealerClockAndTTLLimits(t *testing.T) {
	if _, err := NewSealer(testRing(t, testKey("k1", 'a')), SealerOptions{TTL: 500 * time.Microsecond}); err == nil {
		t.Error("a TTL under a millisecond was accepted")
	}
	s := testSealer(t, SealerOptions{TTL: 1500 * time.Microsecond})
	if s.TTL() != time.Millisecond {
		t.Errorf("TTL() = %v, want it truncated to 1ms", s.TTL())
	}
	for _, lw := range []struct{ in, want time.Duration }{{0, DefaultLeeway}, {-1, 0}, {7 * time.Second, 7 * time.Second}} {
		if got := testSealer(t, SealerOptions{Leeway: lw.in}).Leeway(); got != lw.want {
			t.Errorf("Leeway %v: Leeway() = %v, want %v", lw.in, got, lw.want)
		}
	}
	for _, now := range []time.Time{time.Unix(-1, 0), time.Unix(0, 0), time.Date(9999, 12, 31, 23, 55, 0, 0, time.UTC)} {
		_, err := testSealer(t, SealerOptions{Now: at(now)}).Seal(&State{Binding: testBinding(t)})
		if err == nil || !strings.Contains(err.Error(), "the state's times fall outside 1970 to 9999") {
			t.Errorf("sealing at %v: %v", now, err)
		}
	}
}

// The wall clock is read in one place of this package and of package
// server (wallClock, for New when Options.Now is nil, and for the memory
// ledger, task store and URL flow store, a URLFlow and the telemetry's
// stopwatch when given none), and nowhere in package mrtr; every other
// reader of the time goes through an injected clock.
func TestWallClockReadOnce(t *testing.T) {
	for _, pkg := range []struct {
		dir  string
		want int
	}{{".", 1}, {"../../../mrtr", 0}, {"../..", 1}} {
		files, err := filepath.Glob(filepath.Join(pkg.dir, "*.go"))
		if err != nil || len(files) == 0 {
			t.Fatalf("%s: no Go files (%v): has the package moved?", pkg.dir, err)
		}
		var found []string
		fset := token.NewFileSet()
		for _, name := range files {
			if strings.HasSuffix(name, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(fset, name, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			ast.Inspect(f, func(n ast.Node) bool {
				sel, ok := n.(*ast.SelectorExpr)
				if !ok {
					return true
				}
				if id, ok := sel.X.(*ast.Ident); ok && id.Name == "time" {
					switch sel.Sel.Name {
					case "Now", "Since", "Until":
						found = append(found, fset.Position(sel.Pos()).String())
					}
				}
				return true
			})
		}
		if len(found) != pkg.want {
			t.Errorf("%s reads the wall clock in %d places, want %d: %v", pkg.dir, len(found), pkg.want, found)
		}
	}
}
