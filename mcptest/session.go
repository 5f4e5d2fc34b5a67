package mcptest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/baton-mcp/baton/elicit"
	"github.com/baton-mcp/baton/internal/strictjson"
	"github.com/baton-mcp/baton/mcp"
)

// headerSessionID carries the 2025-11-25 session id.
const headerSessionID = "Mcp-Session-Id"

// sessionState is the 2025-11-25 session of a client.
type sessionState struct {
	mu      sync.Mutex // held while connecting
	id      atomic.Pointer[string]
	version atomic.Pointer[string]
	init    atomic.Pointer[InitializeResult]
}

// InitializeResult is the server's answer to initialize.
type InitializeResult struct {
	// ProtocolVersion is the version the server chose.
	ProtocolVersion string
	// Capabilities are the server's capabilities, by name, as sent.
	Capabilities map[string]json.RawMessage
	// ServerInfo names the server.
	ServerInfo mcp.Implementation
	// Instructions are the server's instructions, if sent.
	Instructions string
	// SessionID is the Mcp-Session-Id the server assigned.
	SessionID string
	// Raw is the result as sent.
	Raw json.RawMessage
}

// Connect opens the 2025-11-25 session of a client made with
// Options.Protocol LegacyProtocolVersion: initialize (declaring the
// capabilities and client info of Options), then notifications/initialized.
// Every later request carries the session id and the negotiated
// MCP-Protocol-Version. With Options.LogLevel set, Connect then sends
// logging/setLevel (2025-11-25 sets the level once per session, not per
// request as _meta logLevel does). The high-level calls connect by themselves on
// first use; Connect is for a test that checks the handshake. Calling it
// again returns the first session's result.
func (c *Client) Connect(ctx context.Context, opts ...CallOption) (*InitializeResult, error) {
	if !c.legacy {
		return nil, errors.New("mcptest: Connect: 2026-07-28 has no sessions; set Options.Protocol to LegacyProtocolVersion")
	}
	c.session.mu.Lock()
	defer c.session.mu.Unlock()
	if r := c.session.init.Load(); r != nil {
		return r, nil
	}
	o, err := collectOptions(opts)
	if err != nil {
		return nil, err
	}
	p := map[string]json.RawMessage{"capabilities": c.caps, "clientInfo": c.info}
	p["protocolVersion"], _ = json.Marshal(mcp.LegacyProtocolVersion)
	resp, err := c.send(ctx, "initialize", p, o)
	if err != nil {
		return nil, fmt.Errorf("initialize: %w", err)
	}
	if err := resp.Err(); err != nil {
		return nil, fmt.Errorf("initialize: %w", err)
	}
	var r struct {
		ProtocolVersion string                     `json:"protocolVersion"`
		Capabilities    map[string]json.RawMessage `json:"capabilities"`
		ServerInfo      mcp.Implementation         `json:"serverInfo"`
		Instructions    string                     `json:"instructions"`
	}
	if err := json.Unmarshal(resp.Result, &r); err != nil || r.ProtocolVersion == "" {
		return nil, fmt.Errorf("initialize: %w", protocolError("the result needs a protocolVersion: %q", clip(resp.Result)))
	}
	sid := resp.Header.Get(headerSessionID)
	if sid == "" {
		return nil, fmt.Errorf("initialize: %w", protocolError("no %s header", headerSessionID))
	}
	out := &InitializeResult{ProtocolVersion: r.ProtocolVersion, Capabilities: r.Capabilities, ServerInfo: r.ServerInfo,
		Instructions: r.Instructions, SessionID: sid, Raw: resp.Result}
	c.session.id.Store(&sid)
	c.session.version.Store(&r.ProtocolVersion)
	if err := c.Notify(ctx, "notifications/initialized", nil, opts...); err != nil {
		return nil, err
	}
	if c.opts.LogLevel != "" {
		// 2025-11-25 sets the level once per session.
		lp := map[string]json.RawMessage{}
		lp["level"], _ = json.Marshal(c.opts.LogLevel)
		resp, err := c.send(ctx, "logging/setLevel", lp, &callOptions{header: o.header, without: o.without})
		if err == nil {
			err = resp.Err()
		}
		if err != nil {
			return nil, fmt.Errorf("logging/setLevel %s: %w", c.opts.LogLevel, err)
		}
	}
	c.session.init.Store(out)
	return out, nil
}

// SessionID returns the 2025-11-25 session id ("" before Connect).
func (c *Client) SessionID() string {
	if p := c.session.id.Load(); p != nil {
		return *p
	}
	return ""
}

