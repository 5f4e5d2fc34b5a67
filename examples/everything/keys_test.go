package main

import (
	"encoding/base64"
	"encoding/json"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"testing"
	"time"
)

const (
	keyOld   = "old-key-old-key-old-key-old-key-01"
	keyOlder = "older-key-older-key-older-key-0002"
	keyNew   = "new-key-new-key-new-key-new-key-03"
)

// keyID is the ID a lone key gets, as every instance derives it.
func keyID(t *testing.T, secret string) string {
	t.Helper()
	r, err := stateKeys(secret)
	if err != nil {
		t.Fatal(err)
	}
	return r.SigningKeyID()
}

func TestStateKeyRingRotation(t *testing.T) {
	r, err := stateKeyRing(keyNew, keyOld+","+keyOlder)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{keyID(t, keyNew), keyID(t, keyOld), keyID(t, keyOlder)}
	if !slices.Equal(r.IDs(), want) || r.SigningKeyID() != want[0] {
		t.Fatalf("ring %v (signing %s), want %v signed by the first", r.IDs(), r.SigningKeyID(), want)
	}
	if !strings.HasPrefix(want[0], "k-") || len(want[0]) != 2+12 {
		t.Fatalf("key id %q is not derived as k-<12 hex>", want[0])
	}

	// Blanks and empty entries are ignored; repeats (the signing key among
	// the old ones, an old key twice) are listed once.
	r2, err := stateKeyRing(keyNew, " "+keyOld+" ,, "+keyNew+","+keyOld+",\n"+keyOlder+"\n")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(r2.IDs(), want) {
		t.Fatalf("ring %v, want %v", r2.IDs(), want)
	}

	// Without old keys it is the ring stateKeys always made.
	r3, err := stateKeyRing(keyNew, "")
	if err != nil || !slices.Equal(r3.IDs(), want[:1]) {
		t.Fatalf("no old keys: %v, %v", r3, err)
	}
	if r, err := stateKeyRing("", ""); r != nil || err != nil {
		t.Fatalf("no keys at all: %v, %v (want the random-key fallback)", r, err)
	}
}

func TestStateKeyRingRefuses(t *testing.T) {
	for _, tc := range []struct {
		name, key, old, want string
	}{
		{"short signing key", "short", keyOld, "BATON_STATE_KEY is 5 bytes"},
		{"short old key", keyNew, keyOld + ",tooshort", "BATON_STATE_KEYS_OLD: key 2 is 8 bytes"},
		{"old keys only", "", keyOld, "BATON_STATE_KEY is not"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := stateKeyRing(tc.key, tc.old)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, %v; want an error containing %q", r, err, tc.want)
			}
			// The message never carries a secret.
			for _, s := range []string{keyOld, keyNew, "tooshort"} {
				if strings.Contains(err.Error(), s) {
					t.Fatalf("error reveals a key: %v", err)
				}
			}
		})
	}
}

func TestStateKeysFromEnv(t *testing.T) {
	t.Setenv("BATON_STATE_KEY", keyNew)
	t.Setenv("BATON_STATE_KEYS_OLD", keyOld)
	r, err := stateKeysFromEnv(os.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{keyID(t, keyNew), keyID(t, keyOld)}; !slices.Equal(r.IDs(), want) {
		t.Fatalf("ring %v, want %v", r.IDs(), want)
	}
}

func newRingServer(t *testing.T, key, old string) *httptest.Server {
	t.Helper()
	keys, err := stateKeyRing(key, old)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := newServer(keys, time.Minute, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	return ts
}

// stateKID returns the "kid" in a requestState's JWT header.
func stateKID(t *testing.T, state string) string {
	t.Helper()
	raw, err := base64.RawURLEncoding.DecodeString(strings.Split(state, ".")[0])
	if err != nil {
		t.Fatal(err)
	}
	var h struct {
		Kid string `json:"kid"`
	}
	if err := json.Unmarshal(raw, &h); err != nil {
		t.Fatal(err)
	}
	return h.Kid
}

// A rotation: old instances sign with the old key; rotated ones sign with
// the new key and still finish the old state; once the old key is dropped
// its state is refused with -32602.
func TestKeyRotationAcrossInstances(t *testing.T) {
	before := newRingServer(t, keyOld, "")
	rotated := newRingServer(t, keyNew, keyOld)
	after := newRingServer(t, keyNew, "")

	_, oldState := inputRequired(t, callTool(t, before.URL, "onboard_user", map[string]any{}, nil))
	if kid := stateKID(t, oldState); kid != keyID(t, keyOld) {
		t.Fatalf("state from the old instance has kid %q", kid)
	}
	// A rotated instance finishes the flow begun under the old key, and
	// signs what it issues with the new key.
	_, s2 := inputRequired(t, callTool(t, rotated.URL, "onboard_user", map[string]any{}, retry(oldState, map[string]any{"baton:0": acceptContent("name", "Alice")})))
	if kid := stateKID(t, s2); kid != keyID(t, keyNew) {
		t.Fatalf("state from the rotated instance has kid %q, want the new key's", kid)
	}
	// An instance with only the new key finishes it.
	got, isErr := toolText(t, callTool(t, after.URL, "onboard_user", map[string]any{}, retry(s2, map[string]any{"baton:1": acceptContent("email", "alice@example.com")})))
	if isErr || got != "Welcome aboard, Alice <alice@example.com>" {
		t.Fatalf("result %q", got)
	}

	// Once the old key is dropped, state it signed is refused cleanly.
	r := callTool(t, after.URL, "onboard_user", map[string]any{}, retry(oldState, map[string]any{"baton:0": acceptContent("name", "Alice")}))
	if r.Error == nil || r.Error.Code != -32602 || !strings.Contains(r.Error.Message, "requestState") {
		t.Fatalf("old state on an instance without the old key: %+v %v", r.Error, r.Result)
	}
	// And an instance not yet rotated cannot read new state.
	r = callTool(t, before.URL, "onboard_user", map[string]any{}, retry(s2, map[string]any{"baton:1": acceptContent("email", "alice@example.com")}))
	if r.Error == nil || r.Error.Code != -32602 {
		t.Fatalf("new state on an instance without the new key: %+v %v", r.Error, r.Result)
	}
}

// The old keys verify only: they never sign, whatever their order.
func TestOldKeysNeverSign(t *testing.T) {
	ring, err := stateKeyRing(keyNew, keyOld+","+keyOlder)
	if err != nil {
		t.Fatal(err)
	}
	ts := newRingServer(t, keyNew, keyOld+","+keyOlder)
	for range 3 {
		_, s := inputRequired(t, call(t, ts.URL, nil))
		if kid := stateKID(t, s); kid != ring.SigningKeyID() || kid != keyID(t, keyNew) {
			t.Fatalf("signed by %q, want %q", kid, keyID(t, keyNew))
		}
	}
}
