package redisfleet_test

import (
	"context"
	"errors"
	"testing"

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
	s := redisfleet.New(rdb, redisfleet.Options{Prefix: "steps:"}).Sessions()
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
