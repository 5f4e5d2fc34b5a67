package auth

import (
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// fuzzNow is the clock of FuzzDPoPProof: the seeds in
// testdata/fuzz/FuzzDPoPProof were minted at it, for the resource
// testResource and the access token fuzzToken, so that they reach the
// signature check.
var fuzzNow = time.Unix(1_800_000_000, 0)

const fuzzToken = "fuzz-access-token"

// fuzzSeedJKT is the thumbprint of the key that signed the seeds.
const fuzzSeedJKT = "WznLZNBCUyH_aut_n55l0akYukk9Mj2jqO5Ybx6uYys"

// FuzzDPoPProof feeds arbitrary DPoP headers to the proof verifier: it
// must refuse or accept without panicking, and what it accepts must have
// passed every check it makes without a key.
func FuzzDPoPProof(f *testing.F) {
	f.Add("this-is-not-a-jwt")
	f.Add("..")
	f.Add("eyJ9.eyJ9.x")
	cfg := Config{Resource: testResource, AuthorizationServers: []string{"https://as.example.com"}}
	if err := cfg.defaults(); err != nil {
		f.Fatal(err)
	}
	rs := &ResourceServer{cfg: cfg}
	rs.htu, _ = normalHTU(testResource)
	f.Fuzz(func(t *testing.T, proof string) {
		p, ae := rs.precheckProof(dpopRequest{proofs: []string{proof}, method: http.MethodPost, token: fuzzToken}, fuzzNow)
		if ae != nil {
			if ae.Code != codeInvalidProof || ae.Reason == "" {
				t.Fatalf("refusal %+v", ae)
			}
			return
		}
		if p.claims.JTI == "" || len(p.claims.JTI) > maxJTIBytes || p.claims.HTM != http.MethodPost ||
			!sameHTU(p.claims.HTU, rs.htu) || p.claims.ATH != ath(fuzzToken) || len(proof) > maxProofBytes {
			t.Fatalf("accepted claims %+v", p.claims)
		}
		// The key's thumbprint is not known to the fuzzer: compare with a
		// fixed one, and with what the seeds' key has.
		for _, jkt := range []string{"x", fuzzSeedJKT} {
			if id, ae := rs.verifyProof(p, jkt); ae == nil && (jkt != fuzzSeedJKT || id == "") {
				t.Fatalf("verified for jkt %q: %q", jkt, id)
			}
		}
	})
}

// TestFuzzSeedVerifies keeps the seed corpus meaningful: its valid proof
// passes every check, so the fuzzer starts from the signature check.
func TestFuzzSeedVerifies(t *testing.T) {
	b, err := os.ReadFile("testdata/fuzz/FuzzDPoPProof/valid")
	if err != nil {
		t.Fatal(err)
	}
	_, quoted, _ := strings.Cut(strings.TrimSpace(string(b)), "string(")
	proof, err := strconv.Unquote(strings.TrimSuffix(quoted, ")"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Resource: testResource, AuthorizationServers: []string{"https://as.example.com"}}
	if err := cfg.defaults(); err != nil {
		t.Fatal(err)
	}
	rs := &ResourceServer{cfg: cfg}
	rs.htu, _ = normalHTU(testResource)
	p, ae := rs.precheckProof(dpopRequest{proofs: []string{proof}, method: http.MethodPost, token: fuzzToken}, fuzzNow)
	if ae != nil {
		t.Fatal(ae)
	}
	if _, ae := rs.verifyProof(p, fuzzSeedJKT); ae != nil {
		t.Fatal(ae)
	}
}
