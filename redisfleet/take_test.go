package redisfleet_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/baton-mcp/baton/internal/testredis"
	"github.com/baton-mcp/baton/legacy"
	"github.com/baton-mcp/baton/redisfleet"
)

// TakeAnswers returns the kept answers and lets go of their parks in one
// round trip: later answers for them are refused, the answers stay
// readable a while (a take whose reply was lost loses nothing), and a
// request not answered yet stays parked as it was. On one Redis server,
// with its scripts flushed first (a fresh Redis), and on Redis Cluster,
// with keys on every master.
func TestTakeAnswers(t *testing.T) {
	t.Run("server", func(t *testing.T) {
		rdb := testredis.Start(t).Client(t)
		if err := rdb.ScriptFlush(context.Background()).Err(); err != nil {
			t.Fatal(err)
		}
		testTakeAnswers(t, rdb)
	})
	t.Run("cluster", func(t *testing.T) {
		testTakeAnswers(t, testredis.StartCluster(t).ClusterClient(t))
	})
}

func testTakeAnswers(t *testing.T, rdb redis.UniversalClient) {
	ctx := context.Background()
	s := redisfleet.New(rdb, redisfleet.Options{Prefix: "take:"}).Sessions().(*redisfleet.SessionStore)
	var answered, waiting []string
	for i := range 12 {
		k := fmt.Sprintf("req-%d", i)
		if err := s.Park(ctx, "sid", k, time.Hour); err != nil {
			t.Fatal(err)
		}
		if i%2 == 0 {
			if err := s.Answer(ctx, "sid", k, []byte(`{"result":"`+k+`"}`)); err != nil {
				t.Fatal(err)
			}
			answered = append(answered, k)
		} else {
			waiting = append(waiting, k)
		}
	}
	all := append(append([]string{}, answered...), waiting...)
	if cc, ok := rdb.(*redis.ClusterClient); ok {
		masters := map[string]bool{}
		for _, k := range answered {
			n, err := cc.MasterForKey(ctx, "take:sessions:call:{"+k+"}")
			if err != nil {
				t.Fatal(err)
			}
			masters[n.Options().Addr] = true
		}
		if len(masters) != 3 {
			t.Fatalf("the answered keys are on %d masters, want 3 (the pipeline must cross nodes)", len(masters))
		}
	}
	for round := range 2 { // the second take finds the same answers
		got, err := s.TakeAnswers(ctx, all)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(answered) {
			t.Fatalf("take %d: %d answers, want %d: %q", round, len(got), len(answered), got)
		}
		for _, k := range answered {
			if string(got[k]) != `{"result":"`+k+`"}` {
				t.Errorf("take %d: answer of %s = %q", round, k, got[k])
			}
		}
	}
	for _, k := range answered {
		if err := s.Answer(ctx, "sid", k, []byte(`{"result":"again"}`)); !errors.Is(err, legacy.ErrNotWaiting) {
			t.Errorf("an answer for %s after it was taken: %v, want ErrNotWaiting", k, err)
		}
		if ttl, err := rdb.PTTL(ctx, "take:sessions:call:{"+k+"}").Result(); err != nil || ttl <= 0 || ttl > time.Minute {
			t.Errorf("the park of %s, taken, lives %v more (%v), want at most a minute", k, ttl, err)
		}
	}
	for _, k := range waiting {
		if ttl, err := rdb.PTTL(ctx, "take:sessions:call:{"+k+"}").Result(); err != nil || ttl < 50*time.Minute {
			t.Errorf("the park of %s, not answered, lives %v more (%v), want its hour", k, ttl, err)
		}
		if err := s.Answer(ctx, "sid", k, []byte(`{}`)); err != nil {
			t.Errorf("an answer for %s, still waiting: %v", k, err)
		}
	}
	// A park with less time left than takenTTL keeps its own.
	if err := s.Park(ctx, "sid", "short", 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if err := s.Answer(ctx, "sid", "short", []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	if got, err := s.TakeAnswers(ctx, []string{"short"}); err != nil || len(got) != 1 {
		t.Fatalf("TakeAnswers(short) = %q, %v", got, err)
	}
	if ttl, err := rdb.PTTL(ctx, "take:sessions:call:{short}").Result(); err != nil || ttl <= 0 || ttl > 5*time.Second {
		t.Errorf("a short park, taken, lives %v more (%v), want at most its 5 s", ttl, err)
	}
	if got, err := s.TakeAnswers(ctx, nil); err != nil || len(got) != 0 {
		t.Errorf("TakeAnswers(nil) = %v, %v", got, err)
	}
}
