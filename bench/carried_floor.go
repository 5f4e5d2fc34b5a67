package main

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
)

// carriedFloor is the floor of the carried scenario (carried.go): the ask
// tool (rounds.go) served by a bare net/http handler that carries its
// answers the cheapest way a server can while keeping them sealed. Its
// state is base64url(nonce ‖ AES-256-GCM(record)), the record the issued
// question's key and each recorded answer as (key, SHA-256 of its
// question, content). Per request it decodes the body with encoding/json
// (as the floor does), opens the state, replays the recorded answers in
// order (key, question digest and content compared as bytes: they were
// checked when taken) and either answers "done n" or seals the next
// question. It binds nothing else (no method, arguments, principal or
// expiry), signs nothing beyond the AEAD and validates no schema, so what
// it pays per carried answer is the bytes: the body's read and decode,
// base64url, AES-GCM and the record. Table (c2) prints its growth beside
// Baton's: the part of the growth any server carrying sealed answers pays.
type carriedFloor struct {
	aead      cipher.AEAD
	questions [][]byte            // questions[i]: question i's elicitation/create params (1-based)
	digests   [][sha256.Size]byte // SHA-256 of questions[i]
}

func newCarriedFloor() (*carriedFloor, error) {
	block, err := aes.NewCipher(benchKey)
	if err != nil {
		return nil, fmt.Errorf("carried floor: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("carried floor: %w", err)
	}
	f := &carriedFloor{aead: aead, questions: make([][]byte, maxRounds+1), digests: make([][sha256.Size]byte, maxRounds+1)}
	for i := 1; i <= maxRounds; i++ {
		f.questions[i] = []byte(`{"mode":"form","message":"Step ` + strconv.Itoa(i) +
			`?","requestedSchema":{"type":"object","properties":{"ok":{"type":"boolean"}},"required":["ok"]}}`)
		f.digests[i] = sha256.Sum256(f.questions[i])
	}
	return f, nil
}

// carriedFloorParams is what the carried floor decodes of params.
type carriedFloorParams struct {
	Arguments struct {
		N int `json:"n"`
	} `json:"arguments"`
	InputResponses map[string]struct {
		Action  string          `json:"action"`
		Content json.RawMessage `json:"content"`
	} `json:"inputResponses"`
	RequestState string `json:"requestState"`
}

var (
	carriedFloorOK   = []byte(`{"ok":true}`)
	carriedFloorMeta = []byte(`,"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"floor","version":"1.0.0"}}}}`)
	errCarriedFloor  = errors.New("carried floor: bad state")
)

// recorded is one answer of the floor's record.
type recorded struct {
	key     []byte
	digest  []byte
	content []byte
}

// open reads a state: the issued key and the recorded answers.
func (f *carriedFloor) open(state string) (issued []byte, answers []recorded, err error) {
	sealed, err := base64.RawURLEncoding.DecodeString(state)
	if err != nil || len(sealed) < f.aead.NonceSize() {
		return nil, nil, errCarriedFloor
	}
	ns := f.aead.NonceSize()
	rec, err := f.aead.Open(sealed[ns:ns], sealed[:ns], sealed[ns:], nil)
	if err != nil {
		return nil, nil, errCarriedFloor
	}
	next := func() []byte {
		n, w := binary.Uvarint(rec)
		if w <= 0 || n > uint64(len(rec)-w) {
			err = errCarriedFloor
			rec = nil
			return nil
		}
		b := rec[w : w+int(n)]
		rec = rec[w+int(n):]
		return b
	}
	issued = next()
	for len(rec) > 0 && err == nil {
		a := recorded{key: next(), digest: next(), content: next()}
		answers = append(answers, a)
	}
	return issued, answers, err
}

// seal writes a state with the issued key and the recorded answers.
func (f *carriedFloor) seal(issued string, answers []recorded) ([]byte, error) {
	rec := binary.AppendUvarint(nil, uint64(len(issued)))
	rec = append(rec, issued...)
	for _, a := range answers {
		for _, b := range [][]byte{a.key, a.digest, a.content} {
			rec = binary.AppendUvarint(rec, uint64(len(b)))
			rec = append(rec, b...)
		}
	}
	ns := f.aead.NonceSize()
	sealed := make([]byte, ns, ns+len(rec)+f.aead.Overhead())
	if _, err := rand.Read(sealed); err != nil {
		return nil, err
	}
	sealed = f.aead.Seal(sealed, sealed, rec, nil)
	return base64.RawURLEncoding.AppendEncode(nil, sealed), nil
}

// ServeHTTP serves the ask tool; anything else goes to floorHandler. The
// tool is told by its Mcp-Name header, one map lookup on every floor
// request (echo and confirm too, about 0.2% of their server CPU): telling
// it by the decoded params instead would decode the ask tool's params,
// its state among them, twice.
func (f *carriedFloor) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Mcp-Name") != askTool {
		floorHandler(w, r)
		return
	}
	var req floorRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Method != "tools/call" {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	var p carriedFloorParams
	if err := json.Unmarshal(req.Params, &p); err != nil || p.Arguments.N < 1 || p.Arguments.N > maxRounds {
		http.Error(w, "bad params", http.StatusBadRequest)
		return
	}
	var answers []recorded
	if p.RequestState != "" {
		issued, got, err := f.open(p.RequestState)
		if err != nil {
			http.Error(w, "bad state", http.StatusBadRequest)
			return
		}
		a, ok := p.InputResponses[string(issued)]
		var c struct {
			OK bool `json:"ok"`
		}
		if !ok || a.Action != "accept" || json.Unmarshal(a.Content, &c) != nil || !c.OK {
			http.Error(w, "bad answer", http.StatusBadRequest)
			return
		}
		answers = append(got, recorded{key: issued, digest: f.digests[len(got)+1][:], content: carriedFloorOK})
	}
	// Replay: answer i is question i's, in order.
	n := p.Arguments.N
	if len(answers) > n {
		http.Error(w, "bad state", http.StatusBadRequest)
		return
	}
	for i, a := range answers {
		if string(a.key) != "q"+strconv.Itoa(i+1) || !bytes.Equal(a.digest, f.digests[i+1][:]) || !bytes.Equal(a.content, carriedFloorOK) {
			http.Error(w, "bad state", http.StatusBadRequest)
			return
		}
	}
	w.Header().Set("Content-Type", "application/json")
	buf := append(make([]byte, 0, 512), `{"jsonrpc":"2.0","id":`...)
	buf = append(buf, req.ID...)
	if len(answers) == n {
		buf = append(buf, `,"result":{"resultType":"complete","content":[{"type":"text","text":"done `...)
		buf = strconv.AppendInt(buf, int64(n), 10)
		buf = append(buf, `"}]`...)
	} else {
		next := "q" + strconv.Itoa(len(answers)+1)
		state, err := f.seal(next, answers)
		if err != nil {
			http.Error(w, "seal", http.StatusInternalServerError)
			return
		}
		buf = append(buf, `,"result":{"resultType":"input_required","inputRequests":{"`...)
		buf = append(buf, next...)
		buf = append(buf, `":{"method":"elicitation/create","params":`...)
		buf = append(buf, f.questions[len(answers)+1]...)
		buf = append(buf, `}},"requestState":"`...)
		buf = append(buf, state...)
		buf = append(buf, '"')
	}
	buf = append(buf, carriedFloorMeta...)
	w.Write(buf)
}
