package main

// Tools that answer at once: content of every kind, notifications streamed
// before the result, a rich input schema, a header mirrored from an
// argument, and changes to the tool and prompt lists. The conformance
// suite's tools-call-* scenarios (both requirement sets) and its
// server-stateless and header scenarios call them.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/baton-mcp/baton/mcp"
	"github.com/baton-mcp/baton/server"
)

// A 1×1 PNG and a minimal WAV, as the conformance fixtures expect.
const (
	pngBase64 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
	wavBase64 = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA="
)

var (
	pngBlock = mcp.Block{Type: mcp.BlockImage, Data: pngBase64, MimeType: "image/png"}
	wavBlock = mcp.Block{Type: mcp.BlockAudio, Data: wavBase64, MimeType: "audio/wav"}
)

func addToolFixtures(srv *server.Server) error {
	lists := &listToggles{srv: srv}
	return addTools(srv, []toolFixture{
		// Content.
		{tool: noArgs("test_simple_text", "Returns simple text"), handler: simpleText, opts: []server.ToolOption{server.RequireScopes(simpleTextScopes...)}},
		{tool: noArgs("test_image_content", "Returns a PNG image"), handler: imageContent},
		{tool: noArgs("test_audio_content", "Returns a WAV clip"), handler: audioContent},
		{tool: noArgs("test_embedded_resource", "Returns an embedded resource"), handler: embeddedResource},
		{tool: noArgs("test_multiple_content_types", "Returns text, an image and a resource"), handler: mixedContent},
		{tool: noArgs("test_error_handling", "Always fails"), handler: failing},
		{tool: noArgs("test_reconnection", "Returns text after a short pause"), handler: reconnection},
		// Notifications before the result.
		{tool: noArgs("test_tool_with_logging", "Logs three messages"), handler: threeLogLines},
		{tool: noArgs("test_logging_tool", "Logs only when the request asked for logs"), handler: logOnlyWhenAsked},
		{tool: noArgs("test_tool_with_progress", "Reports progress 0, 50 and 100"), handler: threeProgressSteps},
		// Schemas and headers.
		{tool: schema2020Tool, handler: echoArguments},
		{tool: headerParamTool, handler: echoRegion},
		// List changes.
		{tool: noArgs("test_trigger_tool_change", "Adds or removes a dynamic tool"), handler: lists.toggleTool},
		{tool: noArgs("test_trigger_prompt_change", "Adds or removes a dynamic prompt"), handler: lists.togglePrompt},
	})
}

// simpleText is test_simple_text (tools-call-simple-text): one text block
// with exactly this text.
func simpleText(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
	return server.TextResult("This is a simple text response for testing."), nil
}

// imageContent is test_image_content (tools-call-image): the 1×1 PNG,
// base64, image/png.
func imageContent(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
	return &server.ToolResult{Content: []mcp.Block{pngBlock}}, nil
}

// audioContent is test_audio_content (tools-call-audio): the minimal WAV,
// base64, audio/wav.
func audioContent(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
	return &server.ToolResult{Content: []mcp.Block{wavBlock}}, nil
}

// embeddedResource is test_embedded_resource
// (tools-call-embedded-resource): an embedded text/plain resource at
// test://embedded-resource.
func embeddedResource(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
	return &server.ToolResult{Content: []mcp.Block{
		mcp.Embedded(mcp.TextContents("test://embedded-resource", "text/plain", "This is an embedded resource content.")),
	}}, nil
}

// mixedContent is test_multiple_content_types (tools-call-mixed-content):
// text, the PNG, and an embedded JSON resource at
// test://mixed-content-resource, in that order.
func mixedContent(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
	return &server.ToolResult{Content: []mcp.Block{
		mcp.Text("Multiple content types test:"),
		pngBlock,
		mcp.Embedded(mcp.TextContents("test://mixed-content-resource", "application/json", `{"test":"data","value":123}`)),
	}}, nil
}

// failing is test_error_handling (tools-call-error): a tool execution
// failure, isError true with this text. A handler's plain error becomes
// exactly that.
func failing(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
	return nil, errors.New("This tool intentionally returns an error for testing")
}

// reconnection is test_reconnection (server-sse-polling, pending; the
// client's sse-retry): it ends its response stream at once (SSE polling:
// a 2025-11-25 client gets an event id and a retry field, and reconnects
// with Last-Event-ID; elsewhere nothing happens), then answers with plain
// text after a pause.
func reconnection(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
	req.CloseStream()
	if err := sleep(ctx, 100*time.Millisecond); err != nil {
		return nil, err
	}
	return server.TextResult("Reconnection test completed successfully. If you received this, the client properly reconnected after stream closure."), nil
}

