package storetest_test

import (
	"fmt"

	"github.com/baton-mcp/baton/legacy"
	"github.com/baton-mcp/baton/server"
	"github.com/baton-mcp/baton/storetest"
)

// A new session store is checked against the contract the legacy adapter
// relies on; here the memory store stands in for yours. In a test,
// storetest.Sessions gives each check a subtest.
func ExampleCheckSessions() {
	err := storetest.CheckSessions(func() (legacy.Store, error) {
		return legacy.NewMemoryStore(nil), nil
	})
	fmt.Println("contract kept:", err == nil)
	// Output: contract kept: true
}

// A new task store is checked against the contract the server relies on;
// here the memory store stands in for yours. In a test, storetest.Tasks
// gives each check a subtest.
func ExampleCheckTasks() {
	err := storetest.CheckTasks(func() (server.TaskStore, error) {
		return server.NewMemoryTaskStore(nil), nil
	})
	fmt.Println("contract kept:", err == nil)
	// Output: contract kept: true
}
