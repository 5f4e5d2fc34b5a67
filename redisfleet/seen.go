package redisfleet

import "sync"

// seenRecords remembers, per task id, the bytes of the record a taskStore
// last read or wrote, so that an update can go straight to its
// compare-and-set script without reading the record first: the script
// writes only if the stored record is still those bytes, so a stale entry
// (another instance wrote since) costs a retry on a fresh read, never a
// lost update. Only a write is decided on remembered bytes: an update that
// would write nothing or fail is decided again on a fresh read.
//
// It holds at most maxSeen records of at most maxSeenBytes each; a full
// table forgets an arbitrary entry.
type seenRecords struct {
	mu sync.Mutex
	m  map[string][]byte
}

const (
	maxSeen      = 512
	maxSeenBytes = 32 << 10
)

func (c *seenRecords) get(id string) []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.m[id]
}

func (c *seenRecords) put(id string, b []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(b) > maxSeenBytes {
		delete(c.m, id)
		return
	}
	if c.m == nil {
		c.m = make(map[string][]byte)
	}
	if _, ok := c.m[id]; !ok && len(c.m) >= maxSeen {
		for k := range c.m {
			delete(c.m, k)
			break
		}
	}
	c.m[id] = b
}

func (c *seenRecords) drop(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.m, id)
}
