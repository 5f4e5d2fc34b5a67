package redisfleet

// The concrete stores, for the external tests of the steps they take
// beyond the interfaces Fleet returns them as.
type (
	SessionStore = sessionStore
	TaskStore    = taskStore
)
