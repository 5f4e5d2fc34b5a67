package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	mcpgoserver "github.com/mark3labs/mcp-go/server"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/baton-mcp/baton/legacy"
)

// The 2025-11-25 era: sessions (initialize, Mcp-Session-Id) and blocking
// server-to-client requests on the call's SSE stream. Scenarios
// session-call and session-elicit (legacy_client.go) run against these
// servers; they answer the same tools as the 2026-07-28 servers (echo,
// and confirm, which here asks its question as a real elicitation/create
// request and waits for the answer).

// legacyProtocol is the protocol version the 2025-11-25 scenarios negotiate.
const legacyProtocol = "2025-11-25"

// declinedText is what confirm answers when the user did not confirm.
const declinedText = "not confirmed"

// legacyServerNames are the servers of the 2025-11-25 scenarios, by the
// name of the 2026-07-28 server they stand beside; legacyKey is the key of
// their URL.
var legacyServerNames = []string{"baton", "gosdk", "mcpgo", "floor"}

func legacyKey(name string) string { return name + "/2025" }

// batonHoldFor is legacy.Options.HoldFor's default, which newBatonLegacy
// keeps: the memory table waits for it before it reads the records.
const batonHoldFor = 2 * time.Second

// legacyOptionsChanged is what newBatonLegacy changes from the defaults,
// printed beside the 2025-11-25 figures.
const legacyOptionsChanged = "legacy.Options{MaxSessions: 1<<20, MaxSessionsPerClient: 1<<20}; everything else at the defaults (MaxAnswersPerSecond 32 included)"

// newBatonLegacy is Baton's endpoint as users mount it for both eras: the
// same server as newBaton (same tools, options and limits) with
// server.Options.Legacy set to legacy.New, served by the *server.Server
// itself. The legacy options are the defaults except the session limits,
// in total and per client address, raised (legacyOptionsChanged): every
// worker and the memory table's 1000 sessions come from 127.0.0.1, as
// the users behind one NAT would (docs/deployment.md, "Quotas"). The
// answers per session per second stay at the default: an answer the
// server waits for is never refused for rate.
func newBatonLegacy() (http.Handler, error) {
	lg := legacy.New(&legacy.Options{
		MaxSessions:          1 << 20,
		MaxSessionsPerClient: 1 << 20,
	})
	return newBatonWith(lg)
}

// newGoSDKStateful is the go-sdk v1.8.0 server with its Streamable HTTP
// handler in its default, stateful mode (sessions, SSE responses, no event
// store, no logger). confirm asks with ServerSession.Elicit, which sends
// elicitation/create on the call's stream, waits for the answer, and
// validates accepted content against the requested schema itself.
func newGoSDKStateful() (http.Handler, error) {
	s := mcp.NewServer(&mcp.Implementation{Name: "gosdk-bench", Version: "1.0.0"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Returns its text"},
		func(_ context.Context, _ *mcp.CallToolRequest, in sdkEchoIn) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil, nil
		})
	schema, _, err := confirmSchema()
	if err != nil {
		return nil, err
	}
	mcp.AddTool(s, &mcp.Tool{Name: "confirm", Description: "Asks for a confirmation, then answers"},
		func(ctx context.Context, req *mcp.CallToolRequest, _ sdkConfirmIn) (*mcp.CallToolResult, any, error) {
			res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Mode: "form", Message: "Proceed?", RequestedSchema: schema})
			if err != nil {
				return nil, nil, err
			}
			if ok, _ := res.Content["confirm"].(bool); res.Action != "accept" || !ok {
				return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: declinedText}}}, nil, nil
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: confirmText}}}, nil, nil
		})
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{}), nil
}

