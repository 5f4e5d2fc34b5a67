package mcptest

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"

	"github.com/baton-mcp/baton/internal/strictjson"
)

// ErrProtocol is wrapped by every error that reports a server breaking the
// 2026-07-28 protocol: an unreadable or misshapen response, a result
// without resultType, an input request the client did not declare it could
// answer, a request sent to the client on a response stream, a stream that
// ends before its response.
var ErrProtocol = errors.New("mcptest: the server broke the protocol")

func protocolError(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrProtocol, fmt.Sprintf(format, args...))
}

// maxResponseBytes bounds a response body and each SSE event, so a server
// that never stops writing fails the test instead of exhausting memory.
const maxResponseBytes = 32 << 20

// Error is a JSON-RPC error response. Every call returns one (find it with
// errors.As) when the server answered with an error instead of a result.
type Error struct {
	// Status is the HTTP status of the response that carried the error.
	Status int
	// Code is the JSON-RPC error code (for example -32602).
	Code int
	// Message is the error message.
	Message string
	// Data is the error's data member as sent, or nil.
	Data json.RawMessage
	// Round is the attempt of a multi-round call that failed (1 for the
	// first request); 0 for the low-level calls.
	Round int
}

// Error returns the code and message, the HTTP status and, for a
// multi-round call, the round.
func (e *Error) Error() string {
	s := fmt.Sprintf("JSON-RPC error %d: %s (HTTP %d)", e.Code, e.Message, e.Status)
	if e.Round > 0 {
		s += fmt.Sprintf(" in round %d", e.Round)
	}
	return s
}

// Notification is a JSON-RPC notification the server sent on a request's
// SSE stream before its response.
type Notification struct {
	// Method is the notification's method, such as notifications/progress.
	Method string
	// Params is the params member as sent.
	Params json.RawMessage
}

// Progress is the params of a notifications/progress.
type Progress struct {
	// Token is the progressToken as sent (a JSON string or integer).
	Token json.RawMessage `json:"progressToken"`
	// Progress is the progress so far.
	Progress float64 `json:"progress"`
	// Total is the total, or 0 when not sent.
	Total float64 `json:"total"`
	// Message is the message, or "" when not sent.
	Message string `json:"message"`
}

// LogMessage is the params of a notifications/message.
type LogMessage struct {
	// Level is the syslog severity (debug, info, notice, warning, …).
	Level string `json:"level"`
	// Logger names the logger, or "" when not sent.
	Logger string `json:"logger"`
	// Data is the logged value as sent.
	Data json.RawMessage `json:"data"`
}

// Progress returns the notification's params when it is a
// notifications/progress that decodes.
func (n Notification) Progress() (Progress, bool) {
	var p Progress
	if n.Method != "notifications/progress" || strictjson.Unmarshal(n.Params, &p) != nil {
		return Progress{}, false
	}
	return p, true
}

// Log returns the notification's params when it is a notifications/message
// that decodes.
func (n Notification) Log() (LogMessage, bool) {
	var m LogMessage
	if n.Method != "notifications/message" || strictjson.Unmarshal(n.Params, &m) != nil {
		return LogMessage{}, false
	}
	return m, true
}

// Response is the raw outcome of one HTTP request: what Do and DoRaw
// return.
type Response struct {
	// Status is the HTTP status.
	Status int
	// Header holds the response headers.
	Header http.Header
	// Streamed reports that the response was an SSE stream.
	Streamed bool
	// Notifications are the notifications that preceded the response on
	// its stream, in order.
	Notifications []Notification
	// ID is the JSON-RPC id of the response as sent (null for an error
	// to an unreadable request), or nil when no JSON-RPC response came.
	ID json.RawMessage
	// Result is the result member of a successful response, or nil.
	Result json.RawMessage
	// Error is the error of an error response, or nil.
	Error *Error
	// Body is the body when it held no JSON-RPC message (for example the
	// empty body of a 202 or a plain-text 404 from a router); for a
	// JSON-RPC response it is the message as received.
	Body []byte
}

// ResultType returns the result's resultType ("complete",
// "input_required"), or "" when there is no result or it has none.
func (r *Response) ResultType() string {
	var v struct {
		ResultType string `json:"resultType"`
	}
	if r.Result == nil || strictjson.Unmarshal(r.Result, &v) != nil {
		return ""
	}
	return v.ResultType
}

// Err returns the error response as a *Error; an error saying what came
// instead when the response carried neither a result nor an error (the
// HTTP status and the start of the body); or nil for a result.
func (r *Response) Err() error {
	switch {
	case r.Error != nil:
		return r.Error
	case r.Result != nil:
		return nil
	}
	body := r.Body
	if len(body) > 200 {
		body = body[:200]
	}
	return fmt.Errorf("mcptest: HTTP %d without a JSON-RPC response (%s): %q", r.Status, r.Header.Get("Content-Type"), body)
}