// connected opens the session unless it is open.
func (c *Client) connected(ctx context.Context) error {
	if !c.legacy || c.session.init.Load() != nil {
		return nil
	}
	_, err := c.Connect(ctx)
	return err
}

// EndSession sends DELETE with the session id, ending the 2025-11-25
// session, and returns the HTTP status (204 when the server ended it).
// The client may Connect again afterwards.
func (c *Client) EndSession(ctx context.Context, opts ...CallOption) (int, error) {
	if !c.legacy || c.SessionID() == "" {
		return 0, errors.New("mcptest: EndSession: no 2025-11-25 session is open")
	}
	o, err := collectOptions(opts)
	if err != nil {
		return 0, err
	}
	req, err := c.newRequest(ctx, nil, "", nil, o)
	if err != nil {
		return 0, err
	}
	req.Method, req.Body = http.MethodDelete, http.NoBody
	req.Header.Del("Content-Type")
	resp, err := c.target.send(req)
	if err != nil {
		return 0, fmt.Errorf("mcptest: DELETE: %w", err)
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxResponseBytes))
	_ = resp.Body.Close()
	c.session.mu.Lock()
	c.session.init.Store(nil)
	c.session.id.Store(nil)
	c.session.version.Store(nil)
	c.session.mu.Unlock()
	return resp.StatusCode, nil
}

// Message is one JSON-RPC message read from a Stream.
type Message struct {
	// ID is the id as sent (nil for a notification).
	ID json.RawMessage
	// Method is the method of a request or notification.
	Method string
	// Params is the params member as sent.
	Params json.RawMessage
	// Result is the result of a successful response.
	Result json.RawMessage
	// Error is the error of an error response (Status and Round unset).
	Error *Error
	// Raw is the message as received.
	Raw []byte
}

// IsRequest reports a request (a method and an id).
func (m Message) IsRequest() bool {
	return m.Method != "" && len(m.ID) > 0 && !bytes.Equal(m.ID, []byte("null"))
}

// IsNotification reports a notification (a method, no id).
func (m Message) IsNotification() bool { return m.Method != "" && !m.IsRequest() }

// IsResponse reports a response (a result or an error).
func (m Message) IsResponse() bool { return m.Method == "" && (m.Result != nil || m.Error != nil) }

// Stream is the response to one POST or GET, read message by message as
// it arrives: the messages of an SSE stream, or the single message of a
// JSON body. It is for tests that drive a session step by step (answer a
// request late, watch the GET stream); the high-level calls use it
// themselves.
type Stream struct {
	// Status is the HTTP status.
	Status int
	// Header holds the response headers.
	Header http.Header
	// Streamed reports an SSE stream.
	Streamed bool
	// Body is the body of a response that held no JSON-RPC message (an
	// empty 202, a plain-text 404).
	Body []byte

	resp     *http.Response
	lastID   string        // the last SSE event id, read once the stream has ended
	retry    time.Duration // the last SSE retry field, likewise
	msgs     chan streamItem
	comments atomic.Int32
	cancel   context.CancelFunc
	once     sync.Once
	closed   chan struct{} // closed by Close: the reader stops sending
}

type streamItem struct {
	msg *Message
	err error
}

