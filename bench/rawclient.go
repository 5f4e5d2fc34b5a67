package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strconv"
	"time"
)

// rawClient is the load generator's cheap client: one keep-alive TCP
// connection per worker, requests written whole with one write, responses
// read with a minimal HTTP/1.1 reader (status line, headers,
// Content-Length or chunked body). It exists because net/http's client
// cost the generator about as much CPU per request as the servers under
// test spend (see bench/notes/how-it-works.md, "Measuring fairly"); the bench's
// correctness tests keep using net/http (client in load.go).
//
// Every response is checked cheaply (status 200, the request's id, the
// result's type and text, the state present); every fullEvery-th one is
// also decoded whole with encoding/json and checked like the net/http
// client does (check in load.go).
type rawClient struct {
	addr, host, path string
	conn             net.Conn
	br               *bufio.Reader
	out              []byte // the request being written
	body             []byte // the last response body
	id               int
	n                int // responses read (for fullEvery)
	fullEvery        int
	headers          map[string][]byte // per tool: the request head up to Content-Length
	timeout          time.Duration
}

func newRawClient(rawURL string, fullEvery int) (*rawClient, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, err
	}
	c := &rawClient{addr: u.Host, host: u.Host, path: u.Path, fullEvery: max(fullEvery, 1),
		headers: map[string][]byte{}, timeout: 30 * time.Second}
	authz := ""
	if tok := bearerOf(u); tok != "" { // baton-auth (variants.go)
		authz = "\r\nAuthorization: Bearer " + tok
	}
	for _, tool := range []string{"echo", "confirm", askTool} {
		c.headers[tool] = []byte("POST " + c.path + " HTTP/1.1\r\nHost: " + c.host + authz +
			"\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream" +
			"\r\nMcp-Protocol-Version: " + protocolVersion + "\r\nMcp-Method: tools/call\r\nMcp-Name: " + tool +
			"\r\nContent-Length: ")
	}
	return c, nil
}

func (c *rawClient) close() {
	if c.conn != nil {
		c.conn.Close()
		c.conn = nil
	}
}

// call sends one tools/call of tool with params (the members before
// _meta, each followed by a comma) and reads the answer into c.body.
func (c *rawClient) call(tool, params string) error {
	c.id++
	if c.conn == nil {
		conn, err := net.DialTimeout("tcp", c.addr, c.timeout)
		if err != nil {
			return err
		}
		c.conn, c.br = conn, bufio.NewReaderSize(conn, 16<<10)
	}
	head := c.headers[tool]
	bodyLen := len(`{"jsonrpc":"2.0","id":`) + len(strconv.Itoa(c.id)) + len(`,"method":"tools/call","params":{"name":"`) +
		len(tool) + len(`",`) + len(params) + len(metaJSON) + len(`}}`)
	b := append(c.out[:0], head...)
	b = strconv.AppendInt(b, int64(bodyLen), 10)
	b = append(b, "\r\n\r\n"...)
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = strconv.AppendInt(b, int64(c.id), 10)
	b = append(b, `,"method":"tools/call","params":{"name":"`...)
	b = append(b, tool...)
	b = append(b, `",`...)
	b = append(b, params...)
	b = append(b, metaJSON...)
	b = append(b, `}}`...)
	c.out = b
	c.conn.SetDeadline(time.Now().Add(c.timeout))
	if _, err := c.conn.Write(b); err != nil {
		c.close()
		return err
	}
	status, closeAfter, err := c.readResponse()
	if err != nil {
		c.close()
		return err
	}
	if closeAfter {
		c.close()
	}
	if status != 200 {
		return fmt.Errorf("%s: status %d: %.300s", tool, status, c.body)
	}
	return nil
}

var errMalformed = errors.New("malformed HTTP response")

// readResponse reads one response: its status, whether the server closes
// the connection after it, and its body (into c.body).
func (c *rawClient) readResponse() (status int, closeAfter bool, err error) {
	line, err := c.br.ReadSlice('\n')
	if err != nil {
		return 0, false, err
	}
	if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.1 ")) {
		return 0, false, fmt.Errorf("%w: status line %q", errMalformed, line)
	}
	status, err = strconv.Atoi(string(line[9:12]))
	if err != nil {
		return 0, false, fmt.Errorf("%w: status line %q", errMalformed, line)
	}
	length, chunked := -1, false
	for {
		line, err = c.br.ReadSlice('\n')
		if err != nil {
			return 0, false, err
		}
		line = bytes.TrimRight(line, "\r\n")
		if len(line) == 0 {
			break
		}
		name, value, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			return 0, false, fmt.Errorf("%w: header %q", errMalformed, line)
		}
		value = bytes.TrimSpace(value)
		switch {
		case asciiEqualFold(name, "Content-Length"):
			if length, err = strconv.Atoi(string(value)); err != nil || length < 0 {
				return 0, false, fmt.Errorf("%w: Content-Length %q", errMalformed, value)
			}
		case asciiEqualFold(name, "Transfer-Encoding"):
			chunked = asciiEqualFold(value, "chunked")
		case asciiEqualFold(name, "Connection"):
			closeAfter = asciiEqualFold(value, "close")
		}
	}
	c.body = c.body[:0]
	switch {
	case chunked:
		for {
			line, err = c.br.ReadSlice('\n')
			if err != nil {
				return 0, false, err
			}
			size, err := strconv.ParseUint(string(bytes.TrimRight(line, "\r\n")), 16, 31)
			if err != nil {
				return 0, false, fmt.Errorf("%w: chunk size %q", errMalformed, line)
			}
			if size == 0 {
				if _, err := c.br.Discard(2); err != nil { // no trailers from these servers
					return 0, false, err
				}
				break
			}
			if c.body, err = readN(c.br, c.body, int(size)); err != nil {
				return 0, false, err
			}
			if _, err := c.br.Discard(2); err != nil {
				return 0, false, err
			}
		}
	case length >= 0:
		if c.body, err = readN(c.br, c.body, length); err != nil {
			return 0, false, err
		}
	default:
		return 0, false, fmt.Errorf("%w: no Content-Length and not chunked", errMalformed)
	}
	return status, closeAfter, nil
}

