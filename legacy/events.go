package legacy

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Resumable streams.
//
// Every SSE event of a 2025-11-25 HTTP session's streams (the POST stream
// of a call, once it carries more than its response, and the GET stream)
// has an id, "<stream>.<position>", and is kept in an EventStore first. A
// client whose stream was cut reconnects with GET and Last-Event-ID, to
// any instance: the events after that id are sent again and, for a call's
// stream, the ones that follow until the call's response, which ends the
// stream. A pending server-to-client request is among them, and its
// answer, POSTed to any instance, reaches the call (see answers.go).
//
// A cut stream does not cancel its call (the transport says a disconnection
// is not a cancellation; notifications/cancelled is): the call goes on,
// its waits bounded by CallTimeout. If the instance holding it goes away,
// a resumed stream takes over a call that has a record (waiting.go) and
// ends, with an error response saying so, one that has none.
//
// Ids are read only in the session that asks, after the session and its
// principal are checked: an id from another session names no stream.

// EventStore keeps the events of a session's streams for a client that
// resumes. The default is a memory event store of one adapter; a Store that
// is an EventStore too (redisfleet's) is used for a fleet, so that a
// client resumes on any instance. Implementations must be safe for
// concurrent use.
type EventStore interface {
	// OpenStream starts stream of session sid with its meta.
	OpenStream(ctx context.Context, sid, stream string, meta StreamMeta) error
	// Append adds msg to the stream and returns its position, which sorts
	// after every earlier one of the stream (as Read reads them).
	Append(ctx context.Context, sid, stream string, msg []byte) (string, error)
	// EndStream marks that nothing follows on the stream.
	EndStream(ctx context.Context, sid, stream string) error
	// StreamMeta returns the meta of a stream of session sid, or
	// ErrNotFound (no such stream in that session, or it expired).
	StreamMeta(ctx context.Context, sid, stream string) (*StreamMeta, error)
	// Read returns the events of the stream after position after (""
	// for all), waiting up to wait for one when there is none, and
	// whether the stream has ended with the last of them.
	Read(ctx context.Context, sid, stream, after string, wait time.Duration) ([]Event, bool, error)
	// Beat records that instance is alive for ttl.
	Beat(ctx context.Context, instance string, ttl time.Duration) error
	// Alive reports whether instance beat within its last ttl.
	Alive(ctx context.Context, instance string) (bool, error)
}

// StreamMeta says what a stream carries.
type StreamMeta struct {
	// Instance is the instance that writes the stream.
	Instance string `json:"instance"`
	// Request is the id (JSON text) of the request whose response ends
	// the stream; empty for a GET stream.
	Request json.RawMessage `json:"request,omitempty"`
}

// Event is one kept message of a stream.
type Event struct {
	// Pos is its position in the stream.
	Pos string
	// Msg is the JSON-RPC message.
	Msg []byte
}

// DefaultEventTTL is how long the events of a stream are kept after its
// last event, for a client to resume.
const DefaultEventTTL = 10 * time.Minute

// EndedEventTTL is how long the events of a stream that ended (its
// response was sent) are kept: long enough for a client whose stream was
// cut just before the response to resume and get it.
const EndedEventTTL = time.Minute

// maxStreamEvents bounds the events kept of one stream: a resuming client
// gets the latest ones.
const maxStreamEvents = 1000

// maxMemoryStreams bounds the streams a memoryEventStore keeps; beyond it
// the one written least recently is dropped.
const maxMemoryStreams = 10000

// eventID returns the SSE id of the event at pos of stream.
func eventID(stream, pos string) string { return stream + "." + pos }

// parseEventID splits an SSE id into its stream and position; ok is false
// for an id no adapter made.
func parseEventID(id string) (stream, pos string, ok bool) {
	stream, pos, found := strings.Cut(id, ".")
	if !found || len(stream) != instanceIDLen || !base64URL(stream) || pos == "" || len(pos) > 40 {
		return "", "", false
	}
	for i := 0; i < len(pos); i++ {
		if c := pos[i]; !(c >= '0' && c <= '9' || c == '-') {
			return "", "", false
		}
	}
	return stream, pos, true
}

// memoryEventStore is an EventStore in this process's memory: the
// default, right for one instance.
type memoryEventStore struct {
	now func() time.Time
	ttl time.Duration

	mu      sync.Mutex
	streams map[streamKey]*memStream
	swept   int
	// oldest and newest end the list of the streams by the time they
	// were last written (oldest first), so a full store drops the one
	// written least recently without looking at the others.
	oldest, newest *memStream
}

// streamKey names a stream of a session in a memoryEventStore.
type streamKey struct{ sid, stream string }

type memStream struct {
	meta    StreamMeta
	events  []Event
	first   [2]Event // events' first array: a call's stream with one question and its response grows no further
	next    int64
	ended   bool
	changed chan struct{} // made by a waiting Read; closed (and dropped) at every append and the end
	touched time.Time
	key     streamKey  // in streams
	older   *memStream // the list by touched, oldest first
	newer   *memStream
	gone    bool // dropped from streams (see appendTo)
}

