package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/baton-mcp/baton/elicit"
	batonmcp "github.com/baton-mcp/baton/mcp"
	"github.com/baton-mcp/baton/mrtr"
	"github.com/baton-mcp/baton/server"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The texts every server answers with; the load generator checks them.
const (
	echoText    = "hello"
	confirmText = "confirmed"
	submitTool  = "submit"
	submitText  = "submitted"
	stateTTL    = 10 * time.Minute
)

// benchKey is the fixed state key of the Baton server and of the go-sdk
// server's sealer (32 bytes, so mrtr.MinKeySize is met).
var benchKey = []byte("baton-bench-fixed-state-key-0001")

// listen serves h on 127.0.0.1:0 with plain net/http and returns the
// endpoint URL.
func listen(h http.Handler) (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	return "http://" + ln.Addr().String() + "/mcp", nil
}

// ---------------------------------------------------------------- Baton

// newBatonWith is newBaton serving 2025-11-25 sessions too when lg is not
// nil (server.Options.Legacy: the one endpoint users mount).
func newBatonWith(lg server.LegacyAdapter) (*server.Server, error) {
	return newBaton(func(o *server.Options) {
		if lg != nil {
			o.Legacy = lg
		}
	})
}

// newBaton builds the Baton server: a fixed key ring, a discard logger,
// the default limits written out (4 MiB bodies, 64 levels of nesting,
// 64 KiB states: the hostile bodies are built against them), otherwise
// the defaults (Host/Origin checks, 10-minute state TTL). echo and confirm
// are typed tools (server.AddTool over the same input structs as the
// go-sdk and mcp-go servers, so the same inferred schemas): arguments are
// validated against the schema and decoded; confirm asks with req.Elicit,
// so round 1 seals the state and round 2 verifies it and validates the
// answer before the handler sees it; ask is the rounds scenario's tool
// (rounds.go); submit is the hostile scenario's target. Each of more may
// change the options before the server is built (the variants).
func newBaton(more ...func(*server.Options)) (*server.Server, error) {
	ring, err := mrtr.NewKeyRing(mrtr.Key{ID: "bench-1", Secret: benchKey})
	if err != nil {
		return nil, err
	}
	opts := &server.Options{
		StateKeys:       ring,
		StateTTL:        stateTTL,
		MaxStateSize:    serverMaxState,
		MaxRequestBytes: serverMaxBody,
		MaxJSONDepth:    serverMaxDepth,
		Logger:          slog.New(slog.DiscardHandler),
	}
	for _, f := range more {
		f(opts)
	}
	srv, err := server.New(batonmcp.Implementation{Name: "baton-bench", Version: "1.0.0"}, opts)
	if err != nil {
		return nil, err
	}
	err = server.AddTool(srv, server.Tool{Name: "echo", Description: "Returns its text"},
		func(ctx context.Context, req *server.ToolRequest, in sdkEchoIn) (*server.ToolResult, error) {
			return server.TextResult(in.Text), nil
		})
	if err != nil {
		return nil, err
	}
	form, err := elicit.NewForm("Proceed?", elicit.Boolean("confirm").Required())
	if err != nil {
		return nil, err
	}
	err = server.AddTool(srv, server.Tool{Name: "confirm", Description: "Asks for a confirmation, then answers"},
		func(ctx context.Context, req *server.ToolRequest, in sdkConfirmIn) (*server.ToolResult, error) {
			ok, err := askConfirm(ctx, req, form)
			if err != nil {
				return nil, err
			}
			if !ok {
				return server.ErrorResult("not confirmed"), nil
			}
			return server.TextResult(confirmText), nil
		})
	if err != nil {
		return nil, err
	}
	if err := addAskTool(srv); err != nil {
		return nil, err
	}
	// submit is the hostile scenario's target: the input schema of the
	// example server's confirm_transfer plus an optional note (which
	// pads the benign bodies), and one form elicitation, so a retry takes
	// the whole stateful path (inputResponses, requestState, arguments
	// digest, schema validation, answer validation). Its answers stay
	// small whatever the arguments.
	err = srv.AddTool(server.Tool{
		Name:        submitTool,
		Description: "Asks for a confirmation, then accepts the submission",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"to":{"type":"string","minLength":1},"amount":{"type":"number","exclusiveMinimum":0},"note":{"type":"string"}},"required":["to","amount"],"additionalProperties":false}`),
	}, func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
		var in struct {
			To     string  `json:"to"`
			Amount float64 `json:"amount"`
			Note   string  `json:"note"`
		}
		if err := req.Bind(&in); err != nil {
			return nil, err
		}
		ok, err := askConfirm(ctx, req, form)
		if err != nil {
			return nil, err
		}
		if !ok {
			return server.ErrorResult("not confirmed"), nil
		}
		return server.TextResult(submitText), nil
	})
	if err != nil {
		return nil, err
	}
	return srv, nil
}

// ---------------------------------------------------------------- go-sdk

type sdkEchoIn struct {
	Text string `json:"text"`
}

type sdkConfirmIn struct {
	ID int `json:"id"`
}

// newGoSDK builds the go-sdk v1.8.0 server, served by its Streamable HTTP
// handler in stateless mode with JSON responses and no logger (nil: no
// logging). Tools are added with the typed mcp.AddTool, so arguments are
// unmarshalled and validated against the schema inferred from the input
// struct.
//
// The SDK's MRTR support (v1.8.0, SEP-2322) is the wire shape only: a
// handler returns a CallToolResult with InputRequests and an opaque
// RequestState, and a retry's InputResponses arrive decoded in
// req.Params. The SDK neither seals nor verifies requestState nor
// validates answers against the schema that was sent. The confirm handler
// therefore does it itself with the closest equivalent (sdkSealer): an
// AES-256-GCM sealed state bound to the method, tool, a digest of the
// decoded arguments, a digest of the question and an expiry, verified on
// the retry; and the accepted content is validated with the SDK's own
// schema library (google/jsonschema-go, resolved once).
func newGoSDK() (http.Handler, error) {
	s := mcp.NewServer(&mcp.Implementation{Name: "gosdk-bench", Version: "1.0.0"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Returns its text"},
		func(_ context.Context, _ *mcp.CallToolRequest, in sdkEchoIn) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil, nil
		})

	schema, resolved, err := confirmSchema()
	if err != nil {
		return nil, err
	}
	question := &mcp.ElicitParams{Mode: "form", Message: "Proceed?", RequestedSchema: schema}
	qjson, err := json.Marshal(question)
	if err != nil {
		return nil, err
	}
	sealer, err := newSDKSealer(benchKey, stateTTL)
	if err != nil {
		return nil, err
	}
	qdigest := digest(qjson)

	mcp.AddTool(s, &mcp.Tool{Name: "confirm", Description: "Asks for a confirmation, then answers"},
		func(ctx context.Context, req *mcp.CallToolRequest, in sdkConfirmIn) (*mcp.CallToolResult, any, error) {
			args, err := json.Marshal(in) // canonical for this struct
			if err != nil {
				return nil, nil, err
			}
			bind := stateBinding{Method: "tools/call", Tool: "confirm", Args: digest(args), Questions: qdigest}
			ask := func() (*mcp.CallToolResult, any, error) {
				st, err := sealer.seal(bind)
				if err != nil {
					return nil, nil, err
				}
				return &mcp.CallToolResult{
					InputRequests: mcp.InputRequestMap{"confirm": question},
					RequestState:  st,
				}, nil, nil
			}
			if req.Params.RequestState == "" {
				return ask()
			}
			if err := sealer.open(req.Params.RequestState, bind); err != nil {
				return nil, nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "invalid requestState: " + err.Error()}
			}
			resp, ok := req.Params.InputResponses["confirm"].(*mcp.ElicitResult)
			if !ok || resp == nil {
				return ask() // missing answer: ask again (SEP-2322)
			}
			if resp.Action != "accept" {
				return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "not confirmed"}}}, nil, nil
			}
			if err := resolved.Validate(resp.Content); err != nil {
				return nil, nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "invalid answer: " + err.Error()}
			}
			if ok, _ := resp.Content["confirm"].(bool); !ok {
				return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "not confirmed"}}}, nil, nil
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: confirmText}}}, nil, nil
		})

	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s },
		&mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true}), nil
}

// ---------------------------------------------------------------- floor

// floorRequest is all the floor decodes: the JSON-RPC frame with id,
// method and params kept raw.
type floorRequest struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params"`
}