// newMCPGoStateful is the mcp-go v1.2.1 server with its Streamable HTTP
// server in stateful mode (WithStateful: session ids it issued and
// validates; its default manager generates ids without checking them),
// elicitation enabled, input schema validation on (as in newMCPGo).
// confirm asks with MCPServer.RequestElicitation, which sends
// elicitation/create on the call's stream (upgraded to SSE) and waits;
// mcp-go does not validate the answer, so the handler does, with the
// schema of confirmSchema (as the 2026-07-28 confirm handlers do).
func newMCPGoStateful() (http.Handler, error) {
	s := mcpgoserver.NewMCPServer("mcpgo-bench", "1.0.0",
		mcpgoserver.WithToolCapabilities(false),
		mcpgoserver.WithInputSchemaValidation(),
		mcpgoserver.WithElicitation(),
	)
	s.AddTool(mcpgo.NewTool("echo",
		mcpgo.WithDescription("Returns its text"),
		mcpgo.WithInputSchema[sdkEchoIn]()),
		mcpgo.NewTypedToolHandler(func(_ context.Context, _ mcpgo.CallToolRequest, in sdkEchoIn) (*mcpgo.CallToolResult, error) {
			return mcpgo.NewToolResultText(in.Text), nil
		}))
	schema, resolved, err := confirmSchema()
	if err != nil {
		return nil, err
	}
	s.AddTool(mcpgo.NewTool("confirm",
		mcpgo.WithDescription("Asks for a confirmation, then answers"),
		mcpgo.WithInputSchema[sdkConfirmIn]()),
		mcpgo.NewTypedToolHandler(func(ctx context.Context, _ mcpgo.CallToolRequest, _ sdkConfirmIn) (*mcpgo.CallToolResult, error) {
			res, err := mcpgoserver.ServerFromContext(ctx).RequestElicitation(ctx, mcpgo.ElicitationRequest{
				Request: mcpgo.Request{Method: string(mcpgo.MethodElicitationCreate)},
				Params:  mcpgo.ElicitationParams{Mode: mcpgo.ElicitationModeForm, Message: "Proceed?", RequestedSchema: schema},
			})
			if err != nil {
				return nil, err
			}
			if res.Action != mcpgo.ElicitationResponseActionAccept {
				return mcpgo.NewToolResultError(declinedText), nil
			}
			if err := resolved.Validate(res.Content); err != nil {
				return nil, fmt.Errorf("invalid answer: %w", err)
			}
			content, _ := res.Content.(map[string]any)
			if ok, _ := content["confirm"].(bool); !ok {
				return mcpgo.NewToolResultError(declinedText), nil
			}
			return mcpgo.NewToolResultText(confirmText), nil
		}))
	return mcpgoserver.NewStreamableHTTPServer(s,
		mcpgoserver.WithStateful(true),
		mcpgoserver.WithStreamableHTTPLogger(slog.New(slog.DiscardHandler)),
	), nil
}

// ---------------------------------------------------------------- floor

// legacyFloor is the bare net/http floor of the 2025-11-25 scenarios: the
// HTTP exchanges Baton makes (status codes, content types, SSE framing
// with event ids, one request per exchange) with fixed bytes. It keeps
// what it cannot do without: the session ids it issued (a request with
// another is refused, 404), and the calls waiting for an answer (by the
// elicitation's id, with their session), so that a call's result goes out
// only once its answer has been POSTed in its session. It decodes each
// frame with encoding/json (as the 2026-07-28 floor does) and nothing
// else: no capabilities, no schema, no event store, no timeouts.
type legacyFloor struct {
	next     atomic.Int64
	mu       sync.Mutex
	sessions map[string]bool
	waiting  map[int64]floorWait
	// skip, for tests only, makes the floor skip work (see
	// TestLegacyChecksBite): "result-first" answers confirm without
	// waiting for the answer, "any-session" accepts any session id,
	// "fixed-id" sends every elicitation with id 1.
	skip string
}

type floorWait struct {
	sid    string
	answer chan bool // true: accepted with confirm true
}

func newLegacyFloor() *legacyFloor {
	return &legacyFloor{sessions: map[string]bool{}, waiting: map[int64]floorWait{}}
}

// floorFrame is all the floor decodes of a 2025-11-25 message.
type floorFrame struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		Name string `json:"name"`
	} `json:"params"`
	Result *struct {
		Action  string `json:"action"`
		Content struct {
			Confirm bool `json:"confirm"`
		} `json:"content"`
	} `json:"result"`
}

var (
	floorInitResult  = []byte(`,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"floor","version":"1.0.0"}}}`)
	floorEchoResult  = []byte(`,"result":{"content":[{"type":"text","text":"hello"}]}}`)
	floorConfirmed   = []byte(`,"result":{"content":[{"type":"text","text":"confirmed"}]}}`)
	floorDeclined    = []byte(`,"result":{"content":[{"type":"text","text":"not confirmed"}],"isError":true}}`)
	floorElicitHead  = []byte(`{"jsonrpc":"2.0","id":`)
	floorElicitTail  = []byte(`,"method":"elicitation/create","params":{"mode":"form","message":"Proceed?","requestedSchema":{"type":"object","properties":{"confirm":{"type":"boolean"}},"required":["confirm"]}}}`)
	floorNoSession   = []byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32001,"message":"Session not found"}}`)
	floorNotWaiting  = []byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32602,"message":"no request waits for this answer"}}`)
	floorStreamID    = "floorfloorfloor0"
	floorContentSSE  = []string{"text/event-stream"}
	floorContentJSON = []string{"application/json"}
	floorNoCache     = []string{"no-cache"}
	floorNoBuffering = []string{"no"}
)

func floorJSON(w http.ResponseWriter, status int, body []byte) {
	w.Header()["Content-Type"] = floorContentJSON
	w.WriteHeader(status)
	w.Write(body)
}

func floorResult(id json.RawMessage, result []byte) []byte {
	b := make([]byte, 0, 24+len(id)+len(result))
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = append(b, id...)
	return append(b, result...)
}

