package server

import (
	"log/slog"
	"strings"
	"testing"
	"time"
)

// The limiter counts per message, shares its buckets with derived loggers,
// and spends no token on a level the next handler drops.
func TestLogLimiter(t *testing.T) {
	clock := &clockAt{t: time.Unix(1_800_000_000, 0)}
	buf := &syncBuffer{}
	log := slog.New(newLogLimiter(slog.NewTextHandler(buf, nil), clock.now)) // Info and up
	for range 3 * logBurst {
		log.Debug("noise") // disabled: takes no token
	}
	derived := log.With("component", "x")
	for i := range 2 * logBurst {
		log.Info("a")
		derived.Info("a")
		if i < 3 {
			log.Info("b")
		}
	}
	if n := strings.Count(buf.String(), "msg=a"); n != logBurst {
		t.Fatalf("%d lines of a, want %d (derived loggers share the bucket):\n%s", n, logBurst, buf.String())
	}
	if n := strings.Count(buf.String(), "msg=b"); n != 3 {
		t.Fatalf("%d lines of b, want 3: each message has its own bucket", n)
	}
	clock.advance(logRefill / 2)
	log.Info("a")
	if n := strings.Count(buf.String(), "msg=a"); n != logBurst {
		t.Fatalf("half a refill period wrote a line")
	}
	clock.advance(logRefill / 2)
	log.Info("a")
	if !strings.Contains(buf.String(), "msg=a suppressed=31") {
		t.Fatalf("the line after the pause does not count the 31 dropped:\n%s", buf.String())
	}
	log.Debug("noise")
	if strings.Contains(buf.String(), "noise") {
		t.Fatal("a disabled level was written")
	}
}
