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

// The 2025-11-25 scenarios on the raw generator.
//
//   - session-call: in a session (initialize and notifications/initialized
//     done once per worker, before the window), one tools/call echo
//     {"text":"hello"} → its result. One call is one operation.
//   - session-elicit: tools/call confirm {"id":42} → elicitation/create on
//     the call's SSE stream → the answer POSTed in the session (202), on
//     the worker's second connection → the result on the call's stream.
//     One round trip is one operation.
//
// legacyConn reads responses incrementally: a JSON body whole, an SSE
// body event by event (chunk by chunk), so the generator can answer a
// request that arrives on a stream still open.

// legacyConn is one keep-alive connection of a worker.
type legacyConn struct {
	conn net.Conn
	br   *bufio.Reader
	// The response being read.
	status     int
	sse        bool
	chunked    bool
	length     int // Content-Length, -1 if none
	closeAfter bool
	sid        string // its Mcp-Session-Id header
	chunkLeft  int    // SSE: bytes left in the current chunk
	ended      bool   // SSE: the body has ended
	events     []byte // SSE: read, not yet returned
	body       []byte
}

// legacyClient is one worker's session on one server.
type legacyClient struct {
	addr, host, path string
	main, answer     legacyConn // the calls, and the answers to server requests
	sid              string
	id               int
	n, fullEvery     int
	timeout          time.Duration
	out              []byte
	// wrongSession, for tests, sends this session id instead of the real one.
	wrongSession string
}

func newLegacyClient(rawURL string, fullEvery int) (*legacyClient, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, err
	}
	return &legacyClient{addr: u.Host, host: u.Host, path: u.Path, fullEvery: max(fullEvery, 1), timeout: 30 * time.Second}, nil
}

func (c *legacyClient) close() {
	c.main.close()
	c.answer.close()
}

func (lc *legacyConn) close() {
	if lc.conn != nil {
		lc.conn.Close()
		lc.conn = nil
	}
}

// post writes one POST with body on lc (dialling it if needed) and reads
// the response's head.
func (c *legacyClient) post(lc *legacyConn, body []byte) error {
	if lc.conn == nil {
		conn, err := net.DialTimeout("tcp", c.addr, c.timeout)
		if err != nil {
			return err
		}
		lc.conn, lc.br = conn, bufio.NewReaderSize(conn, 16<<10)
	}
	b := append(c.out[:0], "POST "...)
	b = append(b, c.path...)
	b = append(b, " HTTP/1.1\r\nHost: "...)
	b = append(b, c.host...)
	b = append(b, "\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"...)
	if sid := c.sid; sid != "" {
		if c.wrongSession != "" {
			sid = c.wrongSession
		}
		b = append(b, "Mcp-Session-Id: "...)
		b = append(b, sid...)
		b = append(b, "\r\nMcp-Protocol-Version: "+legacyProtocol+"\r\n"...)
	}
	b = append(b, "Content-Length: "...)
	b = strconv.AppendInt(b, int64(len(body)), 10)
	b = append(b, "\r\n\r\n"...)
	b = append(b, body...)
	c.out = b
	lc.conn.SetDeadline(time.Now().Add(c.timeout))
	if _, err := lc.conn.Write(b); err != nil {
		lc.close()
		return err
	}
	if err := lc.readHead(); err != nil {
		lc.close()
		return err
	}
	return nil
}

// readHead reads a response's status line and headers.
func (lc *legacyConn) readHead() error {
	line, err := lc.br.ReadSlice('\n')
	if err != nil {
		return err
	}
	if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.1 ")) {
		return fmt.Errorf("%w: status line %q", errMalformed, line)
	}
	if lc.status, err = strconv.Atoi(string(line[9:12])); err != nil {
		return fmt.Errorf("%w: status line %q", errMalformed, line)
	}
	lc.sse, lc.chunked, lc.length, lc.closeAfter, lc.sid = false, false, -1, false, ""
	lc.chunkLeft, lc.ended, lc.events = 0, false, lc.events[:0]
	for {
		line, err = lc.br.ReadSlice('\n')
		if err != nil {
			return err
		}
		line = bytes.TrimRight(line, "\r\n")
		if len(line) == 0 {
			break
		}
		name, value, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			return fmt.Errorf("%w: header %q", errMalformed, line)
		}
		value = bytes.TrimSpace(value)
		switch {
		case asciiEqualFold(name, "Content-Length"):
			if lc.length, err = strconv.Atoi(string(value)); err != nil || lc.length < 0 {
				return fmt.Errorf("%w: Content-Length %q", errMalformed, value)
			}
		case asciiEqualFold(name, "Transfer-Encoding"):
			lc.chunked = asciiEqualFold(value, "chunked")
		case asciiEqualFold(name, "Connection"):
			lc.closeAfter = asciiEqualFold(value, "close")
		case asciiEqualFold(name, "Content-Type"):
			lc.sse = bytes.HasPrefix(value, []byte("text/event-stream"))
		case asciiEqualFold(name, "Mcp-Session-Id"):
			lc.sid = string(value)
		}
	}
	return nil
}