// floorParams tells the floor which tool and which round it is.
type floorParams struct {
	Name         string `json:"name"`
	RequestState string `json:"requestState"`
}

var (
	floorEcho    = []byte(`,"result":{"resultType":"complete","content":[{"type":"text","text":"hello"}],"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"floor","version":"1.0.0"}}}}`)
	floorRound1  = []byte(`,"result":{"resultType":"input_required","inputRequests":{"confirm":{"method":"elicitation/create","params":{"mode":"form","message":"Proceed?","requestedSchema":{"type":"object","properties":{"confirm":{"type":"boolean"}},"required":["confirm"]}}}},"requestState":"floor-fixed-state","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"floor","version":"1.0.0"}}}}`)
	floorRound2  = []byte(`,"result":{"resultType":"complete","content":[{"type":"text","text":"confirmed"}],"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"floor","version":"1.0.0"}}}}`)
	floorUnknown = []byte(`,"error":{"code":-32602,"message":"unknown tool"}}`)
)

// floorHandler is the bare net/http floor: decode the frame (and the two
// params fields it dispatches on) with encoding/json and write a fixed
// result. It ignores headers and _meta, verifies nothing and keeps no
// state.
func floorHandler(w http.ResponseWriter, r *http.Request) {
	var req floorRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Method != "tools/call" {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	var p floorParams
	if err := json.Unmarshal(req.Params, &p); err != nil {
		http.Error(w, "bad params", http.StatusBadRequest)
		return
	}
	body := floorUnknown
	switch {
	case p.Name == "echo":
		body = floorEcho
	case p.Name == "confirm" && p.RequestState == "":
		body = floorRound1
	case p.Name == "confirm":
		body = floorRound2
	}
	w.Header().Set("Content-Type", "application/json")
	buf := make([]byte, 0, 32+len(req.ID)+len(body))
	buf = append(buf, `{"jsonrpc":"2.0","id":`...)
	buf = append(buf, req.ID...)
	buf = append(buf, body...)
	w.Write(buf)
}

// ---------------------------------------------------------------- all

// serverNames are the servers in their default order.
var serverNames = []string{"baton", "baton-echo", "gosdk", "mcpgo", "floor"}

// newHandlers builds every server's http.Handler.
func newHandlers() (map[string]http.Handler, *server.Server, error) {
	b, err := newBaton()
	if err != nil {
		return nil, nil, fmt.Errorf("baton: %w", err)
	}
	sdk, err := newGoSDK()
	if err != nil {
		return nil, nil, fmt.Errorf("gosdk: %w", err)
	}
	mgo, err := newMCPGo()
	if err != nil {
		return nil, nil, fmt.Errorf("mcpgo: %w", err)
	}
	floor, err := newCarriedFloor() // floorHandler, and the ask tool's floor (carried_floor.go)
	if err != nil {
		return nil, nil, err
	}
	handlers := map[string]http.Handler{
		"baton":      b,             // *server.Server as http.Handler
		"baton-echo": behindEcho(b), // the same server behind echo
		"gosdk":      sdk,
		"mcpgo":      mgo,
		"floor":      floor,
	}
	if err := addVariants(handlers, b); err != nil { // variants.go
		return nil, nil, err
	}
	return handlers, b, nil
}

// startServers starts every server on its own listener.
func startServers() (map[string]string, *server.Server, error) {
	handlers, b, err := newHandlers()
	if err != nil {
		return nil, nil, err
	}
	urls := map[string]string{}
	for _, name := range append(slices.Clone(serverNames), variantNames...) {
		u, err := listen(handlers[name])
		if err != nil {
			return nil, nil, errors.Join(fmt.Errorf("%s: listen", name), err)
		}
		urls[name] = endpointURL(u, handlers[name])
	}
	if err := startLegacyServers(urls); err != nil {
		return nil, nil, err
	}
	return urls, b, nil
}

// askConfirm asks form under the key "confirm" and says whether the user
// accepted with confirm true; err is input_required until answered.
func askConfirm(ctx context.Context, req *server.ToolRequest, form *elicit.Request) (bool, error) {
	answer, err := req.Elicit(ctx, form, server.WithKey("confirm"))
	if err != nil {
		return false, err
	}
	var a struct {
		Confirm bool `json:"confirm"`
	}
	return answer.Action == elicit.ActionAccept && answer.Decode(&a) == nil && a.Confirm, nil
}

// behindEcho serves h at every path of an echo application for the MCP
// endpoint's methods, through echo.WrapHandler (as docs/guide.md shows).
func behindEcho(h http.Handler) http.Handler {
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	eh := echo.WrapHandler(h)
	for _, method := range []string{http.MethodPost, http.MethodGet, http.MethodDelete} {
		e.Add(method, "/*", eh)
	}
	return e
}
