package main

import (
	"context"
	"strings"
	"testing"
	"time"

	gosdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestParkedCallGoSDK: the official Go SDK (v1.8.0), a 2025-11-25 client
// whose user takes longer than legacy.Options.HoldFor (2 s) to answer:
// the call parks (its POST stream ends with a retry field), the SDK
// resumes it with GET and Last-Event-ID, its answer runs the handler
// again, and the result arrives on the resumed stream.
func TestParkedCallGoSDK(t *testing.T) {
	if testing.Short() {
		t.Skip("waits 3 s for a user")
	}
	ts, resumes := resumeCounting(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := gosdk.NewClient(&gosdk.Implementation{Name: "parked", Version: "1.0.0"}, &gosdk.ClientOptions{
		ElicitationHandler: func(ctx context.Context, req *gosdk.ElicitRequest) (*gosdk.ElicitResult, error) {
			if strings.HasPrefix(req.Params.Message, "What is your name") {
				time.Sleep(3 * time.Second) // past HoldFor: the call parks
				return &gosdk.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}, nil
			}
			return &gosdk.ElicitResult{Action: "accept", Content: map[string]any{"email": "ada@example.com"}}, nil
		},
	})
	cs, err := c.Connect(ctx, &gosdk.StreamableClientTransport{Endpoint: ts.URL}, &gosdk.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &gosdk.CallToolParams{Name: "onboard_user"})
	if err != nil {
		t.Fatalf("onboard_user: %v", err)
	}
	if tc, ok := res.Content[0].(*gosdk.TextContent); !ok || tc.Text != "Welcome aboard, Ada <ada@example.com>" {
		t.Fatalf("result %+v", res.Content)
	}
	if resumes.Load() == 0 {
		t.Error("the call's stream was never resumed: it did not park")
	}
	t.Logf("the call's stream was resumed %d times", resumes.Load())
}