// Next returns the next message. It returns io.EOF once the stream has
// ended, and ctx's error when ctx ends first; a message that is not
// JSON-RPC is an error wrapping ErrProtocol.
func (s *Stream) Next(ctx context.Context) (*Message, error) {
	select {
	case it, ok := <-s.msgs:
		if !ok {
			return nil, io.EOF
		}
		return it.msg, it.err
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
}

// Comments returns how many SSE comment lines (keep-alives) arrived so
// far.
func (s *Stream) Comments() int { return int(s.comments.Load()) }

// Close abandons the stream, closing the connection.
func (s *Stream) Close() error {
	s.once.Do(func() {
		close(s.closed)
		s.cancel()
		_ = s.resp.Body.Close()
	})
	return nil
}

// read parses the body (an SSE stream in the background).
func (s *Stream) read() {
	s.msgs = make(chan streamItem, 64)
	s.closed = make(chan struct{})
	mt, _, _ := mime.ParseMediaType(s.Header.Get("Content-Type"))
	s.Streamed = mt == "text/event-stream"
	if !s.Streamed {
		defer close(s.msgs)
		body, err := io.ReadAll(io.LimitReader(s.resp.Body, maxResponseBytes+1))
		_ = s.resp.Body.Close()
		if err != nil {
			s.msgs <- streamItem{err: fmt.Errorf("mcptest: reading the response: %w", err)}
			return
		}
		if mt != "application/json" || len(bytes.TrimSpace(body)) == 0 {
			s.Body = body
			return
		}
		m, err := toMessage(body)
		s.msgs <- streamItem{msg: m, err: err}
		return
	}
	go func() {
		defer close(s.msgs)
		sc := bufio.NewScanner(s.resp.Body)
		sc.Buffer(make([]byte, 0, 4096), maxResponseBytes)
		var data []byte
		event, hasData := "", false
		for sc.Scan() {
			line := sc.Bytes()
			if len(line) > 0 {
				field, value, _ := bytes.Cut(line, []byte(":"))
				value = bytes.TrimPrefix(value, []byte(" "))
				switch string(field) {
				case "":
					s.comments.Add(1)
				case "id":
					s.lastID = string(value)
				case "retry":
					if ms, err := strconv.Atoi(string(value)); err == nil && ms >= 0 {
						s.retry = time.Duration(ms) * time.Millisecond
					}
				case "event":
					event = string(value)
				case "data":
					if hasData {
						data = append(data, '\n')
					}
					data = append(data, value...)
					hasData = true
				}
				continue
			}
			if !hasData {
				event = ""
				continue
			}
			raw := data
			data, hasData = nil, false
			if len(raw) == 0 { // a priming event: an id, no message (SEP-1699)
				event = ""
				continue
			}
			if event != "" && event != "message" {
				if !s.deliver(streamItem{err: protocolError("an SSE event of type %q", event)}) {
					return
				}
				event = ""
				continue
			}
			m, err := toMessage(raw)
			if !s.deliver(streamItem{msg: m, err: err}) {
				return
			}
		}
	}()
}

// deliver hands it to Next, unless the stream was closed.
func (s *Stream) deliver(it streamItem) bool {
	select {
	case s.msgs <- it:
		return true
	case <-s.closed:
		return false
	}
}

// toMessage reads one JSON-RPC message.
func toMessage(raw []byte) (*Message, error) {
	msg, err := parseMessage(raw)
	if err != nil {
		return nil, err
	}
	m := &Message{ID: bytes.TrimSpace(msg.ID), Params: msg.Params, Result: msg.Result, Raw: bytes.Clone(raw)}
	if msg.Method != nil {
		m.Method = *msg.Method
	}
	if msg.Error != nil {
		if msg.Error.Code == nil {
			return m, protocolError("an error response without a code")
		}
		m.Error = &Error{Code: *msg.Error.Code, Message: msg.Error.Message}
		if d := bytes.TrimSpace(msg.Error.Data); len(d) > 0 {
			m.Error.Data = d
		}
	}
	return m, nil
}

// post sends an HTTP request (body nil for none) with the client's
// headers and returns the stream of the response. Closing the stream ends
// the request.
func (c *Client) post(ctx context.Context, httpMethod string, body []byte, method string, name *string, o *callOptions) (*Stream, error) {
	ctx, cancel := context.WithCancel(ctx)
	req, err := c.newRequest(ctx, body, method, name, o)
	if err != nil {
		cancel()
		return nil, err
	}
	if httpMethod != http.MethodPost {
		req.Method = httpMethod
		if body == nil {
			req.Body = http.NoBody
			req.Header.Del("Content-Type")
			if o.header.Get("Accept") == "" && !slices.ContainsFunc(o.without, func(h string) bool { return http.CanonicalHeaderKey(h) == "Accept" }) {
				req.Header.Set("Accept", "text/event-stream")
			}
		}
	}
	resp, err := c.target.send(req)
	if err != nil {
		cancel()
		return nil, fmt.Errorf("mcptest: sending the request: %w", err)
	}
	s := &Stream{Status: resp.StatusCode, Header: resp.Header, resp: resp, cancel: cancel}
	s.read()
	return s, nil
}

// Send sends an HTTP request of any method (GET, DELETE, PUT, …) with body
// exactly as given (nil for none) and the client's headers (the session's
// too, once there is one); per-call options adjust them. A request without
// a body asks for text/event-stream unless WithHeader sets Accept. It is
// for wire checks and malformed input.
func (c *Client) Send(ctx context.Context, httpMethod string, body []byte, opts ...CallOption) (*Stream, error) {
	o, err := collectOptions(opts)
	if err != nil {
		return nil, err
	}
	return c.post(ctx, httpMethod, body, "", nil, o)
}

// Open sends one request and returns its response as a Stream, to be
// read message by message; nothing is answered for the test, and the
// returned id is the request's. params is encoded as Do encodes it (a
// 2026-07-28 client adds the _meta envelope; a 2025-11-25 client sends
// the session's headers). Like Send, Notify and Respond, it does not
// open a session by itself: call Connect first.
func (c *Client) Open(ctx context.Context, method string, params any, opts ...CallOption) (*Stream, json.RawMessage, error) {
	o, err := collectOptions(opts)
	if err != nil {
		return nil, nil, err
	}
	p, err := encodeParams(params)
	if err != nil {
		return nil, nil, fmt.Errorf("mcptest: %s: %w", method, err)
	}
	if _, ok := p["_meta"]; !ok && !c.legacy {
		if p["_meta"], err = c.meta(o); err != nil {
			return nil, nil, err
		}
	}
	id, body, err := c.encodeRequest(method, p, o)
	if err != nil {
		return nil, nil, err
	}
	s, err := c.post(ctx, http.MethodPost, body, method, targetName(method, p), o)
	return s, id, err
}

// Notify posts a notification and checks the server accepted it (202).
func (c *Client) Notify(ctx context.Context, method string, params any, opts ...CallOption) error {
	msg := map[string]any{"jsonrpc": "2.0", "method": method}
	if params != nil {
		msg["params"] = params
	}
	return c.postAccepted(ctx, "notify "+method, msg, opts)
}

// Respond posts the client's answer to the server's request id and checks
// the server accepted it (202): result is the JSON-RPC result, or, when it
// is an *mcp.Error, the JSON-RPC error.
func (c *Client) Respond(ctx context.Context, id json.RawMessage, result any, opts ...CallOption) error {
	msg := map[string]any{"jsonrpc": "2.0", "id": id}
	if e, ok := result.(*mcp.Error); ok {
		msg["error"] = e
	} else {
		msg["result"] = result
	}
	return c.postAccepted(ctx, "respond to "+string(id), msg, opts)
}

func (c *Client) postAccepted(ctx context.Context, what string, msg any, opts []CallOption) error {
	body, err := json.Marshal(msg)
	if err != nil {
		return fmt.Errorf("mcptest: %s: %w", what, err)
	}
	s, err := c.Send(ctx, http.MethodPost, body, opts...)
	if err != nil {
		return fmt.Errorf("mcptest: %s: %w", what, err)
	}
	defer s.Close()
	if s.Status != http.StatusAccepted {
		m, _ := s.Next(ctx)
		if m != nil && m.Error != nil {
			m.Error.Status = s.Status
			return fmt.Errorf("mcptest: %s: %w", what, m.Error)
		}
		return fmt.Errorf("mcptest: %s: HTTP %d, want 202 (%q)", what, s.Status, clip(s.Body))
	}
	return nil
}

// encodeRequest encodes a request under the next id (or the one WithID
// chose).
func (c *Client) encodeRequest(method string, params any, o *callOptions) (json.RawMessage, []byte, error) {
	id := json.RawMessage(strconv.FormatInt(c.nextID.Add(1), 10))
	if o.id != nil {
		id, o.id = o.id, nil
	}
	body, err := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Method  string          `json:"method"`
		Params  any             `json:"params"`
	}{"2.0", id, method, params})
	if err != nil {
		return nil, nil, fmt.Errorf("mcptest: encoding the %s request: %w", method, err)
	}
	return id, body, nil
}