// floorEvent writes one SSE event the way Baton frames it and flushes it.
func floorEvent(w http.ResponseWriter, pos int, data []byte) {
	b := make([]byte, 0, len(data)+48)
	b = append(b, "id: "...)
	b = append(b, floorStreamID...)
	b = append(b, '.')
	b = strconv.AppendInt(b, int64(pos), 10)
	b = append(b, "\nevent: message\ndata: "...)
	b = append(b, data...)
	b = append(b, "\n\n"...)
	w.Write(b)
	w.(http.Flusher).Flush()
}

func (f *legacyFloor) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var m floorFrame
	if r.Method != http.MethodPost || json.NewDecoder(r.Body).Decode(&m) != nil {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	sid := r.Header.Get("Mcp-Session-Id")
	if m.Method == "initialize" && sid == "" {
		var b [24]byte
		rand.Read(b[:])
		sid = base64.RawURLEncoding.EncodeToString(b[:])
		f.mu.Lock()
		f.sessions[sid] = true
		f.mu.Unlock()
		w.Header().Set("Mcp-Session-Id", sid)
		floorJSON(w, http.StatusOK, floorResult(m.ID, floorInitResult))
		return
	}
	f.mu.Lock()
	known := f.sessions[sid]
	f.mu.Unlock()
	if !known && f.skip != "any-session" {
		floorJSON(w, http.StatusNotFound, floorNoSession)
		return
	}
	switch {
	case m.Result != nil: // an answer
		n, err := strconv.ParseInt(string(m.ID), 10, 64)
		f.mu.Lock()
		wt, ok := f.waiting[n]
		if ok && wt.sid == sid {
			delete(f.waiting, n)
		}
		f.mu.Unlock()
		if err != nil || !ok || wt.sid != sid {
			floorJSON(w, http.StatusBadRequest, floorNotWaiting)
			return
		}
		wt.answer <- m.Result.Action == "accept" && m.Result.Content.Confirm
		w.WriteHeader(http.StatusAccepted)
	case len(m.ID) == 0: // a notification
		w.WriteHeader(http.StatusAccepted)
	case m.Method == "tools/call" && m.Params.Name == "echo":
		floorJSON(w, http.StatusOK, floorResult(m.ID, floorEchoResult))
	case m.Method == "tools/call" && m.Params.Name == "confirm":
		n := f.next.Add(1)
		if f.skip == "fixed-id" {
			n = 1
		}
		wt := floorWait{sid: sid, answer: make(chan bool, 1)}
		f.mu.Lock()
		f.waiting[n] = wt
		f.mu.Unlock()
		h := w.Header()
		h["Content-Type"], h["Cache-Control"], h["X-Accel-Buffering"] = floorContentSSE, floorNoCache, floorNoBuffering
		w.WriteHeader(http.StatusOK)
		ev := strconv.AppendInt(append([]byte(nil), floorElicitHead...), n, 10)
		floorEvent(w, 1, append(ev, floorElicitTail...))
		ok := true
		if f.skip != "result-first" {
			select {
			case ok = <-wt.answer:
			case <-r.Context().Done():
				f.mu.Lock()
				delete(f.waiting, n)
				f.mu.Unlock()
				return
			}
		}
		res := floorDeclined
		if ok {
			res = floorConfirmed
		}
		floorEvent(w, 2, floorResult(m.ID, res))
	default:
		floorJSON(w, http.StatusBadRequest, floorResult(m.ID, floorUnknown))
	}
}

// newLegacyHandlers builds the 2025-11-25 servers, by legacyKey.
func newLegacyHandlers() (map[string]http.Handler, error) {
	b, err := newBatonLegacy()
	if err != nil {
		return nil, fmt.Errorf("baton (legacy): %w", err)
	}
	sdk, err := newGoSDKStateful()
	if err != nil {
		return nil, fmt.Errorf("gosdk (stateful): %w", err)
	}
	mgo, err := newMCPGoStateful()
	if err != nil {
		return nil, fmt.Errorf("mcpgo (stateful): %w", err)
	}
	return map[string]http.Handler{
		legacyKey("baton"): b,
		legacyKey("gosdk"): sdk,
		legacyKey("mcpgo"): mgo,
		legacyKey("floor"): newLegacyFloor(),
	}, nil
}

// startLegacyServers starts the 2025-11-25 servers, each on its own
// listener, and adds their URLs to urls under legacyKey.
func startLegacyServers(urls map[string]string) error {
	handlers, err := newLegacyHandlers()
	if err != nil {
		return err
	}
	for _, name := range legacyServerNames {
		u, err := listen(handlers[legacyKey(name)])
		if err != nil {
			return fmt.Errorf("%s (2025-11-25): listen: %w", name, err)
		}
		urls[legacyKey(name)] = u
	}
	return nil
}
