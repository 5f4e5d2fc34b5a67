package legacy

import (
	"testing"
	"time"
)

// A timer that comes back from the pool is as good as new: one that fired
// and was read, or was stopped before it fired, delivers nothing stale
// and fires again after its new duration.
func TestTimerPoolReuse(t *testing.T) {
	var tp timerPool
	a := tp.get(time.Nanosecond)
	<-a.C
	tp.put(a)
	b := tp.get(time.Hour)
	select {
	case v := <-b.C:
		t.Fatalf("a timer from the pool delivered %v", v)
	default:
	}
	tp.put(b)
	c := tp.get(time.Nanosecond)
	<-c.C // fires
	tp.put(c)
}
