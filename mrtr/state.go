package mrtr

import (
	"errors"
	"time"
)

// ErrInputRequired is wrapped by the error a handler's question returns
// when the answer is not known yet on the stateless protocol: the handler
// returns it (or any error wrapping it), and the server answers the call
// with an input_required result carrying the question and the sealed
// requestState.
var ErrInputRequired = errors.New("input required")

// DefaultStateTTL is how long a requestState stays valid when the server's
// Options.StateTTL is zero.
const DefaultStateTTL = 10 * time.Minute

// DefaultStateLeeway is the clock skew tolerated between the instance that
// seals a requestState and the one that opens it, when the server's
// Options.StateLeeway is zero: a state's issue time may be that far ahead of
// the opening instance's clock. Expiry gets no leeway.
const DefaultStateLeeway = 30 * time.Second

// DefaultMaxStateSize bounds a requestState token, in bytes, when the
// server's Options.MaxStateSize is zero.
const DefaultMaxStateSize = 64 << 10