// readBody reads a whole non-SSE body into lc.body.
func (lc *legacyConn) readBody() error {
	lc.body = lc.body[:0]
	var err error
	switch {
	case lc.chunked:
		for {
			var line []byte
			if line, err = lc.br.ReadSlice('\n'); err != nil {
				return err
			}
			size, err := strconv.ParseUint(string(bytes.TrimRight(line, "\r\n")), 16, 31)
			if err != nil {
				return fmt.Errorf("%w: chunk size %q", errMalformed, line)
			}
			if size == 0 {
				_, err = lc.br.Discard(2)
				break
			}
			if lc.body, err = readN(lc.br, lc.body, int(size)); err != nil {
				return err
			}
			if _, err = lc.br.Discard(2); err != nil {
				return err
			}
		}
	case lc.length >= 0:
		lc.body, err = readN(lc.br, lc.body, lc.length)
	case lc.status == 202 || lc.status == 204:
	default:
		err = fmt.Errorf("%w: no Content-Length and not chunked", errMalformed)
	}
	return err
}

// nextEvent returns the data of the next SSE event of the body (its data
// lines joined), skipping comments; io.EOF once the body has ended.
func (lc *legacyConn) nextEvent() ([]byte, error) {
	for {
		if i := bytes.Index(lc.events, []byte("\n\n")); i >= 0 {
			ev := lc.events[:i]
			var data []byte
			for len(ev) > 0 {
				line := ev
				if j := bytes.IndexByte(ev, '\n'); j >= 0 {
					line, ev = ev[:j], ev[j+1:]
				} else {
					ev = nil
				}
				if d, ok := bytes.CutPrefix(line, []byte("data:")); ok {
					if len(data) > 0 {
						data = append(data, '\n')
					}
					data = append(data, bytes.TrimPrefix(d, []byte(" "))...)
				}
			}
			lc.events = append(lc.events[:0], lc.events[i+2:]...)
			if data != nil {
				return data, nil
			}
			continue
		}
		if lc.ended {
			return nil, io.EOF
		}
		if err := lc.readMore(); err != nil {
			return nil, err
		}
	}
}

// readMore appends the next bytes of an SSE body to lc.events.
func (lc *legacyConn) readMore() error {
	if !lc.chunked {
		if lc.length == 0 {
			lc.ended = true
			return nil
		}
		if lc.length < 0 {
			return fmt.Errorf("%w: an SSE body neither chunked nor of known length", errMalformed)
		}
		n := min(lc.length, 4096)
		var err error
		lc.events, err = readN(lc.br, lc.events, n)
		lc.length -= n
		return err
	}
	if lc.chunkLeft == 0 {
		line, err := lc.br.ReadSlice('\n')
		if err != nil {
			return err
		}
		size, err := strconv.ParseUint(string(bytes.TrimRight(line, "\r\n")), 16, 31)
		if err != nil {
			return fmt.Errorf("%w: chunk size %q", errMalformed, line)
		}
		if size == 0 {
			lc.ended = true
			_, err = lc.br.Discard(2)
			return err
		}
		lc.chunkLeft = int(size)
	}
	n := lc.chunkLeft
	var err error
	if lc.events, err = readN(lc.br, lc.events, n); err != nil {
		return err
	}
	lc.chunkLeft = 0
	_, err = lc.br.Discard(2)
	return err
}

// finishBody reads what is left of an SSE body (the server ends a call's
// stream after its response), so the connection can carry the next
// request; a close is honoured.
func (lc *legacyConn) finishBody() error {
	for lc.sse && !lc.ended {
		if err := lc.readMore(); err != nil {
			lc.close()
			return err
		}
	}
	if lc.closeAfter {
		lc.close()
	}
	return nil
}

// message returns the JSON-RPC message of a response: the body (JSON), or
// the next SSE event's data.
func (lc *legacyConn) message() ([]byte, error) {
	if !lc.sse {
		if err := lc.readBody(); err != nil {
			lc.close()
			return nil, err
		}
		if lc.closeAfter {
			lc.close()
		}
		return lc.body, nil
	}
	ev, err := lc.nextEvent()
	if err != nil {
		lc.close()
		if err == io.EOF {
			return nil, errors.New("the stream ended without the message")
		}
		return nil, err
	}
	return ev, nil
}

// full reports whether this message is one to decode whole.
func (c *legacyClient) full() bool {
	c.n++
	return c.n%c.fullEvery == 0
}

