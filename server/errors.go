package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io/fs"
	"net"
	"os"
	"syscall"
)

// Internal marks err as internal: the client sees a generic message and
// the server log the whole of err. Internal(nil) is nil.
//
// What a client may read of a handler's error: it is shown to the client (for a tool, as the text of an
// isError result the model reads; for a prompt, resource or completion, as
// the message of a -32603 error) unless it is internal. An error is
// internal when anything in its chain (errors.Unwrap, errors.Join) is
//
//   - a net.Error: a failed dial, read, write or DNS lookup (*net.OpError,
//     *net.DNSError, *url.Error), which names hosts and addresses;
//   - context.DeadlineExceeded or context.Canceled, from a call the handler
//     made (a cancelled request itself is not answered at all);
//   - an operating system error: *fs.PathError, *os.SyscallError,
//     syscall.Errno, which name files and system calls;
//   - an error with an Internal() bool method that returns true: Internal
//     marks one, and every failure of a ledger reached through
//     Call.Redeem, or of redisfleet's Fleet.Ledger, has one.
//
// An internal error reaches the client as "Internal error (ref …): details
// are in the server log"; the log line (level ERROR) carries the same
// reference and the whole error. So a plain error a handler returns on
// purpose (errors.New("no such account"), fmt.Errorf("amount %v is over
// your limit", x)) still reaches the model, while one that wraps an
// infrastructure failure ("redis ledger: dial tcp 10.0.0.7:6379: connect:
// connection refused") does not. A handler that wants an internal failure
// explained anyway says it in its own words: ErrorResult("The payment
// service is unreachable; try again in a minute") for a tool, or a
// *mcp.Error for any handler, both sent as they are.
func Internal(err error) error {
	if err == nil {
		return nil
	}
	return &internalError{err}
}

type internalError struct{ err error }

func (e *internalError) Error() string  { return e.err.Error() }
func (e *internalError) Unwrap() error  { return e.err }
func (e *internalError) Internal() bool { return true }

// isInternal applies the rule above.
func isInternal(err error) bool {
	var marked interface{ Internal() bool }
	if errors.As(err, &marked) && marked.Internal() {
		return true
	}
	var (
		ne    net.Error
		pe    *fs.PathError
		se    *os.SyscallError
		errno syscall.Errno
	)
	return errors.As(err, &ne) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) ||
		errors.As(err, &pe) || errors.As(err, &se) || errors.As(err, &errno)
}

// clientText returns what the client is told of a handler's error: its
// text, or for an internal error a generic message with a reference to the
// log line that has the detail. what names the handler ("tool x").
func (s *Server) clientText(what string, err error) string {
	if !isInternal(err) {
		return err.Error()
	}
	return s.internalText(what, err)
}

// internalText logs err under a fresh reference and returns the generic
// message that names it.
func (s *Server) internalText(what string, err error) string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	ref := hex.EncodeToString(b[:])
	s.log.Error("handler failed with an internal error; the client was told only the reference", "handler", what, "ref", ref, "err", err)
	return "Internal error (ref " + ref + "): details are in the server log"
}
