package legacy

import "context"

// An EventStore may also implement either of these, each two of its
// steps in one (one round trip to a shared store instead of two);
// redisfleet's does. A stream's first event is kept as it is opened, and
// a call's response as its stream ends.
type (
	// streamOpenAppender: OpenStream then Append of msg, in one step.
	streamOpenAppender interface {
		OpenStreamAppend(ctx context.Context, sid, stream string, meta StreamMeta, msg []byte) (string, error)
	}
	// streamAppendEnder: Append of msg then EndStream, in one step.
	streamAppendEnder interface {
		AppendEndStream(ctx context.Context, sid, stream string, msg []byte) (string, error)
	}
)