func readN(r io.Reader, b []byte, n int) ([]byte, error) {
	start := len(b)
	b = append(b, make([]byte, n)...)
	_, err := io.ReadFull(r, b[start:])
	return b, err
}

func asciiEqualFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := range len(b) {
		x, y := b[i], s[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// full reports whether this response is one to decode whole.
func (c *rawClient) full() bool {
	c.n++
	return c.n%c.fullEvery == 0
}

// checkCheap checks the body of the last response for the request's id
// and the given substrings (each a literal the servers write without
// spaces: all of them do).
func (c *rawClient) checkCheap(tool string, want ...string) error {
	id := `"id":` + strconv.Itoa(c.id)
	i := bytes.Index(c.body, []byte(id))
	if i < 0 || i+len(id) >= len(c.body) || (c.body[i+len(id)] != ',' && c.body[i+len(id)] != '}') {
		return fmt.Errorf("%s: no id %d: %.300s", tool, c.id, c.body)
	}
	if bytes.Contains(c.body, []byte(`"error":{`)) || bytes.Contains(c.body, []byte(`"isError":true`)) {
		return fmt.Errorf("%s: not a result: %.300s", tool, c.body)
	}
	for _, w := range want {
		if !bytes.Contains(c.body, []byte(w)) {
			return fmt.Errorf("%s: no %s in %.300s", tool, w, c.body)
		}
	}
	return nil
}

// decode decodes the last response whole, as the net/http client does.
func (c *rawClient) decode(tool string) (*response, error) {
	var r response
	if err := json.Unmarshal(c.body, &r); err != nil {
		return nil, fmt.Errorf("%s: %v: %.300s", tool, err, c.body)
	}
	if want := strconv.Itoa(c.id); string(r.ID) != want {
		return nil, fmt.Errorf("%s: id %s, want %s", tool, r.ID, want)
	}
	if r.Error != nil || r.Result == nil {
		return nil, fmt.Errorf("%s: not a result: %.300s", tool, c.body)
	}
	return &r, nil
}

// state is the requestState of the last response, or "" (every
// server's state is base64url or a JWT: no escapes; a state with a
// backslash is refused here and the full decoder would be needed).
func (c *rawClient) state() (string, error) {
	s := stateIn(c.body)
	if s == nil || bytes.IndexByte(s, '\\') >= 0 {
		return "", fmt.Errorf("no requestState in %.300s", c.body)
	}
	return string(s), nil
}

// echoOp is scenario (a) on the raw client.
func (c *rawClient) echoOp() error {
	if err := c.call("echo", `"arguments":{"text":"hello"},`); err != nil {
		return err
	}
	if c.full() {
		r, err := c.decode("echo")
		if err != nil {
			return err
		}
		return wantText(r, echoText)
	}
	return c.checkCheap("echo", `"resultType":"complete"`, `"text":"hello"`)
}

// confirmOp is scenario (b) on the raw client: round 1, then round 2.
func (c *rawClient) confirmOp() error {
	if err := c.call("confirm", `"arguments":{"id":42},`); err != nil {
		return fmt.Errorf("round 1: %w", err)
	}
	if c.full() {
		r, err := c.decode("confirm")
		if err != nil {
			return fmt.Errorf("round 1: %w", err)
		}
		if err := checkRound1(r); err != nil {
			return err
		}
	} else if err := c.checkCheap("confirm", `"resultType":"input_required"`, `"confirm":{"method":"elicitation/create"`); err != nil {
		return fmt.Errorf("round 1: %w", err)
	}
	state, err := c.state()
	if err != nil {
		return fmt.Errorf("round 1: %w", err)
	}
	lastStateLen.Store(int64(len(state)))
	if err := c.call("confirm", `"arguments":{"id":42},`+
		`"inputResponses":{"confirm":{"action":"accept","content":{"confirm":true}}},`+
		`"requestState":"`+state+`",`); err != nil {
		return fmt.Errorf("round 2: %w", err)
	}
	if c.full() {
		r, err := c.decode("confirm")
		if err != nil {
			return fmt.Errorf("round 2: %w", err)
		}
		if err := wantText(r, confirmText); err != nil {
			return fmt.Errorf("round 2: %w", err)
		}
		return nil
	}
	if err := c.checkCheap("confirm", `"resultType":"complete"`, `"text":"confirmed"`); err != nil {
		return fmt.Errorf("round 2: %w", err)
	}
	return nil
}

// stateIn is the requestState in a response body, or nil.
func stateIn(out []byte) []byte {
	_, rest, ok := bytes.Cut(out, []byte(`"requestState":"`))
	if !ok {
		return nil
	}
	state, _, ok := bytes.Cut(rest, []byte(`"`))
	if !ok || len(state) == 0 {
		return nil
	}
	return state
}
