package round

import (
	"crypto/sha256"
	"sync"
	"sync/atomic"

	"github.com/baton-mcp/baton/mrtr"
	"github.com/baton-mcp/baton/server/internal/seal"
)

// maxDigests bounds a Digests table: questions whose text a client can
// vary (a message that quotes the arguments) must not grow it without
// bound. A full table is emptied and fills again.
const maxDigests = 4096

// Digests remembers the digest of each elicitation question by the
// elicitation's own digest, so that a question a handler asks again on
// every round is not hashed again: a handler replays its questions from
// the top, and each carried answer is matched to its question by this
// digest. Under valgrind the SHA-256 block it saves is about 3,000
// instructions per question per round. The zero value is ready to use;
// it is safe for concurrent use. A server keeps one.
type Digests struct {
	// recent is a direct-mapped cache in front of m, read without a
	// lock: a handler's questions are few and asked on every round, so
	// they stay in it. A slot keeps the first question put in it (a pair
	// is never wrong), so that questions sharing a slot do not replace
	// each other, allocating, on every request.
	recent [digestSlots]atomic.Pointer[digestPair]

	mu sync.RWMutex
	m  map[seal.Digest]seal.Digest
}

// digestSlots is the size of Digests.recent (2 KiB of pointers). A slot
// is picked by the first byte of a SHA-256 digest, and its neighbour is
// the second choice: with 64 slots and one choice, a handler asking 17
// questions shared slots often enough that about one lookup in five
// (BenchmarkCarried in bench/, 2026-12-04) went on to the locked map,
// some 250 instructions; with 256 and one choice, one in eight.
const digestSlots = 256

// digestPair is an elicitation's digest and its question's.
type digestPair struct{ ed, d seal.Digest }

// elicit returns the digest of an elicitation question whose
// elicit.Request digest is ed.
func (t *Digests) elicit(ed [32]byte) seal.Digest {
	if t == nil {
		return elicitDigest(ed)
	}
	// Two slots a question may sit in, its own and its neighbour: two
	// questions that share the first do not both go to the map.
	i := int(ed[0]) % digestSlots
	slot, other := &t.recent[i], &t.recent[i^1]
	if p := slot.Load(); p != nil && p.ed.Equal((*seal.Digest)(&ed)) {
		return p.d
	}
	if p := other.Load(); p != nil && p.ed.Equal((*seal.Digest)(&ed)) {
		return p.d
	}
	t.mu.RLock()
	d, ok := t.m[ed]
	t.mu.RUnlock()
	if !ok {
		d = elicitDigest(ed)
		t.mu.Lock()
		if t.m == nil || len(t.m) >= maxDigests {
			t.m = make(map[seal.Digest]seal.Digest, 64)
		}
		t.m[ed] = d
		t.mu.Unlock()
	}
	// A slot keeps its first question: two that share one do not evict
	// each other, allocating, on every round.
	if slot.Load() == nil {
		slot.CompareAndSwap(nil, &digestPair{ed: ed, d: d})
	} else if other.Load() == nil {
		other.CompareAndSwap(nil, &digestPair{ed: ed, d: d})
	}
	return d
}

// elicitDigest is Digest of an elicitation whose elicit.Request digest is
// ed.
func elicitDigest(ed [32]byte) seal.Digest {
	var buf [64]byte
	b := append(buf[:0], mrtr.MethodElicit...)
	b = append(b, 0)
	b = append(b, ed[:]...)
	return sha256.Sum256(b)
}
