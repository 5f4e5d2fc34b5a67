package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/baton-mcp/baton/content"
	"github.com/baton-mcp/baton/legacy"
	"github.com/baton-mcp/baton/mrtr"
	"github.com/baton-mcp/baton/server"
)

// A 1×1 PNG and a minimal WAV, as the conformance fixtures expect.
const (
	pngBase64 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
	wavBase64 = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA="
)

var (
	pngBlock = content.Block{Type: content.TypeImage, Data: pngBase64, MimeType: "image/png"}
	wavBlock = content.Block{Type: content.TypeAudio, Data: wavBase64, MimeType: "audio/wav"}
)

// newServer builds the example server with every fixture registered and a
// confirmation ledger for this process.
func newServer(keys *mrtr.KeyRing, ttl time.Duration, log *slog.Logger) (*server.Server, error) {
	return newServerWithLedger(keys, ttl, nil, log)
}

// newServerWithLedger is newServer with the ledger that redeems
// confirmations once (nil: one for this process; share one, such as
// Redis, across instances).
func newServerWithLedger(keys *mrtr.KeyRing, ttl time.Duration, ledger mrtr.Ledger, log *slog.Logger) (*server.Server, error) {
	return newServerWith(keys, ttl, ledger, server.TaskOptions{}, nil, log)
}

// newServerWith is newServerWithLedger with the options of the tasks
// extension: the store that keeps tasks (nil: this process's memory; share
// one, such as Redis, across instances), their TTL and lease; and those of
// 2025-11-25 sessions (nil: the defaults, sessions in this process).
func newServerWith(keys *mrtr.KeyRing, ttl time.Duration, ledger mrtr.Ledger, taskOpts server.TaskOptions, legacyOpts *legacy.Options, log *slog.Logger) (*server.Server, error) {
	if ledger == nil {
		ledger = mrtr.NewMemoryLedger()
	}
	srv, err := server.New(server.Implementation{Name: "baton-everything", Version: "0.1.0"}, &server.Options{
		Instructions: "Baton's example server: the conformance fixtures and a transfer that asks for confirmation.",
		StateKeys:    keys,
		StateTTL:     ttl,
		Logging:      true,
		Logger:       log,
		Tasks:        taskOpts,
	})
	if err != nil {
		return nil, err
	}
	var errs []error
	add := func(err error) { errs = append(errs, err) }
	registerTools(srv, add)
	registerMRTRTools(srv, add)
	registerPrompts(srv, add)
	registerResources(srv, add)
	registerTransfer(srv, ledger, add)
	registerOnboarding(srv, add)
	registerLegacyFixtures(srv, add)
	registerTaskTools(srv, add)
	srv.SetCompletion(complete)
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	legacy.Attach(srv, legacyOpts)
	return srv, nil
}

func noArgs(name, description string) server.Tool {
	return server.Tool{Name: name, Description: description, InputSchema: json.RawMessage(`{"type":"object","properties":{}}`)}
}