// driveLegacy sends one 2025-11-25 request and reads its stream to the
// response, answering the server's requests with the callbacks as they
// arrive. The Exchange has one round: its InputRequests are the server's
// requests (keyed by their JSON-RPC id), its InputResponses the answers.
func (c *Client) driveLegacy(ctx context.Context, method, target string, p map[string]json.RawMessage, o *callOptions) (json.RawMessage, *Exchange, error) {
	what := method + " " + target
	if err := c.connected(ctx); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", what, err)
	}
	meta := map[string]any{}
	for k, v := range o.meta {
		meta[k] = v
	}
	if o.progressToken != nil {
		meta[metaProgressToken] = o.progressToken
	}
	if len(meta) > 0 {
		var err error
		if p["_meta"], err = json.Marshal(meta); err != nil {
			return nil, nil, fmt.Errorf("%s: encoding _meta: %w", what, err)
		}
	}
	id, body, err := c.encodeRequest(method, p, o)
	if err != nil {
		return nil, nil, err
	}
	s, err := c.post(ctx, http.MethodPost, body, method, nil, o)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", what, err)
	}
	defer func() { s.Close() }()
	ex := &Exchange{Rounds: []Round{{Status: s.Status, Streamed: s.Streamed}}}
	rec := &ex.Rounds[0]
	resumed := 0
	for {
		m, err := s.Next(ctx)
		switch {
		case errors.Is(err, io.EOF) && s.Streamed && s.lastID != "" && resumed < maxResumes:
			// The server ended the stream before the response (SSE
			// polling, SEP-1699): resume it with Last-Event-ID after
			// the retry it asked for.
			resumed++
			next, err := c.resume(ctx, s, o)
			if err != nil {
				return nil, ex, fmt.Errorf("%s: resuming its stream: %w", what, err)
			}
			s = next
			continue
		case errors.Is(err, io.EOF):
			if s.Body != nil {
				return nil, ex, fmt.Errorf("%s: HTTP %d without a JSON-RPC response: %q", what, s.Status, clip(s.Body))
			}
			return nil, ex, fmt.Errorf("%s: %w", what, protocolError("the stream ended before the response (%d notifications)", len(rec.Notifications)))
		case err != nil:
			return nil, ex, fmt.Errorf("%s: %w", what, err)
		}
		switch {
		case m.IsResponse():
			if !bytes.Equal(m.ID, id) {
				return nil, ex, fmt.Errorf("%s: %w", what, protocolError("the response has id %s, the request had %s", m.ID, id))
			}
			if m.Error != nil {
				m.Error.Status, m.Error.Round = s.Status, 1
				return nil, ex, fmt.Errorf("%s: %w", what, m.Error)
			}
			if !isJSONObject(m.Result) {
				return nil, ex, fmt.Errorf("%s: %w", what, protocolError("the result is not an object: %q", clip(m.Result)))
			}
			return m.Result, ex, nil
		case m.IsRequest():
			if err := c.answerServerRequest(ctx, m, rec); err != nil {
				return nil, ex, fmt.Errorf("%s: %w", what, err)
			}
		case m.IsNotification():
			n := Notification{Method: m.Method, Params: m.Params}
			rec.Notifications = append(rec.Notifications, n)
			if c.opts.OnNotification != nil {
				c.opts.OnNotification(n)
			}
		default:
			return nil, ex, fmt.Errorf("%s: %w", what, protocolError("a message that is neither request, notification nor response: %q", clip(m.Raw)))
		}
	}
}