// wake tells the Reads waiting on s that it changed. Called with m.mu
// held.
func (s *memStream) wake() {
	if s.changed != nil {
		close(s.changed)
		s.changed = nil
	}
}

// unlink takes s out of the list by touched. Called with m.mu held.
func (m *memoryEventStore) unlink(s *memStream) {
	if s.older != nil {
		s.older.newer = s.newer
	} else if m.oldest == s {
		m.oldest = s.newer
	}
	if s.newer != nil {
		s.newer.older = s.older
	} else if m.newest == s {
		m.newest = s.older
	}
	s.older, s.newer = nil, nil
}

// touch records that s was written at now: it goes to the newest end of
// the list. Called with m.mu held.
func (m *memoryEventStore) touch(s *memStream, now time.Time) {
	s.touched = now
	if m.newest == s {
		return
	}
	m.unlink(s)
	s.older = m.newest
	if m.newest != nil {
		m.newest.newer = s
	}
	m.newest = s
	if m.oldest == nil {
		m.oldest = s
	}
}

// drop forgets s. Called with m.mu held.
func (m *memoryEventStore) drop(s *memStream) {
	m.unlink(s)
	delete(m.streams, s.key)
	s.gone = true
}

// NewMemoryEventStore returns an empty store whose streams are kept for
// ttl after their last event (0: DefaultEventTTL).
func NewMemoryEventStore(ttl time.Duration) EventStore {
	return newMemoryEventStore(ttl)
}

func newMemoryEventStore(ttl time.Duration) *memoryEventStore {
	if ttl <= 0 {
		ttl = DefaultEventTTL
	}
	return &memoryEventStore{now: time.Now, ttl: ttl, streams: make(map[streamKey]*memStream)}
}

// sweep drops the streams untouched for the ttl, when their number
// doubled since the last sweep. Called with m.mu held.
func (m *memoryEventStore) sweep(now time.Time) {
	if len(m.streams) < 2*m.swept+64 {
		return
	}
	for _, s := range m.streams {
		if m.expired(s, now) {
			m.drop(s)
		}
	}
	m.swept = len(m.streams)
}

// expired reports whether s is past its time to live.
func (m *memoryEventStore) expired(s *memStream, now time.Time) bool {
	ttl := m.ttl
	if s.ended {
		ttl = min(ttl, EndedEventTTL)
	}
	return now.Sub(s.touched) > ttl
}

// evict drops the stream written least recently, when the store is full.
// Called with m.mu held.
func (m *memoryEventStore) evict() {
	if len(m.streams) < maxMemoryStreams || m.oldest == nil {
		return
	}
	m.drop(m.oldest)
}

// get returns the stream, or nil if it is gone. Called with m.mu held.
func (m *memoryEventStore) get(sid, stream string, now time.Time) *memStream {
	s := m.streams[streamKey{sid, stream}]
	if s == nil || m.expired(s, now) {
		return nil
	}
	return s
}

// OpenStream implements EventStore.
func (m *memoryEventStore) OpenStream(ctx context.Context, sid, stream string, meta StreamMeta) error {
	now := m.now()
	m.mu.Lock()
	defer m.mu.Unlock()
	m.open(sid, stream, meta, now)
	return nil
}

// open opens a stream (see OpenStream). Called with m.mu held.
func (m *memoryEventStore) open(sid, stream string, meta StreamMeta, now time.Time) *memStream {
	m.sweep(now)
	m.evict()
	key := streamKey{sid, stream}
	if old := m.streams[key]; old != nil {
		m.drop(old)
	}
	// Room for two events in the stream itself (one allocation, not two).
	s := &memStream{meta: meta, key: key}
	s.events = s.first[:0]
	m.streams[key] = s
	m.touch(s, now)
	return s
}

// Append implements EventStore.
func (m *memoryEventStore) Append(ctx context.Context, sid, stream string, msg []byte) (string, error) {
	return m.appendKept(sid, stream, append([]byte{}, msg...), false)
}

// The ...Kept methods are the EventStore methods of the same names
// keeping msg itself rather than a copy, for a caller that never modifies
// msg once it has handed it over: a kept stream's messages (keptStream.keep).
// The copies were two allocations and about 450 bytes of every blocking
// round trip (BenchmarkLegacyElicitInProcess, issue 23).

// appendKept is Append keeping msg (see above), and with end
// AppendEndStream: the stream is then ended before msg is appended, so
// that it is touched and its waiting Reads woken once.
func (m *memoryEventStore) appendKept(sid, stream string, msg []byte, end bool) (string, error) {
	now := m.now()
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.get(sid, stream, now)
	if s == nil {
		return "", ErrNotFound
	}
	return m.appendLocked(s, msg, end, now), nil
}