// initialize opens the worker's session: initialize, then
// notifications/initialized.
func (c *legacyClient) initialize() error {
	c.sid = ""
	c.id++
	body := []byte(`{"jsonrpc":"2.0","id":` + strconv.Itoa(c.id) + `,"method":"initialize","params":{"protocolVersion":"` + legacyProtocol +
		`","capabilities":{"elicitation":{"form":{}}},"clientInfo":{"name":"baton-bench","version":"1.0.0"}}}`)
	if err := c.post(&c.main, body); err != nil {
		return fmt.Errorf("initialize: %w", err)
	}
	sid := c.main.sid
	msg, err := c.main.message()
	if err != nil {
		return fmt.Errorf("initialize: %w", err)
	}
	if c.main.status != 200 || sid == "" || !bytes.Contains(msg, []byte(`"protocolVersion":"`+legacyProtocol+`"`)) {
		return fmt.Errorf("initialize: status %d, session %q: %.300s", c.main.status, sid, msg)
	}
	if err := c.main.finishBody(); err != nil {
		return err
	}
	c.sid = sid
	if err := c.post(&c.main, []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)); err != nil {
		return fmt.Errorf("notifications/initialized: %w", err)
	}
	if err := c.main.readBody(); err != nil {
		return err
	}
	if c.main.status != 202 {
		return fmt.Errorf("notifications/initialized: status %d: %.300s", c.main.status, c.main.body)
	}
	return nil
}

// legacyMessage is what the generator decodes of a message in full.
type legacyMessage struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  struct {
		Mode            string `json:"mode"`
		Message         string `json:"message"`
		RequestedSchema struct {
			Properties map[string]struct {
				Type string `json:"type"`
			} `json:"properties"`
		} `json:"requestedSchema"`
	} `json:"params"`
	Error *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
	Result *struct {
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		IsError bool `json:"isError"`
	} `json:"result"`
}

// checkResult checks msg is the result of request id with one text block
// text: cheaply (the id, no error, the text), or decoded whole.
func checkResult(msg []byte, id int, text string, full bool) error {
	if full {
		var m legacyMessage
		if err := json.Unmarshal(msg, &m); err != nil {
			return fmt.Errorf("%v: %.300s", err, msg)
		}
		if string(m.ID) != strconv.Itoa(id) || m.Error != nil || m.Result == nil || m.Result.IsError ||
			len(m.Result.Content) != 1 || m.Result.Content[0].Type != "text" || m.Result.Content[0].Text != text {
			return fmt.Errorf("want the result of %d with text %q, got %.300s", id, text, msg)
		}
		return nil
	}
	want := `"id":` + strconv.Itoa(id)
	i := bytes.Index(msg, []byte(want))
	if i < 0 || i+len(want) >= len(msg) || (msg[i+len(want)] != ',' && msg[i+len(want)] != '}') {
		return fmt.Errorf("no id %d: %.300s", id, msg)
	}
	if bytes.Contains(msg, []byte(`"error":{`)) || bytes.Contains(msg, []byte(`"isError":true`)) ||
		!bytes.Contains(msg, []byte(`"text":"`+text+`"`)) {
		return fmt.Errorf("want the text %q: %.300s", text, msg)
	}
	return nil
}

// sessionCallOp is scenario session-call: one tools/call echo.
func (c *legacyClient) sessionCallOp() error {
	return c.callEcho("hello", "hello")
}

// callEcho calls echo with text and checks the result is want.
func (c *legacyClient) callEcho(text, want string) error {
	c.id++
	args, _ := json.Marshal(text)
	body := []byte(`{"jsonrpc":"2.0","id":` + strconv.Itoa(c.id) + `,"method":"tools/call","params":{"name":"echo","arguments":{"text":` + string(args) + `}}}`)
	if err := c.post(&c.main, body); err != nil {
		return err
	}
	if c.main.status != 200 {
		c.main.readBody()
		c.main.close()
		return fmt.Errorf("echo: status %d: %.300s", c.main.status, c.main.body)
	}
	msg, err := c.main.message()
	if err != nil {
		return fmt.Errorf("echo: %w", err)
	}
	if err := checkResult(msg, c.id, want, c.full()); err != nil {
		return fmt.Errorf("echo: %w", err)
	}
	return c.main.finishBody()
}

