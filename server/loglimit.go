package server

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// The server's own log lines are rate-limited per message, because most of
// them can be caused by a peer (a refused state, an oversized answer, a
// failing handler, a slow legacy client) and a peer must not be able to
// flood the log. Each message has a bucket of logBurst lines that refills
// at one line per logRefill; a line that finds the bucket empty is dropped
// and counted, and the next line of that message that is written carries
// the count as "suppressed". Nothing here is global: each Server has its
// own buckets, on the server's clock.
const (
	logBurst  = 10
	logRefill = time.Second
	// logMessages bounds the buckets; the server's messages are
	// constants, far fewer. Past it (a user logging messages of its own
	// making through the legacy adapter) every bucket is forgotten and starts
	// full again.
	logMessages = 1024
)

// logLimiter is a slog.Handler that rate-limits records per message before
// handing them to next. Handlers derived with WithAttrs and WithGroup share
// the buckets.
type logLimiter struct {
	next    slog.Handler
	buckets *logBuckets
}

type logBuckets struct {
	now func() time.Time
	mu  sync.Mutex
	m   map[string]*logBucket
}

type logBucket struct {
	tokens     float64
	last       time.Time
	suppressed int
}

func newLogLimiter(next slog.Handler, now func() time.Time) *logLimiter {
	return &logLimiter{next: next, buckets: &logBuckets{now: now, m: make(map[string]*logBucket)}}
}

// Enabled implements slog.Handler: a level the next handler drops takes
// no token.
func (l *logLimiter) Enabled(ctx context.Context, level slog.Level) bool {
	return l.next.Enabled(ctx, level)
}

// Handle implements slog.Handler.
func (l *logLimiter) Handle(ctx context.Context, r slog.Record) error {
	ok, suppressed := l.buckets.take(r.Message)
	if !ok {
		return nil
	}
	if suppressed > 0 {
		r = r.Clone()
		r.AddAttrs(slog.Int("suppressed", suppressed))
	}
	return l.next.Handle(ctx, r)
}

// WithAttrs implements slog.Handler.
func (l *logLimiter) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &logLimiter{next: l.next.WithAttrs(attrs), buckets: l.buckets}
}

// WithGroup implements slog.Handler.
func (l *logLimiter) WithGroup(name string) slog.Handler {
	return &logLimiter{next: l.next.WithGroup(name), buckets: l.buckets}
}

// take reports whether a line of msg may be written now, and how many
// were dropped since the last one that was.
func (b *logBuckets) take(msg string) (bool, int) {
	now := b.now()
	b.mu.Lock()
	defer b.mu.Unlock()
	k, ok := b.m[msg]
	if !ok {
		if len(b.m) >= logMessages {
			clear(b.m)
		}
		k = &logBucket{tokens: logBurst, last: now}
		b.m[msg] = k
	}
	if elapsed := now.Sub(k.last); elapsed > 0 {
		k.tokens = min(logBurst, k.tokens+float64(elapsed)/float64(logRefill))
	}
	k.last = now
	if k.tokens < 1 {
		k.suppressed++
		return false, 0
	}
	k.tokens--
	n := k.suppressed
	k.suppressed = 0
	return true, n
}
