// Package storetest checks that a store keeps the contract Baton relies on,
// as testing/fstest checks an fs.FS: a 2025-11-25 session store
// (legacy.Store: Sessions, CheckSessions), its event store
// (legacy.EventStore: Events) and a task store (server.TaskStore: Tasks,
// CheckTasks). Every store's tests run it (the memory stores' in packages
// legacy and server, the Redis stores' in package redisfleet), so the
// stores behave the same; run it on yours:
//
//	func TestStore(t *testing.T) {
//		storetest.Sessions(t, func(t *testing.T) legacy.Store { return newMyStore(t) })
//	}
//
// Sessions, Events and Tasks give each check its own subtest and its own
// empty store; CheckSessions and CheckTasks run the same checks without a
// *testing.T and return what failed. SessionRecord and TaskRecord make the
// records the checks store, for a store's own tests.
package storetest