// appendTo is appendKept for the stream s that openStreamAppendKept
// returned, found without a lookup in streams (two strings hashed, about
// 230 instructions of every blocking round trip; issue 23): s is the
// stream of its key as long as it is not gone, since a stream leaves
// streams only by drop, and get finds no other under its key (keys are
// not reused: streamKeys).
func (m *memoryEventStore) appendTo(s *memStream, msg []byte, end bool) (string, error) {
	now := m.now()
	m.mu.Lock()
	defer m.mu.Unlock()
	if s.gone || m.expired(s, now) {
		return "", ErrNotFound
	}
	return m.appendLocked(s, msg, end, now), nil
}

// appendLocked is the end of appendKept and appendTo. Called with m.mu
// held.
func (m *memoryEventStore) appendLocked(s *memStream, msg []byte, end bool, now time.Time) string {
	if end {
		s.ended = true
	}
	return m.append(s, msg, now)
}

// append appends msg, which s keeps as it is (the caller's copy), to s and
// returns its position. Called with m.mu held.
func (m *memoryEventStore) append(s *memStream, msg []byte, now time.Time) string {
	s.next++
	pos := strconv.FormatInt(s.next, 10)
	s.events = append(s.events, Event{Pos: pos, Msg: msg})
	if s.first[0].Msg != nil && &s.events[0] != &s.first[0] {
		s.first = [2]Event{} // moved out: let their messages go
	}
	if len(s.events) > maxStreamEvents {
		s.events = append(s.events[:0:0], s.events[len(s.events)-maxStreamEvents:]...)
	}
	m.touch(s, now)
	s.wake()
	return pos
}

// OpenStreamAppend is OpenStream then Append of msg, in one step (one
// lock and one reading of the clock): a call's stream opens with its first
// event, the elicitation/create of a blocking round trip.
func (m *memoryEventStore) OpenStreamAppend(ctx context.Context, sid, stream string, meta StreamMeta, msg []byte) (string, error) {
	pos, _ := m.openStreamAppendKept(sid, stream, meta, append([]byte{}, msg...))
	return pos, nil
}

// openStreamAppendKept is OpenStreamAppend keeping msg (see appendKept).
// It returns the stream too, for appendTo.
func (m *memoryEventStore) openStreamAppendKept(sid, stream string, meta StreamMeta, msg []byte) (string, *memStream) {
	now := m.now()
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.open(sid, stream, meta, now)
	return m.append(s, msg, now), s
}

// EndStream implements EventStore.
func (m *memoryEventStore) EndStream(ctx context.Context, sid, stream string) error {
	now := m.now()
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.get(sid, stream, now)
	if s == nil {
		return ErrNotFound
	}
	m.end(s, now)
	return nil
}

// end marks s ended. Called with m.mu held.
func (m *memoryEventStore) end(s *memStream, now time.Time) {
	if !s.ended {
		s.ended = true
		m.touch(s, now)
		s.wake()
	}
}

// AppendEndStream is Append of msg then EndStream, in one step: a call's
// response ends its stream.
func (m *memoryEventStore) AppendEndStream(ctx context.Context, sid, stream string, msg []byte) (string, error) {
	return m.appendKept(sid, stream, append([]byte{}, msg...), true)
}

// StreamMeta implements EventStore.
func (m *memoryEventStore) StreamMeta(ctx context.Context, sid, stream string) (*StreamMeta, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.get(sid, stream, m.now())
	if s == nil {
		return nil, ErrNotFound
	}
	meta := s.meta
	return &meta, nil
}

// Read implements EventStore.
func (m *memoryEventStore) Read(ctx context.Context, sid, stream, after string, wait time.Duration) ([]Event, bool, error) {
	var from int64
	if after != "" {
		n, err := strconv.ParseInt(after, 10, 64)
		if err != nil {
			return nil, false, errors.New("legacy events: not a position of this store")
		}
		from = n
	}
	timer := time.NewTimer(wait)
	defer timer.Stop()
	for {
		m.mu.Lock()
		s := m.get(sid, stream, m.now())
		if s == nil {
			m.mu.Unlock()
			return nil, false, ErrNotFound
		}
		var out []Event
		for _, e := range s.events {
			if n, _ := strconv.ParseInt(e.Pos, 10, 64); n > from {
				out = append(out, Event{Pos: e.Pos, Msg: append([]byte{}, e.Msg...)})
			}
		}
		if s.changed == nil {
			s.changed = make(chan struct{})
		}
		ended, changed := s.ended, s.changed
		m.mu.Unlock()
		if len(out) > 0 || ended || wait <= 0 {
			return out, ended, nil
		}
		select {
		case <-changed:
		case <-timer.C:
			return nil, false, nil
		case <-ctx.Done():
			return nil, false, ctx.Err()
		}
	}
}

// Beat implements EventStore: the instances of one process are alive.
func (m *memoryEventStore) Beat(ctx context.Context, instance string, ttl time.Duration) error {
	return nil
}

// Alive implements EventStore: the instances of one process are alive
// (an adapter that closes ends its streams).
func (m *memoryEventStore) Alive(ctx context.Context, instance string) (bool, error) {
	return true, nil
}

var _ EventStore = (*memoryEventStore)(nil)
