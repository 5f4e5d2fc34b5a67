package legacy

import "context"

// An EventStore (or a Store) may also implement these, each two of its
// steps in one (one round trip to a shared store instead of two);
// redisfleet's does. A stream's first event is kept as it is opened, a
// call's response as its stream ends, and an answer kept for a call on
// another instance wakes that instance in the same step.
type (
	// streamOpenAppender: OpenStream then Append of msg, in one step.
	streamOpenAppender interface {
		OpenStreamAppend(ctx context.Context, sid, stream string, meta StreamMeta, msg []byte) (string, error)
	}
	// streamAppendEnder: Append of msg then EndStream, in one step.
	streamAppendEnder interface {
		AppendEndStream(ctx context.Context, sid, stream string, msg []byte) (string, error)
	}
	// answerWaker: Store.Answer, then, once the answer is kept,
	// Store.Publish of wake to instance (best effort, as Publish is), in
	// one step. Its errors are Answer's.
	answerWaker interface {
		AnswerWake(ctx context.Context, sid, key string, answer []byte, instance string, wake []byte) error
	}
	// answerTaker: Store.Answers that also lets go of the requests whose
	// answers it returns (later answers for them are refused, as after
	// Unpark), so that their calls need no Unpark. The answers stay
	// readable a while, so a take whose reply was lost loses none.
	answerTaker interface {
		TakeAnswers(ctx context.Context, keys []string) (map[string][]byte, error)
	}
)
