package legacytest_test

import (
	"fmt"

	"github.com/baton-mcp/baton/legacy"
	"github.com/baton-mcp/baton/legacy/legacytest"
)

// A new session store is checked against the contract the legacy Handler
// relies on; here the memory store stands in for yours. In a test,
// legacytest.Run gives each check a subtest.
func Example() {
	err := legacytest.Test(func() (legacy.Store, error) {
		return legacy.NewMemoryStore(nil), nil
	})
	fmt.Println("contract kept:", err == nil)
	// Output: contract kept: true
}
