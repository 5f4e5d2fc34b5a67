package seal

import (
	"crypto/rand"

	"encoding/hex"
	"errors"
	"fmt"
	"strings"
)

// FlowID identifies one multi round-trip flow: every state the flow's
// rounds issue carries the id its first round drew.
type FlowID [16]byte

// IsZero reports an unset id.
func (id FlowID) IsZero() bool { return id == FlowID{} }

// String is the id in lowercase hex.
func (id FlowID) String() string { return hex.EncodeToString(id[:]) }

// SpanRef is a span's context as W3C Trace Context carries it: trace id,
// span id and trace flags.
type SpanRef struct {
	TraceID [16]byte
	SpanID  [8]byte
	Flags   byte
}

// Valid reports whether both ids are set.
func (r SpanRef) Valid() bool { return r.TraceID != [16]byte{} && r.SpanID != [8]byte{} }

// Flow is what a state carries to follow its flow: the flow's id, and the
// spans of its first round and of the round that issued the state (each
// zero when that round was not traced).
type Flow struct {
	ID          FlowID
	First, Prev SpanRef
}

// NewFlowID draws a random flow id.
func NewFlowID() (FlowID, error) {
	var id FlowID
	if _, err := rand.Read(id[:]); err != nil {
		return id, fmt.Errorf("flow id: %w", err)
	}
	return id, nil
}

// The flow section of the binary record is optional and follows the
// answers: flowTag, [16]byte id, a mask byte (1: first, 2: prev), then 25
// bytes (trace id, span id, flags) for each span the mask names. A state
// without it (sealed before flows existed) opens with a zero Flow.
const (
	flowTag   = 0x01
	spanBytes = 16 + 8 + 1
)

func appendFlow(dst []byte, f Flow) []byte {
	if f.ID.IsZero() {
		return dst
	}
	dst = append(dst, flowTag)
	dst = append(dst, f.ID[:]...)
	var mask byte
	if f.First.Valid() {
		mask |= 1
	}
	if f.Prev.Valid() {
		mask |= 2
	}
	dst = append(dst, mask)
	for i, r := range [2]SpanRef{f.First, f.Prev} {
		if mask&(1<<i) != 0 {
			dst = append(dst, r.TraceID[:]...)
			dst = append(dst, r.SpanID[:]...)
			dst = append(dst, r.Flags)
		}
	}
	return dst
}

// readFlow reads the optional flow section; it consumes r.b.
func (r *binReader) flow() (f Flow) {
	if r.err != nil || len(r.b) == 0 {
		return f
	}
	if r.b[0] != flowTag || len(r.b) < 1+len(f.ID)+1 {
		r.err = errors.New("malformed flow section")
		return f
	}
	copy(f.ID[:], r.b[1:])
	mask := r.b[1+len(f.ID)]
	b := r.b[2+len(f.ID):]
	if f.ID.IsZero() || mask&^3 != 0 {
		r.err = errors.New("malformed flow section")
		return f
	}
	for i, dst := range [2]*SpanRef{&f.First, &f.Prev} {
		if mask&(1<<i) == 0 {
			continue
		}
		if len(b) < spanBytes {
			r.err = errTruncated
			return f
		}
		copy(dst.TraceID[:], b)
		copy(dst.SpanID[:], b[16:])
		dst.Flags = b[24]
		b = b[spanBytes:]
		if !dst.Valid() {
			r.err = errors.New("malformed flow span")
			return f
		}
	}
	r.b = b
	return f
}

// flowWire is the flow in the plaintext (JSON) body: the id in hex and
// each span as a traceparent value.
type flowWire struct {
	ID    string `json:"id"`
	First string `json:"first,omitempty"`
	Prev  string `json:"prev,omitempty"`
}

func (f Flow) wire() *flowWire {
	if f.ID.IsZero() {
		return nil
	}
	return &flowWire{ID: f.ID.String(), First: f.First.traceparent(), Prev: f.Prev.traceparent()}
}

func (w *flowWire) into(f *Flow) error {
	if w == nil {
		return nil
	}
	b, err := hex.DecodeString(w.ID)
	if err != nil || len(b) != len(f.ID) {
		return errors.New("malformed flow id")
	}
	copy(f.ID[:], b)
	for _, p := range [2]struct {
		s   string
		dst *SpanRef
	}{{w.First, &f.First}, {w.Prev, &f.Prev}} {
		if p.s == "" {
			continue
		}
		r, ok := parseTraceparent(p.s)
		if !ok {
			return errors.New("malformed flow span")
		}
		*p.dst = r
	}
	return nil
}

// traceparent formats r as a version-00 traceparent, "" when invalid.
func (r SpanRef) traceparent() string {
	if !r.Valid() {
		return ""
	}
	return "00-" + hex.EncodeToString(r.TraceID[:]) + "-" + hex.EncodeToString(r.SpanID[:]) + "-" + hex.EncodeToString([]byte{r.Flags})
}

func parseTraceparent(s string) (SpanRef, bool) {
	var r SpanRef
	parts := strings.Split(s, "-")
	if len(parts) != 4 || parts[0] != "00" {
		return r, false
	}
	t, e1 := hex.DecodeString(parts[1])
	sp, e2 := hex.DecodeString(parts[2])
	fl, e3 := hex.DecodeString(parts[3])
	if e1 != nil || e2 != nil || e3 != nil || len(t) != 16 || len(sp) != 8 || len(fl) != 1 {
		return r, false
	}
	copy(r.TraceID[:], t)
	copy(r.SpanID[:], sp)
	r.Flags = fl[0]
	return r, r.Valid()
}

// RefusalKind sorts a refused state's error into a few words, for
// counting refusals by reason: expired, future, malformed, signature,
// unknown_key, audience, too_large, undecryptable, mismatch, or other.
func RefusalKind(err error) string {
	var se *StateError
	if !errors.As(err, &se) {
		return "other"
	}
	r := se.Reason
	switch {
	case r == "expired":
		return "expired"
	case r == notThisRequest:
		return "mismatch"
	case strings.HasPrefix(r, "issued in the future"):
		return "future"
	case strings.HasPrefix(r, "issued for another audience"):
		return "audience"
	case strings.HasPrefix(r, "signature does not verify"), r == "does not verify":
		return "signature"
	case strings.HasPrefix(r, "cannot be verified"):
		return "unknown_key"
	case strings.HasPrefix(r, "token is "):
		return "too_large"
	case strings.HasPrefix(r, "encrypted content does not decrypt"):
		return "undecryptable"
	case strings.HasPrefix(r, "malformed"), strings.HasPrefix(r, "a required claim"):
		return "malformed"
	}
	return "other"
}
