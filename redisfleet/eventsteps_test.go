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

// OpenStreamAppend and AppendEndStream leave a stream as OpenStream then
// Append, and Append then EndStream, would.
func TestEventSteps(t *testing.T) {
	rs := testredis.Start(t)
	checkEventSteps(t, rs.Client(t))
}

func TestEventStepsOnCluster(t *testing.T) {
	rc := testredis.StartCluster(t)
	checkEventSteps(t, rc.ClusterClient(t))
}

func checkEventSteps(t *testing.T, rdb redis.UniversalClient) {
	ctx := context.Background()
	s := redisfleet.New(rdb, redisfleet.Options{Prefix: "steps:"}).Sessions().(*redisfleet.SessionStore)
	meta := legacy.StreamMeta{Instance: "i1", Request: []byte(`7`)}
	p1, err := s.OpenStreamAppend(ctx, "sid", "st", meta, []byte(`{"first":1}`))
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.StreamMeta(ctx, "sid", "st")
	if err != nil || got.Instance != "i1" || string(got.Request) != "7" {
		t.Fatalf("StreamMeta = %+v, %v", got, err)
	}
	p2, err := s.Append(ctx, "sid", "st", []byte(`{"second":2}`))
	if err != nil {
		t.Fatal(err)
	}
	p3, err := s.AppendEndStream(ctx, "sid", "st", []byte(`{"last":3}`))
	if err != nil {
		t.Fatal(err)
	}
	evs, ended, err := s.Read(ctx, "sid", "st", "", 0)
	if err != nil || !ended || len(evs) != 3 {
		t.Fatalf("Read = %v, ended %v, %v; want 3 events and the end", evs, ended, err)
	}
	for i, want := range []struct{ pos, msg string }{{p1, `{"first":1}`}, {p2, `{"second":2}`}, {p3, `{"last":3}`}} {
		if evs[i].Pos != want.pos || string(evs[i].Msg) != want.msg {
			t.Errorf("event %d = %s %s, want %s %s", i, evs[i].Pos, evs[i].Msg, want.pos, want.msg)
		}
	}
	evs, ended, err = s.Read(ctx, "sid", "st", p2, 0)
	if err != nil || !ended || len(evs) != 1 || evs[0].Pos != p3 {
		t.Fatalf("Read after %s = %v, ended %v, %v", p2, evs, ended, err)
	}
	if _, err := s.AppendEndStream(ctx, "sid", "gone", []byte(`{}`)); !errors.Is(err, legacy.ErrNotFound) {
		t.Fatalf("AppendEndStream on no stream: %v, want ErrNotFound", err)
	}
	if _, _, err := s.Read(ctx, "sid", "gone", "", 0); !errors.Is(err, legacy.ErrNotFound) {
		t.Fatalf("AppendEndStream made a stream: %v", err)
	}
}

// AnswerWake keeps an answer and wakes the instance holding its call, on
// one Redis server (one script) and on Redis Cluster (two steps); an
// answer nobody waits for is refused and wakes nobody.
func TestAnswerWake(t *testing.T) {
	rs := testredis.Start(t)
	checkAnswerWake(t, rs.Client(t))
}

func TestAnswerWakeOnCluster(t *testing.T) {
	rc := testredis.StartCluster(t)
	checkAnswerWake(t, rc.ClusterClient(t))
}

func checkAnswerWake(t *testing.T, rdb redis.UniversalClient) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s := redisfleet.New(rdb, redisfleet.Options{Prefix: "wake:"}).Sessions().(*redisfleet.SessionStore)
	got := make(chan string, 16)
	go func() { _ = s.Receive(ctx, "holder", func(msg []byte) { got <- string(msg) }) }()
	if err := s.Park(ctx, "sid", "k1", time.Minute); err != nil {
		t.Fatal(err)
	}
	// The subscription may take a moment: answer other parked keys until
	// a wake-up arrives, then the one under test.
	deadline := time.Now().Add(10 * time.Second)
	for i := 0; ; i++ {
		k := fmt.Sprintf("warm%d", i)
		if err := s.Park(ctx, "sid", k, time.Minute); err != nil {
			t.Fatal(err)
		}
		if err := s.AnswerWake(ctx, "sid", k, []byte(`{}`), "holder", []byte("wake "+k)); err != nil {
			t.Fatal(err)
		}
		select {
		case <-got:
		case <-time.After(100 * time.Millisecond):
			if time.Now().After(deadline) {
				t.Fatal("no wake-up arrived")
			}
			continue
		}
		break
	}
	drain := func() {
		for {
			select {
			case <-got:
			case <-time.After(200 * time.Millisecond):
				return
			}
		}
	}
	drain()
	if err := s.AnswerWake(ctx, "sid", "k1", []byte(`{"result":1}`), "holder", []byte("wake k1")); err != nil {
		t.Fatal(err)
	}
	select {
	case m := <-got:
		if m != "wake k1" {
			t.Fatalf("wake-up %q, want %q", m, "wake k1")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no wake-up for the kept answer")
	}
	if a, err := s.Answers(ctx, []string{"k1"}); err != nil || string(a["k1"]) != `{"result":1}` {
		t.Fatalf("Answers = %q, %v", a, err)
	}
	for _, c := range []struct{ sid, key string }{{"sid", "k1"}, {"other", "k2"}, {"sid", "never-parked"}} {
		if c.key == "k2" {
			if err := s.Park(ctx, "sid", "k2", time.Minute); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.AnswerWake(ctx, c.sid, c.key, []byte(`{}`), "holder", []byte("wake refused")); !errors.Is(err, legacy.ErrNotWaiting) {
			t.Errorf("AnswerWake(%s, %s) = %v, want ErrNotWaiting", c.sid, c.key, err)
		}
	}
	select {
	case m := <-got:
		t.Fatalf("a refused answer woke the holder: %q", m)
	case <-time.After(300 * time.Millisecond):
	}
}