func registerTools(srv *server.Server, add func(error)) {
	add(srv.AddTool(noArgs("test_simple_text", "Returns simple text"), func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
		return server.TextResult("This is a simple text response for testing."), nil
	}))
	add(srv.AddTool(noArgs("test_image_content", "Returns a PNG image"), func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
		return &server.ToolResult{Content: []content.Block{pngBlock}}, nil
	}))
	add(srv.AddTool(noArgs("test_audio_content", "Returns a WAV clip"), func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
		return &server.ToolResult{Content: []content.Block{wavBlock}}, nil
	}))
	add(srv.AddTool(noArgs("test_embedded_resource", "Returns an embedded resource"), func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
		return &server.ToolResult{Content: []content.Block{content.Embedded(content.TextContents("test://embedded-resource", "text/plain", "This is an embedded resource content."))}}, nil
	}))
	add(srv.AddTool(noArgs("test_multiple_content_types", "Returns text, an image and a resource"), func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
		return &server.ToolResult{Content: []content.Block{
			content.Text("Multiple content types test:"),
			pngBlock,
			content.Embedded(content.TextContents("test://mixed-content-resource", "application/json", `{"test":"data","value":123}`)),
		}}, nil
	}))
	add(srv.AddTool(noArgs("test_error_handling", "Always fails"), func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
		return nil, errors.New("This tool intentionally returns an error for testing")
	}))
	add(srv.AddTool(noArgs("test_reconnection", "Returns text after a short pause"), func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
		if err := sleep(ctx, 100*time.Millisecond); err != nil {
			return nil, err
		}
		return server.TextResult("Reconnection test completed successfully. If you received this, the client properly reconnected after stream closure."), nil
	}))
	add(srv.AddTool(noArgs("test_tool_with_logging", "Logs three messages"), func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
		for i, m := range []string{"Tool execution started", "Tool processing data", "Tool execution completed"} {
			if i > 0 {
				if err := sleep(ctx, 50*time.Millisecond); err != nil {
					return nil, err
				}
			}
			if err := req.Log(ctx, server.LevelInfo, "test_logger", m); err != nil {
				return nil, err
			}
		}
		return server.TextResult("Tool with logging executed successfully"), nil
	}))
	add(srv.AddTool(noArgs("test_logging_tool", "Logs only when the request asked for logs"), func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
		if err := req.Log(ctx, server.LevelInfo, "test_logger", "logging tool ran"); err != nil {
			return nil, err
		}
		return server.TextResult("Logging tool completed"), nil
	}))
	add(srv.AddTool(noArgs("test_tool_with_progress", "Reports progress 0, 50 and 100"), func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
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
	}))
	add(srv.AddTool(server.Tool{
		Name:        "json_schema_2020_12_tool",
		Description: "Tool with JSON Schema 2020-12 features",
		InputSchema: json.RawMessage(`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","$defs":{"address":{"$anchor":"addressDef","type":"object","properties":{"street":{"type":"string"},"city":{"type":"string"}}}},"properties":{"name":{"type":"string"},"address":{"$ref":"#/$defs/address"},"contactMethod":{"type":"string","enum":["phone","email"]},"phone":{"type":"string"},"email":{"type":"string"}},"allOf":[{"anyOf":[{"required":["phone"]},{"required":["email"]}]}],"if":{"properties":{"contactMethod":{"const":"phone"}},"required":["contactMethod"]},"then":{"required":["phone"]},"else":{"required":["email"]},"additionalProperties":false}`),
	}, func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
		return server.TextResult("JSON Schema 2020-12 tool called with " + string(req.Arguments)), nil
	}))
	add(srv.AddTool(server.Tool{
		Name:        "test_header_param",
		Description: "Echoes a region that is mirrored into the Mcp-Param-Region header",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}},"required":["region"]}`),
	}, func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
		var in struct {
			Region string `json:"region"`
		}
		if err := req.Bind(&in); err != nil {
			return nil, err
		}
		return server.TextResult("Region: " + in.Region), nil
	}))

	// List-changed triggers: each call toggles a dynamic tool or prompt.
	var mu sync.Mutex
	add(srv.AddTool(noArgs("test_trigger_tool_change", "Adds or removes a dynamic tool"), func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
		mu.Lock()
		defer mu.Unlock()
		if srv.RemoveTool("test_dynamic_tool") {
			return server.TextResult("Removed test_dynamic_tool"), nil
		}
		err := srv.AddTool(noArgs("test_dynamic_tool", "A tool that comes and goes"), func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
			return server.TextResult("Dynamic tool"), nil
		})
		if err != nil {
			return nil, err
		}
		return server.TextResult("Added test_dynamic_tool"), nil
	}))
	add(srv.AddTool(noArgs("test_trigger_prompt_change", "Adds or removes a dynamic prompt"), func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
		mu.Lock()
		defer mu.Unlock()
		if srv.RemovePrompt("test_dynamic_prompt") {
			return server.TextResult("Removed test_dynamic_prompt"), nil
		}
		err := srv.AddPrompt(server.Prompt{Name: "test_dynamic_prompt", Description: "A prompt that comes and goes"}, func(ctx context.Context, req *server.PromptRequest) (*server.PromptResult, error) {
			return &server.PromptResult{Messages: []server.PromptMessage{{Role: content.RoleUser, Content: content.Text("Dynamic prompt")}}}, nil
		})
		if err != nil {
			return nil, err
		}
		return server.TextResult("Added test_dynamic_prompt"), nil
	}))
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

func complete(ctx context.Context, req *server.CompletionRequest) (*server.Completion, error) {
	if req.Ref.Type != "ref/prompt" || req.Ref.Name != "test_prompt_with_arguments" {
		return &server.Completion{}, nil
	}
	var all []string
	switch req.Argument.Name {
	case "arg1":
		all = []string{"value1", "value2", "value3"}
	case "arg2":
		all = []string{"optionA", "optionB", "optionC"}
	}
	values := []string{}
	for _, v := range all {
		if strings.HasPrefix(v, req.Argument.Value) {
			values = append(values, v)
		}
	}
	total := len(values)
	return &server.Completion{Values: values, Total: &total}, nil
}
