package mrtr

import (
	"errors"
)

// ErrInputRequired is wrapped by the error a handler's question returns
// when the answer is not known yet on the stateless protocol: the handler
// returns it (or any error wrapping it), and the server answers the call
// with an input_required result carrying the question and the sealed
// requestState.
var ErrInputRequired = errors.New("input required")
