package server

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/baton-mcp/baton/internal/rpcwire"
	"github.com/baton-mcp/baton/mcptest"
)

// The benchmarks replay requests mcptest built once (wireOf) through
// ServeHTTP: each iteration measures the server, plus the recorder and the
// request.

// BenchmarkToolsCall serves a plain tools/call returning text through
// ServeHTTP.
func BenchmarkToolsCall(b *testing.B) {
	s := newTestServer(b, nil)
	mustAddTool(b, s, Tool{
		Name:        "echo",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"],"additionalProperties":false}`),
	}, func(ctx context.Context, req *ToolRequest) (*ToolResult, error) {
		var a struct {
			Text string `json:"text"`
		}
		if err := req.Bind(&a); err != nil {
			return nil, err
		}
		return TextResult(a.Text), nil
	})
	req := wireOf(b, s, "", func(c *mcptest.Client) { sendTool(b, c, "echo", map[string]any{"text": "hello"}) })
	want := []byte(`"text":"hello"`)

	b.ReportAllocs()
	for b.Loop() {
		rec := req.serve(s, nil)
		if rec.Code != http.StatusOK || !bytes.Contains(rec.Body.Bytes(), want) {
			b.Fatalf("status %d: %s", rec.Code, rec.Body)
		}
	}
}

// BenchmarkMRTRTwoRounds runs a full two-round flow in process: round 1
// answers input_required, round 2 carries the answer and the state and
// completes. The form has one boolean field.
func BenchmarkMRTRTwoRounds(b *testing.B) {
	s := newTestServer(b, nil)
	form := confirmForm(b, "Proceed?")
	mustAddTool(b, s, Tool{Name: "confirm", InputSchema: json.RawMessage(`{"type":"object","properties":{"id":{"type":"integer"}}}`)},
		func(ctx context.Context, req *ToolRequest) (*ToolResult, error) {
			res, err := req.Elicit(ctx, form, WithKey("confirm"))
			if err != nil {
				return nil, err
			}
			return TextResult("confirmed " + string(res.Action)), nil
		})
	args := map[string]any{"id": 42}
	answer := map[string]any{"confirm": accept(true)}
	// Round 2 is captured with a placeholder where each iteration puts the
	// state round 1 issued.
	placeholder := []byte("REQUEST-STATE-PLACEHOLDER")
	req1 := wireOf(b, s, elicitCaps, func(c *mcptest.Client) { sendTool(b, c, "confirm", args) })
	req2 := wireOf(b, s, elicitCaps, func(c *mcptest.Client) {
		sendTool(b, c, "confirm", args, mcptest.Resume(string(placeholder), answer))
	})
	done := []byte(`"text":"confirmed accept"`)

	b.ReportAllocs()
	for b.Loop() {
		rec := req1.serve(s, nil)
		var round1 struct {
			Result struct {
				ResultType   string `json:"resultType"`
				RequestState string `json:"requestState"`
			} `json:"result"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &round1); err != nil || round1.Result.ResultType != "input_required" {
			b.Fatalf("round 1: %v %s", err, rec.Body)
		}

		rec = req2.serve(s, bytes.Replace(req2.body, placeholder, []byte(round1.Result.RequestState), 1))
		if rec.Code != http.StatusOK || !bytes.Contains(rec.Body.Bytes(), done) {
			b.Fatalf("round 2: status %d: %s", rec.Code, rec.Body)
		}
	}
}

// BenchmarkDecodeRequest measures reading one tools/call: the JSON-RPC
// message, its params and the _meta envelope.
func BenchmarkDecodeRequest(b *testing.B) {
	body := []byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"confirm_transfer","arguments":{"to":"bob","amount":25},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{}},"sampling":{}},"io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"},"progressToken":"p1"}}}`)
	b.ReportAllocs()
	for b.Loop() {
		msg, derr := rpcwire.Decode(body, rpcwire.Limits{})
		if derr != nil {
			b.Fatal(derr)
		}
		if _, e := decodeRequest(msg); e != nil {
			b.Fatal(e)
		}
	}
}

// BenchmarkToolsCallTyped compares a typed tool with the equivalent raw
// tools through ServeHTTP, in one run so the ratios hold on a noisy
// machine. "raw" binds its arguments and answers text (no output schema);
// "raw-structured" answers the same result as "typed" (the JSON as text
// and as structuredContent, checked against the same output schema);
// "typed" is server.AddTool with inferred schemas.
func BenchmarkToolsCallTyped(b *testing.B) {
	type echoIn struct {
		Text string `json:"text"`
	}
	type echoOut struct {
		Text   string `json:"text"`
		Length int    `json:"length"`
	}
	inSchema := json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"],"additionalProperties":false}`)
	outSchema := json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"},"length":{"type":"integer"}},"required":["text","length"],"additionalProperties":false}`)
	s := newTestServer(b, nil)
	mustAddTool(b, s, Tool{Name: "raw", InputSchema: inSchema}, func(ctx context.Context, req *ToolRequest) (*ToolResult, error) {
		var a echoIn
		if err := req.Bind(&a); err != nil {
			return nil, err
		}
		return TextResult(a.Text), nil
	})
	mustAddTool(b, s, Tool{Name: "raw-structured", InputSchema: inSchema, OutputSchema: outSchema}, func(ctx context.Context, req *ToolRequest) (*ToolResult, error) {
		var a echoIn
		if err := req.Bind(&a); err != nil {
			return nil, err
		}
		out, err := json.Marshal(echoOut{Text: a.Text, Length: len(a.Text)})
		if err != nil {
			return nil, err
		}
		return &ToolResult{Content: TextResult(string(out)).Content, StructuredContent: json.RawMessage(out)}, nil
	})
	if err := AddTool(s, Tool{Name: "typed"}, func(_ context.Context, _ *ToolRequest, in echoIn) (echoOut, error) {
		return echoOut{Text: in.Text, Length: len(in.Text)}, nil
	}); err != nil {
		b.Fatal(err)
	}
	for _, name := range []string{"raw", "raw-structured", "typed"} {
		b.Run(name, func(b *testing.B) {
			req := wireOf(b, s, "", func(c *mcptest.Client) { sendTool(b, c, name, map[string]any{"text": "hello"}) })
			want := []byte(`hello`)
			b.ReportAllocs()
			for b.Loop() {
				rec := req.serve(s, nil)
				if rec.Code != http.StatusOK || !bytes.Contains(rec.Body.Bytes(), want) || bytes.Contains(rec.Body.Bytes(), []byte(`"isError"`)) {
					b.Fatalf("status %d: %s", rec.Code, rec.Body)
				}
			}
		})
	}
}