// maxResumes bounds how many times one call's stream is resumed.
const maxResumes = 16

// resume waits the retry the ended stream s asked for (at most 5 s) and
// reopens it with GET and Last-Event-ID, with o's headers.
func (c *Client) resume(ctx context.Context, s *Stream, o *callOptions) (*Stream, error) {
	t := time.NewTimer(min(s.retry, 5*time.Second))
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
	_ = s.Close()
	ro := *o
	ro.header = o.header.Clone()
	if ro.header == nil {
		ro.header = http.Header{}
	}
	ro.header.Set("Last-Event-ID", s.lastID)
	next, err := c.post(ctx, http.MethodGet, nil, "", nil, &ro)
	if err != nil {
		return nil, err
	}
	if next.Status != http.StatusOK || !next.Streamed {
		_ = next.Close()
		return nil, fmt.Errorf("HTTP %d (%s)", next.Status, next.Header.Get("Content-Type"))
	}
	return next, nil
}

// answerServerRequest answers a 2025-11-25 server-to-client request with
// the callbacks (ping with an empty result, an unknown method with
// -32601), and records it in rec.
func (c *Client) answerServerRequest(ctx context.Context, m *Message, rec *Round) error {
	key := string(m.ID)
	if m.Method == "ping" {
		return c.Respond(ctx, m.ID, struct{}{})
	}
	ir := InputRequest{Key: key, Method: m.Method, Params: m.Params}
	switch m.Method {
	case methodElicit:
		var er elicit.Request
		if err := strictjson.Unmarshal(m.Params, &er); err != nil {
			return protocolError("request %s: invalid elicitation: %v", key, err)
		}
		ir.Elicitation = &er
	case methodSample:
		var sp mcp.CreateMessageParams
		if err := strictjson.Unmarshal(m.Params, &sp); err != nil {
			return protocolError("request %s: invalid sampling request: %v", key, err)
		}
		ir.Sampling = &sp
	case methodListRoots:
	default:
		return c.Respond(ctx, m.ID, &mcp.Error{Code: mcp.MethodNotFound, Message: "Method not found: " + m.Method})
	}
	rec.InputRequests = append(rec.InputRequests, ir)
	answer, err := c.answerOne(ctx, ir, "request "+key)
	if err != nil {
		// The server is told the client could not answer, so the
		// handler does not wait for its timeout.
		_ = c.Respond(ctx, m.ID, &mcp.Error{Code: mcp.InternalError, Message: err.Error()})
		return err
	}
	if rec.InputResponses == nil {
		rec.InputResponses = map[string]json.RawMessage{}
	}
	rec.InputResponses[key] = answer
	return c.Respond(ctx, m.ID, answer)
}
