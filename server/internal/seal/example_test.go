package seal_test

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/baton-mcp/baton/mrtr"
	"github.com/baton-mcp/baton/server/internal/seal"
)

// Rotating the requestState key: the new key signs, the old one still
// verifies until the state it signed has expired, then it is dropped.
func ExampleSealer_SetKeys() {
	oldKey := mrtr.Key{ID: "2026-11", Secret: []byte(strings.Repeat("o", 32))}
	newKey := mrtr.Key{ID: "2026-12", Secret: []byte(strings.Repeat("n", 32))}
	ring, _ := mrtr.NewKeyRing(oldKey)
	sealer, _ := seal.NewSealer(ring, seal.SealerOptions{})

	args, _ := seal.ArgumentsDigest(json.RawMessage(`{"to":"bob"}`))
	bind := seal.Binding{Method: "tools/call", Target: "transfer", Arguments: args}
	inFlight, _ := sealer.Seal(&seal.State{Binding: bind})

	// Step 1: the new key first, the old one kept for verification.
	both, _ := mrtr.NewKeyRing(newKey, oldKey)
	_ = sealer.SetKeys(both)
	_, err := sealer.Open(inFlight)
	fmt.Println("in-flight state still opens:", err == nil)
	fmt.Println("new state is signed by:", both.SigningKeyID())

	// Step 2, after the state TTL: drop the old key.
	onlyNew, _ := mrtr.NewKeyRing(newKey)
	_ = sealer.SetKeys(onlyNew)
	_, err = sealer.Open(inFlight)
	fmt.Println(err)
	// Output:
	// in-flight state still opens: true
	// new state is signed by: 2026-12
	// invalid requestState: cannot be verified: unknown key id "2026-11"
}

// Accepting a retry: Open verifies the token (signature, expiry, content)
// before anything else; Check then compares what it was issued for,
// canonicalising the arguments last.
func ExampleSealer_Open() {
	ring, _ := mrtr.NewKeyRing(mrtr.Key{ID: "k1", Secret: []byte(strings.Repeat("s", 32))})
	sealer, _ := seal.NewSealer(ring, seal.SealerOptions{})
	args, _ := seal.ArgumentsDigest(json.RawMessage(`{"to":"bob","amount":25}`))
	token, _ := sealer.Seal(&seal.State{Binding: seal.Binding{Method: "tools/call", Target: "transfer", Arguments: args}})

	st, err := sealer.Open(token)
	if err != nil {
		fmt.Println(err)
		return
	}
	_, err = st.Check("tools/call", "transfer", "", json.RawMessage(`{ "amount": 25.0, "to": "bob" }`))
	fmt.Println("same arguments respelled:", err == nil)
	_, err = st.Check("tools/call", "transfer", "", json.RawMessage(`{"to":"bob","amount":25.000000000000000001}`))
	fmt.Println(err)
	// Output:
	// same arguments respelled: true
	// invalid requestState: it was not issued for this request (its method, target, arguments and principal must all match)
}