// rpcMessage is any JSON-RPC message the server may write.
type rpcMessage struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  *string         `json:"method"`
	Params  json.RawMessage `json:"params"`
	Result  json.RawMessage `json:"result"`
	Error   *struct {
		Code    *int            `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	} `json:"error"`
}

// readResponse reads an HTTP response to the request with id wantID (nil
// for a raw body, whose id is not known). onNote sees each notification as
// it arrives. It always closes the body.
func readResponse(resp *http.Response, wantID json.RawMessage, onNote func(Notification)) (*Response, error) {
	defer resp.Body.Close()
	out := &Response{Status: resp.StatusCode, Header: resp.Header}
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if mt == "text/event-stream" {
		out.Streamed = true
		if err := readStream(resp.Body, out, wantID, onNote); err != nil {
			return nil, err
		}
		return out, nil
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes+1))
	if err != nil {
		return nil, fmt.Errorf("mcptest: reading the response: %w", err)
	}
	if len(body) > maxResponseBytes {
		return nil, protocolError("the response is larger than %d bytes", maxResponseBytes)
	}
	out.Body = body
	if mt != "application/json" || len(bytes.TrimSpace(body)) == 0 {
		return out, nil
	}
	msg, err := parseMessage(body)
	if err != nil {
		return nil, err
	}
	if msg.Method != nil {
		return nil, protocolError("the JSON body is a %s message, not a response", *msg.Method)
	}
	if err := setResponse(out, msg, wantID); err != nil {
		return nil, err
	}
	return out, nil
}

func parseMessage(data []byte) (*rpcMessage, error) {
	var msg rpcMessage
	if err := strictjson.Unmarshal(data, &msg); err != nil {
		return nil, protocolError("unreadable JSON-RPC message %q: %v", clip(data), err)
	}
	if msg.JSONRPC != "2.0" {
		return nil, protocolError(`message without "jsonrpc":"2.0": %q`, clip(data))
	}
	return &msg, nil
}

func clip(b []byte) []byte {
	if len(b) > 200 {
		return b[:200]
	}
	return b
}

// setResponse fills out from a JSON-RPC response message.
func setResponse(out *Response, msg *rpcMessage, wantID json.RawMessage) error {
	hasResult, hasError := msg.Result != nil, msg.Error != nil
	if hasResult == hasError {
		return protocolError("a response needs exactly one of result and error")
	}
	id := bytes.TrimSpace(msg.ID)
	if len(id) == 0 {
		return protocolError("a response without an id")
	}
	out.ID = id
	if hasResult {
		if wantID != nil && !bytes.Equal(id, wantID) {
			return protocolError("the response has id %s, the request had %s", id, wantID)
		}
		if !isJSONObject(msg.Result) {
			return protocolError("the result is not an object: %q", clip(msg.Result))
		}
		out.Result = msg.Result
		return nil
	}
	if wantID != nil && !bytes.Equal(id, wantID) && !bytes.Equal(id, []byte("null")) {
		return protocolError("the error response has id %s, the request had %s", id, wantID)
	}
	if msg.Error.Code == nil {
		return protocolError("an error response without a code")
	}
	out.Error = &Error{Status: out.Status, Code: *msg.Error.Code, Message: msg.Error.Message}
	if d := bytes.TrimSpace(msg.Error.Data); len(d) > 0 {
		out.Error.Data = d
	}
	return nil
}

// readStream reads SSE events until the response arrives. Comments,
// events of other types and id or retry fields are skipped.
func readStream(r io.Reader, out *Response, wantID json.RawMessage, onNote func(Notification)) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), maxResponseBytes)
	var data []byte
	var event string
	hasData := false
	for sc.Scan() {
		line := sc.Bytes()
		if len(line) > 0 {
			field, value, _ := bytes.Cut(line, []byte(":"))
			value = bytes.TrimPrefix(value, []byte(" "))
			switch string(field) {
			case "": // a comment (": keep-alive")
			case "event":
				event = string(value)
			case "data":
				if hasData {
					data = append(data, '\n')
				}
				data = append(data, value...)
				hasData = true
				if len(data) > maxResponseBytes {
					return protocolError("an SSE event is larger than %d bytes", maxResponseBytes)
				}
			}
			continue
		}
		// A blank line dispatches the event.
		if !hasData || (event != "" && event != "message") {
			data, event, hasData = data[:0], "", false
			continue
		}
		raw := data
		data, event, hasData = nil, "", false
		msg, err := parseMessage(raw)
		if err != nil {
			return err
		}
		switch {
		case msg.Method != nil && len(bytes.TrimSpace(msg.ID)) > 0 && !bytes.Equal(bytes.TrimSpace(msg.ID), []byte("null")):
			return protocolError("the server sent a request (%s) on the response stream; 2026-07-28 servers send no requests to clients", *msg.Method)
		case msg.Method != nil:
			n := Notification{Method: *msg.Method, Params: msg.Params}
			out.Notifications = append(out.Notifications, n)
			if onNote != nil {
				onNote(n)
			}
		default:
			out.Body = raw
			return setResponse(out, msg, wantID)
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return protocolError("an SSE line is longer than %d bytes", maxResponseBytes)
		}
		return fmt.Errorf("mcptest: reading the event stream: %w", err)
	}
	return protocolError("the event stream ended before the response (%d notifications)", len(out.Notifications))
}

// isJSONObject reports whether data is a JSON object (leading space
// allowed).
func isJSONObject(data []byte) bool {
	d := bytes.TrimSpace(data)
	return len(d) > 0 && d[0] == '{'
}

// headerValue encodes a header value the way the transport requires: a
// value with non-ASCII or control characters, or blanks at either end,
// is sent as =?base64?…?=.
func headerValue(v string) string {
	plain := v == strings.TrimSpace(v)
	for i := 0; plain && i < len(v); i++ {
		if c := v[i]; c < 0x20 || c >= 0x7f {
			plain = false
		}
	}
	if plain && !strings.HasPrefix(v, "=?base64?") {
		return v
	}
	return "=?base64?" + base64.StdEncoding.EncodeToString([]byte(v)) + "?="
}
