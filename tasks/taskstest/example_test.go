package taskstest_test

import (
	"fmt"

	"github.com/baton-mcp/baton/tasks"
	"github.com/baton-mcp/baton/tasks/taskstest"
)

// A new store is checked against the contract the server relies on; here
// the memory store stands in for yours. In a test, taskstest.Run gives
// each check a subtest.
func Example() {
	err := taskstest.Test(func() (tasks.Store, error) {
		return tasks.NewMemoryStore(nil), nil
	})
	fmt.Println("contract kept:", err == nil)
	// Output: contract kept: true
}