// threeLogLines is test_tool_with_logging (tools-call-with-logging): three
// info notifications/message from logger test_logger, about 50 ms apart,
// then the result.
func threeLogLines(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
	for i, m := range []string{"Tool execution started", "Tool processing data", "Tool execution completed"} {
		if i > 0 {
			if err := sleep(ctx, 50*time.Millisecond); err != nil {
				return nil, err
			}
		}
		if err := req.Log(ctx, slog.LevelInfo, "test_logger", m); err != nil {
			return nil, err
		}
	}
	return server.TextResult("Tool with logging executed successfully"), nil
}

// logOnlyWhenAsked is test_logging_tool (server-stateless): it logs, and
// the server must send no notifications/message when the request's
// envelope set no logLevel (req.Log then does nothing).
func logOnlyWhenAsked(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
	if err := req.Log(ctx, slog.LevelInfo, "test_logger", "logging tool ran"); err != nil {
		return nil, err
	}
	return server.TextResult("Logging tool completed"), nil
}

// threeProgressSteps is test_tool_with_progress (tools-call-with-progress):
// progress 0, 50 and 100 of 100 under the request's progressToken, about
// 50 ms apart.
func threeProgressSteps(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
	for i, p := range []float64{0, 50, 100} {
		if i > 0 {
			if err := sleep(ctx, 50*time.Millisecond); err != nil {
				return nil, err
			}
		}
		if err := req.Progress(ctx, p, 100, fmt.Sprintf("Completed step %d of 3", i+1)); err != nil {
			return nil, err
		}
	}
	return server.TextResult("Progress test completed"), nil
}

// schema2020Tool is json_schema_2020_12_tool (json-schema-2020-12): its
// input schema uses $schema 2020-12, $defs with an $anchor, $ref,
// allOf/anyOf, if/then/else and additionalProperties false, and tools/list
// must show it exactly as written.
var schema2020Tool = server.Tool{
	Name:        "json_schema_2020_12_tool",
	Description: "Tool with JSON Schema 2020-12 features",
	InputSchema: json.RawMessage(`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","$defs":{"address":{"$anchor":"addressDef","type":"object","properties":{"street":{"type":"string"},"city":{"type":"string"}}}},"properties":{"name":{"type":"string"},"address":{"$ref":"#/$defs/address"},"contactMethod":{"type":"string","enum":["phone","email"]},"phone":{"type":"string"},"email":{"type":"string"}},"allOf":[{"anyOf":[{"required":["phone"]},{"required":["email"]}]}],"if":{"properties":{"contactMethod":{"const":"phone"}},"required":["contactMethod"]},"then":{"required":["phone"]},"else":{"required":["email"]},"additionalProperties":false}`),
}

// echoArguments answers json_schema_2020_12_tool with the arguments it
// got, which the server validated against that schema first.
func echoArguments(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
	return server.TextResult("JSON Schema 2020-12 tool called with " + string(req.Arguments)), nil
}

// headerParamTool is test_header_param (http-custom-header-server-validation):
// its region argument is marked x-mcp-header, so a client mirrors it into
// the Mcp-Param-Region header and the server refuses a call whose header
// and argument disagree.
var headerParamTool = server.Tool{
	Name:        "test_header_param",
	Description: "Echoes a region that is mirrored into the Mcp-Param-Region header",
	InputSchema: json.RawMessage(`{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}},"required":["region"]}`),
}

// echoRegion answers test_header_param with the region.
func echoRegion(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
	var in struct {
		Region string `json:"region"`
	}
	if err := req.Bind(&in); err != nil {
		return nil, err
	}
	return server.TextResult("Region: " + in.Region), nil
}

// listToggles serves the list-change triggers of server-stateless: each
// call of test_trigger_tool_change adds test_dynamic_tool, or removes it
// if present, and test_trigger_prompt_change does the same with
// test_dynamic_prompt; the server then sends
// notifications/tools/list_changed (or prompts) to every
// subscriptions/listen stream that asked for it.
type listToggles struct {
	srv *server.Server
	mu  sync.Mutex // one toggle at a time, so a check and its change agree
}

func (l *listToggles) toggleTool(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.srv.RemoveTool("test_dynamic_tool") {
		return server.TextResult("Removed test_dynamic_tool"), nil
	}
	err := l.srv.AddTool(noArgs("test_dynamic_tool", "A tool that comes and goes"), func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
		return server.TextResult("Dynamic tool"), nil
	})
	if err != nil {
		return nil, err
	}
	return server.TextResult("Added test_dynamic_tool"), nil
}

func (l *listToggles) togglePrompt(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.srv.RemovePrompt("test_dynamic_prompt") {
		return server.TextResult("Removed test_dynamic_prompt"), nil
	}
	err := l.srv.AddPrompt(server.Prompt{Name: "test_dynamic_prompt", Description: "A prompt that comes and goes"}, func(ctx context.Context, req *server.PromptRequest) (*server.PromptResult, error) {
		return &server.PromptResult{Messages: []server.PromptMessage{textMessage("Dynamic prompt")}}, nil
	})
	if err != nil {
		return nil, err
	}
	return server.TextResult("Added test_dynamic_prompt"), nil
}
