package round

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/baton-mcp/baton/elicit"
	"github.com/baton-mcp/baton/mcp"
	"github.com/baton-mcp/baton/mrtr"
	"github.com/baton-mcp/baton/server/internal/seal"
)

// The tests ask through these, as server.Call does: a question with a key
// of its own (position 0, which only questions without a key use), or a
// question without one at pos (AutoKey).

func elicitQ(r *Round, key string, req *elicit.Request) (*elicit.Result, error) {
	if req == nil {
		return nil, errors.New("elicit: nil request")
	}
	var res *elicit.Result
	_, err := r.Ask(0, key, mrtr.ElicitRequest(req), plain(func(raw json.RawMessage) error {
		var err error
		res, err = req.CheckResult(raw)
		return err
	}))
	return res, err
}

func sampleQ(r *Round, key string, p *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
	var res *mcp.CreateMessageResult
	_, err := r.Ask(0, key, mrtr.SampleRequest(p), plain(func(raw json.RawMessage) error {
		var err error
		res, err = mcp.ParseCreateMessageResult(raw)
		return err
	}))
	return res, err
}

func rootsQ(r *Round, key string) (*mcp.ListRootsResult, error) {
	var res *mcp.ListRootsResult
	_, err := r.Ask(0, key, mrtr.RootsRequest(), plain(func(raw json.RawMessage) error {
		var err error
		res, err = mcp.ParseListRootsResult(raw)
		return err
	}))
	return res, err
}

func askQ(r *Round, key string, req mrtr.InputRequest) (json.RawMessage, error) {
	return r.Ask(0, key, req, func(json.RawMessage, bool) (json.RawMessage, error) { return nil, nil })
}

func replayQ(r *Round, pos int, req mrtr.InputRequest, check func(json.RawMessage) error) (json.RawMessage, error) {
	return r.Ask(pos, AutoKey(pos), req, plain(check))
}

// plain is a Check that records answers as sent and checks every answer,
// recorded or not, with check.
func plain(check func(json.RawMessage) error) Check {
	return func(raw json.RawMessage, _ bool) (json.RawMessage, error) { return nil, check(raw) }
}

func requireQ(r *Round, key string, req mrtr.InputRequest) error { return r.Require(key, req) }

func testSealer(t testing.TB, opts seal.SealerOptions) *seal.Sealer {
	t.Helper()
	ring, err := mrtr.NewKeyRing(mrtr.Key{ID: "k1", Secret: []byte(strings.Repeat("a", mrtr.MinKeySize))})
	if err != nil {
		t.Fatal(err)
	}
	s, err := seal.NewSealer(ring, opts)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func testBinding(t testing.TB) seal.Binding {
	t.Helper()
	d, err := seal.ArgumentsDigest(json.RawMessage(`{"to":"bob","amount":25}`))
	if err != nil {
		t.Fatal(err)
	}
	return seal.Binding{Method: "tools/call", Target: "confirm_transfer", Arguments: d, Principal: "alice"}
}

// openBound opens tok and checks it against b, as a server does.
func openBound(s *seal.Sealer, tok string, b seal.Binding) (*seal.State, error) {
	st, err := s.Open(tok)
	if err != nil {
		return nil, err
	}
	if _, err := st.Check(b.Method, b.Target, b.Principal, json.RawMessage(`{"to":"bob","amount":25}`)); err != nil {
		return nil, err
	}
	return st, nil
}
