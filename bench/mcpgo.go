package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	mcpgoserver "github.com/mark3labs/mcp-go/server"
)

// newMCPGo builds the github.com/mark3labs/mcp-go v1.2.1 server, served by
// its Streamable HTTP server (an http.Handler) in stateless mode
// (WithStateLess; a 2026-07-28 request is served by an ephemeral session of
// its own whatever the mode, and Mcp-Method/Mcp-Name are checked against
// the body) with a discarding transport logger and no request logger.
// Tools are declared with the input schema inferred from the same input
// structs as the go-sdk server's (mcp.WithInputSchema, google/jsonschema-go),
// arguments are validated against it (WithInputSchemaValidation, which is
// opt-in in mcp-go; the validator is santhosh-tekuri/jsonschema/v6) and bound
// with mcp.NewTypedToolHandler.
//
// mcp-go's MRTR (SEP-2322) is, like the go-sdk's, the wire shape only: a
// handler returns server.NewInputRequestBuilder(state).Elicit(...).ToolResult()
// (resultType input_required, the input requests, an opaque requestState),
// and a retry's inputResponses and requestState arrive in req.Params, the
// answer decoded on demand by server.ElicitationResponse. It neither seals
// nor verifies the state (its example carries "env=production" in clear)
// nor validates answers against the schema sent. So the confirm handler
// adds exactly what the go-sdk server's adds, with the same helpers: the
// state is the binding (method, tool, SHA-256 of the re-marshalled typed
// arguments, SHA-256 of the question as mcp-go marshals it) sealed by
// sdkSealer (AES-256-GCM, expiry), opened and compared on the retry; a
// missing answer is asked again; accepted content is validated with the
// schema from confirmSchema. One difference the SDK imposes: a tool
// handler cannot choose the JSON-RPC error code (every handler error is
// -32603), so a refused state or answer is -32603 with the reason in the
// message where the go-sdk server answers -32602.
func newMCPGo() (http.Handler, error) {
	s := mcpgoserver.NewMCPServer("mcpgo-bench", "1.0.0",
		mcpgoserver.WithToolCapabilities(false),
		mcpgoserver.WithInputSchemaValidation(),
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
	question := mcpgo.ElicitationParams{Mode: mcpgo.ElicitationModeForm, Message: "Proceed?", RequestedSchema: schema}
	qjson, err := json.Marshal(question)
	if err != nil {
		return nil, err
	}
	qdigest := digest(qjson)
	sealer, err := newSDKSealer(benchKey, stateTTL)
	if err != nil {
		return nil, err
	}

	s.AddTool(mcpgo.NewTool("confirm",
		mcpgo.WithDescription("Asks for a confirmation, then answers"),
		mcpgo.WithInputSchema[sdkConfirmIn]()),
		mcpgo.NewTypedToolHandler(func(_ context.Context, req mcpgo.CallToolRequest, in sdkConfirmIn) (*mcpgo.CallToolResult, error) {
			args, err := json.Marshal(in) // canonical for this struct
			if err != nil {
				return nil, err
			}
			bind := stateBinding{Method: "tools/call", Tool: "confirm", Args: digest(args), Questions: qdigest}
			ask := func() (*mcpgo.CallToolResult, error) {
				st, err := sealer.seal(bind)
				if err != nil {
					return nil, err
				}
				return mcpgoserver.NewInputRequestBuilder(st).Elicit("confirm", question).ToolResult(), nil
			}
			if req.Params.RequestState == "" {
				return ask()
			}
			if err := sealer.open(req.Params.RequestState, bind); err != nil {
				return nil, fmt.Errorf("invalid requestState: %w", err)
			}
			resp := mcpgoserver.ElicitationResponse(req.Params.InputResponses, "confirm")
			if resp == nil {
				return ask() // missing (or undecodable) answer: ask again (SEP-2322)
			}
			if resp.Action != mcpgo.ElicitationResponseActionAccept {
				return mcpgo.NewToolResultError("not confirmed"), nil
			}
			if err := resolved.Validate(resp.Content); err != nil {
				return nil, fmt.Errorf("invalid answer: %w", err)
			}
			content, _ := resp.Content.(map[string]any)
			if ok, _ := content["confirm"].(bool); !ok {
				return mcpgo.NewToolResultError("not confirmed"), nil
			}
			return mcpgo.NewToolResultText(confirmText), nil
		}))

	return mcpgoserver.NewStreamableHTTPServer(s,
		mcpgoserver.WithStateLess(true),
		mcpgoserver.WithStreamableHTTPLogger(slog.New(slog.DiscardHandler)),
	), nil
}
