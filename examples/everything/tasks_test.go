package main

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/baton-mcp/baton/internal/testredis"
	"github.com/baton-mcp/baton/server"
)

// taskCaps declares elicitation and the tasks extension.
var taskCaps = map[string]any{"elicitation": map[string]any{}, "extensions": map[string]any{server.TasksExtension: map[string]any{}}}

// send posts one modern request to url; name goes in Mcp-Name.
func send(t *testing.T, url, method, name string, params map[string]any) rpcResponse {
	t.Helper()
	params["_meta"] = map[string]any{
		"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
		"io.modelcontextprotocol/clientCapabilities": taskCaps,
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", method)
	req.Header.Set("Mcp-Name", name)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out rpcResponse
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	if out.Error != nil {
		t.Fatalf("%s: error %d %s", method, out.Error.Code, out.Error.Message)
	}
	return out
}

func field[T any](t *testing.T, r rpcResponse, k string) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(r.Result[k], &v); err != nil {
		t.Fatalf("result.%s: %v (%s)", k, err, r.Result[k])
	}
	return v
}

// poll calls tasks/get on url until the task's status is want.
func poll(t *testing.T, url, id, want string) rpcResponse {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		r := send(t, url, "tasks/get", id, map[string]any{"taskId": id})
		if field[string](t, r, "status") == want {
			return r
		}
		if time.Now().After(deadline) {
			t.Fatalf("task %s is %s, want %s", id, r.Result["status"], want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Two instances of the example share their tasks through Redis (as with
// BATON_REDIS_URL): a task created on one is polled, answered and
// cancelled through the other.
func TestTasksSharedThroughRedis(t *testing.T) {
	rs := testredis.Start(t)
	instance := func() string {
		keys, err := stateKeys(testKey)
		if err != nil {
			t.Fatal(err)
		}
		fleet, err := fleetFromEnv("unix://" + rs.Socket)
		if err != nil {
			t.Fatal(err)
		}
		store := fleet.Tasks()
		srv, err := newServerWith(keys, time.Minute, nil, server.TaskOptions{Store: store}, nil, slog.New(slog.NewTextHandler(io.Discard, nil)))
		if err != nil {
			t.Fatal(err)
		}
		ts := httptest.NewServer(srv)
		t.Cleanup(func() { ts.Close(); srv.Close() })
		return ts.URL
	}
	a, b := instance(), instance()

	created := send(t, a, "tools/call", "confirm_delete", map[string]any{"name": "confirm_delete", "arguments": map[string]any{"filename": "notes.txt"}})
	if field[string](t, created, "resultType") != "task" {
		t.Fatalf("confirm_delete with the extension: %v, want a task", created.Result)
	}
	id := field[string](t, created, "taskId")
	asked := poll(t, b, id, "input_required")
	irs := field[map[string]json.RawMessage](t, asked, "inputRequests")
	if len(irs) != 1 {
		t.Fatalf("inputRequests = %v, want one question", irs)
	}
	for key := range irs {
		send(t, b, "tasks/update", id, map[string]any{"taskId": id, "inputResponses": map[string]any{
			key: map[string]any{"action": "accept", "content": map[string]any{"confirm": true}},
		}})
	}
	done := poll(t, a, id, "completed")
	if res := string(done.Result["result"]); !strings.Contains(res, "Deleted notes.txt") {
		t.Errorf("task result %s, want Deleted notes.txt", res)
	}

	created = send(t, a, "tools/call", "slow_compute", map[string]any{"name": "slow_compute", "arguments": map[string]any{"seconds": 60, "label": "long"}})
	id = field[string](t, created, "taskId")
	send(t, b, "tasks/cancel", id, map[string]any{"taskId": id})
	poll(t, a, id, "cancelled")
}