// elicitID returns the id (JSON text) of an elicitation/create request
// for the confirm form, checked cheaply or decoded whole.
func elicitID(msg []byte, full bool) ([]byte, error) {
	if full {
		var m legacyMessage
		if err := json.Unmarshal(msg, &m); err != nil {
			return nil, fmt.Errorf("%v: %.300s", err, msg)
		}
		if m.Method != "elicitation/create" || len(m.ID) == 0 || m.Params.Message != "Proceed?" ||
			m.Params.RequestedSchema.Properties["confirm"].Type != "boolean" {
			return nil, fmt.Errorf("want elicitation/create of the confirm form, got %.300s", msg)
		}
		return m.ID, nil
	}
	if !bytes.Contains(msg, []byte(`"method":"elicitation/create"`)) || !bytes.Contains(msg, []byte(`"confirm":{"type":"boolean"`)) {
		return nil, fmt.Errorf("want elicitation/create of the confirm form, got %.300s", msg)
	}
	_, rest, ok := bytes.Cut(msg, []byte(`"id":`))
	if !ok {
		return nil, fmt.Errorf("no id in %.300s", msg)
	}
	end := bytes.IndexAny(rest, ",}")
	if end <= 0 {
		return nil, fmt.Errorf("no id in %.300s", msg)
	}
	return rest[:end], nil
}

// startConfirm sends tools/call confirm and reads the elicitation/create
// request on the call's stream: it returns the request's id and the
// call's id. The call then waits for answerConfirm and endConfirm.
func (c *legacyClient) startConfirm() (elicitationID []byte, callID int, err error) {
	c.id++
	callID = c.id
	body := []byte(`{"jsonrpc":"2.0","id":` + strconv.Itoa(callID) + `,"method":"tools/call","params":{"name":"confirm","arguments":{"id":42}}}`)
	if err := c.post(&c.main, body); err != nil {
		return nil, 0, err
	}
	if c.main.status != 200 || !c.main.sse {
		c.main.readBody()
		c.main.close()
		return nil, 0, fmt.Errorf("confirm: status %d, SSE %v: %.300s", c.main.status, c.main.sse, c.main.body)
	}
	msg, err := c.main.message()
	if err != nil {
		return nil, 0, fmt.Errorf("confirm: %w", err)
	}
	eid, err := elicitID(msg, c.full())
	if err != nil {
		c.main.close()
		return nil, 0, fmt.Errorf("confirm: %w", err)
	}
	return append([]byte(nil), eid...), callID, nil
}

// answerConfirm POSTs the answer to elicitation request eid in the
// session, on the answer connection: accept with confirm true, or a
// decline; it must be acknowledged with 202.
func (c *legacyClient) answerConfirm(eid []byte, accept bool) error {
	result := `{"action":"accept","content":{"confirm":true}}`
	if !accept {
		result = `{"action":"decline"}`
	}
	body := []byte(`{"jsonrpc":"2.0","id":` + string(eid) + `,"result":` + result + `}`)
	if err := c.post(&c.answer, body); err != nil {
		return fmt.Errorf("answer: %w", err)
	}
	if err := c.answer.readBody(); err != nil {
		c.answer.close()
		return fmt.Errorf("answer: %w", err)
	}
	if c.answer.closeAfter {
		c.answer.close()
	}
	if c.answer.status != 202 {
		return fmt.Errorf("answer: status %d: %.300s", c.answer.status, c.answer.body)
	}
	return nil
}

// endConfirm reads the call's result on its stream and the stream's end.
func (c *legacyClient) endConfirm(callID int, want string) error {
	msg, err := c.main.message()
	if err != nil {
		return fmt.Errorf("confirm result: %w", err)
	}
	if want == declinedText {
		if !bytes.Contains(msg, []byte(`"isError":true`)) || !bytes.Contains(msg, []byte(`"text":"`+declinedText+`"`)) {
			return fmt.Errorf("confirm result: want isError %q, got %.300s", declinedText, msg)
		}
	} else if err := checkResult(msg, callID, want, c.full()); err != nil {
		return fmt.Errorf("confirm result: %w", err)
	}
	return c.main.finishBody()
}

// sessionElicitOp is scenario session-elicit: one blocking elicitation
// round trip.
func (c *legacyClient) sessionElicitOp() error {
	eid, callID, err := c.startConfirm()
	if err != nil {
		return err
	}
	if err := c.answerConfirm(eid, true); err != nil {
		c.main.close() // the call's stream is left mid-way
		return err
	}
	return c.endConfirm(callID, confirmText)
}

// legacyScenario reports whether sc is a 2025-11-25 scenario.
func legacyScenario(sc string) bool { return sc == "session-call" || sc == "session-elicit" }

// legacyOps is the factory of a 2025-11-25 scenario's operations: each
// worker opens its session first (in the warmup).
func legacyOps(url, scenario string, fullEvery int) opFactory {
	return func() (func() error, func(), error) {
		c, err := newLegacyClient(url, fullEvery)
		if err != nil {
			return nil, nil, err
		}
		if err := c.initialize(); err != nil {
			c.close()
			return nil, nil, err
		}
		if scenario == "session-elicit" {
			return c.sessionElicitOp, c.close, nil
		}
		return c.sessionCallOp, c.close, nil
	}
}
