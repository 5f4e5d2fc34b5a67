package seal

import (
	"bytes"
	"strings"
	"sync"
	"testing"

	"github.com/golang-jwt/jwt/v5"
)

// TestHS256MatchesGolangJWT checks the pooled HS256 against golang-jwt's
// SigningMethodHS256 with the same key: the same signature for inputs of
// several sizes, from goroutines sharing the pool, and that a sealed
// state's signature is one golang-jwt verifies.
func TestHS256MatchesGolangJWT(t *testing.T) {
	s := testSealer(t, SealerOptions{})
	key := s.ring.Load().signing()
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for n := range 300 {
				msg := strings.Repeat(string(rune('a'+g)), n*7)
				want, err := jwt.SigningMethodHS256.Sign(msg, key.mac)
				if err != nil {
					t.Error(err)
					return
				}
				if got := key.hs256(nil, []byte(msg)); !bytes.Equal(got, want) {
					t.Errorf("hs256(%d bytes) = %x, golang-jwt %x", len(msg), got, want)
					return
				}
				if !key.verifyHS256(msg, want) {
					t.Errorf("verifyHS256 refuses golang-jwt's signature of %d bytes", len(msg))
					return
				}
				bad := append([]byte(nil), want...)
				bad[n%len(bad)] ^= 1
				if key.verifyHS256(msg, bad) || key.verifyHS256(msg, want[:len(want)-1]) {
					t.Errorf("verifyHS256 accepts a wrong signature of %d bytes", len(msg))
					return
				}
			}
		})
	}
	wg.Wait()

	token, err := s.Seal(&State{Binding: Binding{Method: "tools/call", Target: "t"}})
	if err != nil {
		t.Fatal(err)
	}
	i := strings.LastIndexByte(token, '.')
	sig, err := strictB64.DecodeString(token[i+1:])
	if err != nil {
		t.Fatal(err)
	}
	if err := jwt.SigningMethodHS256.Verify(token[:i], sig, key.mac); err != nil {
		t.Errorf("golang-jwt does not verify a sealed state: %v", err)
	}
}
