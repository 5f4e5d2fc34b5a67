package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/baton-mcp/baton/elicit"
	"github.com/baton-mcp/baton/mcp"
	"github.com/baton-mcp/baton/mcptest"
)

type geo struct {
	Lat float64 `json:"lat"`
	Lon float64 `json:"lon"`
}

type bookArgs struct {
	Restaurant string   `json:"restaurant" jsonschema:"the restaurant to book"`
	Party      int      `json:"party" jsonschema:"how many people"`
	Note       string   `json:"note,omitempty"`
	Tags       []string `json:"tags,omitempty"`
	Near       *geo     `json:"near,omitempty"`
	Stops      []geo    `json:"stops,omitempty"`
	Internal   string   `json:"-"`
}

type booking struct {
	Restaurant string `json:"restaurant"`
	Party      int    `json:"party"`
	Date       string `json:"date,omitempty"`
	Confirmed  bool   `json:"confirmed"`
}

// logBuffer collects a server's log lines; handlers may log concurrently.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func newLoggedServer(tb testing.TB) (*Server, *logBuffer) {
	tb.Helper()
	logs := &logBuffer{}
	return newTestServer(tb, &Options{Logger: slog.New(slog.NewTextHandler(logs, nil))}), logs
}

// listedTool returns the tools/list entry of name, decoded.
func listedTool(tb testing.TB, s *Server, name string) map[string]any {
	tb.Helper()
	res := completeResult(tb, send(tb, newClient(tb, s, ""), "tools/list", nil))
	tools, _ := res["tools"].([]any)
	for _, t := range tools {
		if m, _ := t.(map[string]any); m["name"] == name {
			return m
		}
	}
	tb.Fatalf("tool %q not listed: %v", name, res)
	return nil
}

func requiredOf(tb testing.TB, sch map[string]any) []string {
	tb.Helper()
	var out []string
	req, _ := sch["required"].([]any)
	for _, r := range req {
		out = append(out, r.(string))
	}
	slices.Sort(out)
	return out
}

func propsOf(tb testing.TB, sch map[string]any) map[string]any {
	tb.Helper()
	p, ok := sch["properties"].(map[string]any)
	if !ok {
		tb.Fatalf("schema without properties: %v", sch)
	}
	return p
}

func addBook(tb testing.TB, s *Server, h ToolHandlerFor[bookArgs, booking], opts ...TypedToolOption) {
	tb.Helper()
	if err := AddTool(s, Tool{Name: "book", Description: "Books a table"}, h, opts...); err != nil {
		tb.Fatalf("AddTool: %v", err)
	}
}

func echoBooking(_ context.Context, _ *ToolRequest, in bookArgs) (booking, error) {
	return booking{Restaurant: in.Restaurant, Party: in.Party}, nil
}

// The schemas a client sees are inferred from the Go types: names from
// json tags, required unless omitempty, descriptions from jsonschema tags,
// nested structs and slices, "-" left out.
func TestTypedToolInfersSchemas(t *testing.T) {
	s := newTestServer(t, nil)
	addBook(t, s, echoBooking)
	tool := listedTool(t, s, "book")

	in, _ := tool["inputSchema"].(map[string]any)
	if in["type"] != "object" || in["additionalProperties"] != false {
		t.Fatalf("inputSchema %v: want an object without additional properties", in)
	}
	if got, want := requiredOf(t, in), []string{"party", "restaurant"}; !slices.Equal(got, want) {
		t.Errorf("input required = %v, want %v", got, want)
	}
	props := propsOf(t, in)
	if got := slices.Sorted(maps.Keys(props)); !slices.Equal(got, []string{"near", "note", "party", "restaurant", "stops", "tags"}) {
		t.Errorf("input properties = %v (the json:\"-\" field must be left out)", got)
	}
	rest, _ := props["restaurant"].(map[string]any)
	if rest["type"] != "string" || rest["description"] != "the restaurant to book" {
		t.Errorf("restaurant = %v", rest)
	}
	if party, _ := props["party"].(map[string]any); party["type"] != "integer" {
		t.Errorf("party = %v", party)
	}
	tags, _ := props["tags"].(map[string]any)
	if items, _ := tags["items"].(map[string]any); items["type"] != "string" || !reflect.DeepEqual(tags["type"], []any{"null", "array"}) {
		t.Errorf("tags = %v", tags)
	}
	near, _ := props["near"].(map[string]any)
	if got := requiredOf(t, near); !slices.Equal(got, []string{"lat", "lon"}) || propsOf(t, near)["lat"].(map[string]any)["type"] != "number" {
		t.Errorf("near = %v", near)
	}
	stops, _ := props["stops"].(map[string]any)
	if items, _ := stops["items"].(map[string]any); items["additionalProperties"] != false || len(requiredOf(t, items)) != 2 {
		t.Errorf("stops = %v", stops)
	}

	out, _ := tool["outputSchema"].(map[string]any)
	if out["type"] != "object" {
		t.Fatalf("outputSchema %v", out)
	}
	if got, want := requiredOf(t, out), []string{"confirmed", "party", "restaurant"}; !slices.Equal(got, want) {
		t.Errorf("output required = %v, want %v", got, want)
	}
}

// A call validates, decodes, and answers Out as structuredContent plus one
// text block holding the same JSON.
func TestTypedToolCall(t *testing.T) {
	s := newTestServer(t, nil)
	c := newClient(t, s, "")
	var got bookArgs
	addBook(t, s, func(ctx context.Context, req *ToolRequest, in bookArgs) (booking, error) {
		got = in
		return booking{Restaurant: in.Restaurant, Party: in.Party, Date: "2026-08-01", Confirmed: true}, nil
	})
	args := map[string]any{"restaurant": "Chez Panisse", "party": 4, "near": map[string]any{"lat": 1.5, "lon": 2}, "stops": []any{map[string]any{"lat": 0, "lon": 0}}}
	res := completeResult(t, sendTool(t, c, "book", args))
	if got.Restaurant != "Chez Panisse" || got.Party != 4 || got.Near == nil || got.Near.Lat != 1.5 || len(got.Stops) != 1 {
		t.Fatalf("handler got %+v", got)
	}
	want := map[string]any{"restaurant": "Chez Panisse", "party": float64(4), "date": "2026-08-01", "confirmed": true}
	if !reflect.DeepEqual(res["structuredContent"], want) {
		t.Errorf("structuredContent = %v, want %v", res["structuredContent"], want)
	}
	text, isErr := toolText(t, res)
	if isErr {
		t.Fatalf("isError result: %s", text)
	}
	var fromText map[string]any
	if err := json.Unmarshal([]byte(text), &fromText); err != nil || !reflect.DeepEqual(fromText, want) {
		t.Errorf("text block %q is not the structuredContent's JSON (%v)", text, err)
	}
	if blocks, _ := res["content"].([]any); len(blocks) != 1 {
		t.Errorf("content has %d blocks, want 1", len(blocks))
	}
}

// Bad arguments are an isError result the model can correct, and the
// handler does not run, exactly as for raw tools.
func TestTypedToolRejectsBadArguments(t *testing.T) {
	s := newTestServer(t, nil)
	c := newClient(t, s, "")
	ran := false
	addBook(t, s, func(ctx context.Context, req *ToolRequest, in bookArgs) (booking, error) {
		ran = true
		return echoBooking(ctx, req, in)
	})
	for _, tc := range []struct {
		args any
		want string
	}{
		{map[string]any{"restaurant": "x"}, "party"},                                     // required missing
		{map[string]any{"restaurant": "x", "party": "four"}, "/party"},                   // wrong type
		{map[string]any{"restaurant": "x", "party": 2, "Party": 3}, "Party"},             // unknown key (a case variant)
		{map[string]any{"restaurant": "x", "party": 2, "near": map[string]any{}}, "lat"}, // nested required
		{map[string]any{"restaurant": "x", "party": 2.5}, "/party"},                      // not an integer
	} {
		res := completeResult(t, sendTool(t, c, "book", tc.args))
		text, isErr := toolText(t, res)
		if !isErr || !strings.HasPrefix(text, "invalid arguments: ") || !strings.Contains(text, tc.want) {
			t.Errorf("%v: result %q (isError %v), want invalid arguments mentioning %q", tc.args, text, isErr, tc.want)
		}
		if _, ok := res["structuredContent"]; ok {
			t.Errorf("%v: error result carries structuredContent", tc.args)
		}
	}
	if ran {
		t.Fatal("the handler ran on invalid arguments")
	}
}

// With validation off (or a hand-written schema), what cannot decode into
// In is still an isError result, and a key that matches a field only by
// case is named rather than dropped.
func TestTypedToolDecodeFailures(t *testing.T) {
	s := newTestServer(t, nil)
	c := newClient(t, s, "")
	type loose struct {
		Name  string
		Count int `json:"count"`
	}
	ran := false
	err := AddTool(s, Tool{Name: "loose", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(_ context.Context, _ *ToolRequest, in loose) (*ToolResult, error) {
			ran = true
			return TextResult(in.Name), nil
		})
	if err != nil {
		t.Fatal(err)
	}
	text, isErr := toolText(t, completeResult(t, sendTool(t, c, "loose", map[string]any{"name": "Ada"})))
	if !isErr || !strings.Contains(text, `key "name"`) || !strings.Contains(text, "field loose.Name") || !strings.Contains(text, "`json:\"name\"`") {
		t.Errorf("case trap: %q (isError %v)", text, isErr)
	}
	text, isErr = toolText(t, completeResult(t, sendTool(t, c, "loose", map[string]any{"count": "x"})))
	if !isErr || !strings.Contains(text, "invalid arguments") || !strings.Contains(text, "count") {
		t.Errorf("type mismatch: %q (isError %v)", text, isErr)
	}
	if ran {
		t.Fatal("the handler ran on arguments that did not decode")
	}
	if text, isErr = toolText(t, completeResult(t, sendTool(t, c, "loose", map[string]any{"Name": "Ada"}))); isErr || text != "Ada" {
		t.Errorf("exact key: %q (isError %v)", text, isErr)
	}
}

// RefineSchemas adds what tags cannot say; the refined schema is the one
// published and enforced, on the way in and on the way out.
func TestTypedToolRefineSchemas(t *testing.T) {
	s, logs := newLoggedServer(t)
	c := newClient(t, s, "")
	var out booking
	addBook(t, s, func(context.Context, *ToolRequest, bookArgs) (booking, error) { return out, nil },
		RefineSchemas(func(in, out *jsonschema.Schema) error {
			in.Properties["party"].Minimum = jsonschema.Ptr(1.0)
			in.Properties["party"].Maximum = jsonschema.Ptr(12.0)
			in.Properties["restaurant"].Enum = []any{"Chez Panisse", "Noma"}
			out.Properties["date"].Format = "date"
			out.Properties["date"].Pattern = `^\d{4}-\d{2}-\d{2}$`
			return nil
		}))
	tool := listedTool(t, s, "book")
	party := propsOf(t, tool["inputSchema"].(map[string]any))["party"].(map[string]any)
	if party["minimum"] != 1.0 || party["maximum"] != 12.0 {
		t.Errorf("published party = %v", party)
	}
	if date := propsOf(t, tool["outputSchema"].(map[string]any))["date"].(map[string]any); date["format"] != "date" {
		t.Errorf("published date = %v", date)
	}

	text, isErr := toolText(t, completeResult(t, sendTool(t, c, "book", map[string]any{"restaurant": "Noma", "party": 13})))
	if !isErr || !strings.Contains(text, "/party") {
		t.Errorf("party 13: %q (isError %v)", text, isErr)
	}
	text, isErr = toolText(t, completeResult(t, sendTool(t, c, "book", map[string]any{"restaurant": "Elsewhere", "party": 2})))
	if !isErr || !strings.Contains(text, "/restaurant") {
		t.Errorf("restaurant outside the enum: %q (isError %v)", text, isErr)
	}

	out = booking{Restaurant: "Noma", Party: 2, Date: "2026-08-01"}
	completeResult(t, sendTool(t, c, "book", map[string]any{"restaurant": "Noma", "party": 2}))
	out.Date = "next Tuesday"
	e := wantError(t, sendTool(t, c, "book", map[string]any{"restaurant": "Noma", "party": 2}), 200, mcp.InternalError)
	if !strings.Contains(e.Message, `tool "book"`) || !strings.Contains(e.Message, "outputSchema") {
		t.Errorf("message %q", e.Message)
	}
	if l := logs.String(); !strings.Contains(l, "does not match its outputSchema") || !strings.Contains(l, "/date") {
		t.Errorf("the mismatch was not logged with its location: %s", l)
	}
}

// A hand-written schema wins over inference; RefineSchemas then sees nil
// for it.
func TestTypedToolGivenSchemasWin(t *testing.T) {
	s := newTestServer(t, nil)
	c := newClient(t, s, "")
	given := `{"type":"object","properties":{"restaurant":{"type":"string","minLength":3}},"required":["restaurant"]}`
	var sawIn, sawOut *jsonschema.Schema
	err := AddTool(s, Tool{Name: "book", InputSchema: json.RawMessage(given)}, echoBooking,
		RefineSchemas(func(in, out *jsonschema.Schema) error { sawIn, sawOut = in, out; return nil }))
	if err != nil {
		t.Fatal(err)
	}
	if sawIn != nil || sawOut == nil {
		t.Errorf("RefineSchemas got in=%v out=%v; want nil input (given) and the inferred output", sawIn, sawOut)
	}
	in := listedTool(t, s, "book")["inputSchema"].(map[string]any)
	if got := propsOf(t, in)["restaurant"].(map[string]any)["minLength"]; got != 3.0 {
		t.Errorf("listed input schema %v is not the given one", in)
	}
	text, isErr := toolText(t, completeResult(t, sendTool(t, c, "book", map[string]any{"restaurant": "ab"})))
	if !isErr || !strings.Contains(text, "/restaurant") {
		t.Errorf("given schema not enforced: %q", text)
	}
}

// Out = *ToolResult: no output schema, the result goes out as built.
func TestTypedToolRawResult(t *testing.T) {
	s := newTestServer(t, nil)
	c := newClient(t, s, "")
	err := AddTool(s, Tool{Name: "hello"}, func(_ context.Context, _ *ToolRequest, in struct {
		Name string `json:"name"`
	}) (*ToolResult, error) {
		return &ToolResult{Content: TextResult("hello " + in.Name).Content, StructuredContent: map[string]any{"free": "form"}}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := listedTool(t, s, "hello")["outputSchema"]; ok {
		t.Error("a *ToolResult tool lists an outputSchema")
	}
	res := completeResult(t, sendTool(t, c, "hello", map[string]any{"name": "Ada"}))
	if text, _ := toolText(t, res); text != "hello Ada" || !reflect.DeepEqual(res["structuredContent"], map[string]any{"free": "form"}) {
		t.Errorf("result %v", res)
	}
}

// Pointer and map types are objects too.
func TestTypedToolPointerAndMapTypes(t *testing.T) {
	s := newTestServer(t, nil)
	c := newClient(t, s, "")
	err := AddTool(s, Tool{Name: "ptr"}, func(_ context.Context, _ *ToolRequest, in *geo) (*booking, error) {
		if in == nil {
			return nil, errors.New("nil input")
		}
		return &booking{Restaurant: fmt.Sprint(in.Lat), Party: int(in.Lon)}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	tool := listedTool(t, s, "ptr")
	if in := tool["inputSchema"].(map[string]any); in["type"] != "object" {
		t.Errorf("pointer In: schema %v", in)
	}
	res := completeResult(t, sendTool(t, c, "ptr", map[string]any{"lat": 1, "lon": 2}))
	if sc := res["structuredContent"].(map[string]any); sc["restaurant"] != "1" || sc["party"] != 2.0 {
		t.Errorf("structuredContent %v", sc)
	}

	err = AddTool(s, Tool{Name: "counts"}, func(_ context.Context, _ *ToolRequest, in map[string]int) (map[string]int, error) {
		out := map[string]int{}
		for k, v := range in {
			out[strings.ToUpper(k)] = v * 2
		}
		return out, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	text, isErr := toolText(t, completeResult(t, sendTool(t, c, "counts", map[string]any{"a": 1, "b": "x"})))
	if !isErr || !strings.Contains(text, "/b") {
		t.Errorf("map value type not validated: %q", text)
	}
	res = completeResult(t, sendTool(t, c, "counts", map[string]any{"a": 1}))
	if !reflect.DeepEqual(res["structuredContent"], map[string]any{"A": 2.0}) {
		t.Errorf("structuredContent %v", res["structuredContent"])
	}
}

// Registration refuses what cannot work, and registers nothing.
func TestTypedToolRegistrationErrors(t *testing.T) {
	s := newTestServer(t, nil)
	type noJSON struct{ C chan int }
	refine := func(want error) TypedToolOption {
		return RefineSchemas(func(in, out *jsonschema.Schema) error { return want })
	}
	cases := []struct {
		name string
		add  func() error
		want string
	}{
		{"int input", func() error {
			return AddTool(s, Tool{Name: "t"}, func(context.Context, *ToolRequest, int) (booking, error) { return booking{}, nil })
		}, "In is int"},
		{"map with int keys", func() error {
			return AddTool(s, Tool{Name: "t"}, func(context.Context, *ToolRequest, map[int]string) (booking, error) { return booking{}, nil })
		}, "map with string keys"},
		{"string output", func() error {
			return AddTool(s, Tool{Name: "t"}, func(context.Context, *ToolRequest, geo) (string, error) { return "", nil })
		}, "Out is string"},
		{"any output without a schema", func() error {
			return AddTool(s, Tool{Name: "t"}, func(context.Context, *ToolRequest, geo) (any, error) { return nil, nil })
		}, "*server.ToolResult"},
		{"uninferable field", func() error {
			return AddTool(s, Tool{Name: "t"}, func(context.Context, *ToolRequest, noJSON) (booking, error) { return booking{}, nil })
		}, "infer a schema from In"},
		{"slice input with a given schema", func() error {
			return AddTool(s, Tool{Name: "t", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(context.Context, *ToolRequest, []string) (booking, error) { return booking{}, nil })
		}, "cannot hold a JSON object"},
		{"given output schema not an object", func() error {
			return AddTool(s, Tool{Name: "t", OutputSchema: json.RawMessage(`{"type":"string"}`)}, echoBooking)
		}, `"type": "object"`},
		{"refine fails", func() error { return AddTool(s, Tool{Name: "t"}, echoBooking, refine(errors.New("no enum for you"))) }, "no enum for you"},
		{"refine with nothing to refine", func() error {
			return AddTool(s, Tool{Name: "t", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(context.Context, *ToolRequest, geo) (*ToolResult, error) { return nil, nil }, refine(nil))
		}, "nothing to refine"},
		{"refine panics", func() error {
			return AddTool(s, Tool{Name: "t"}, echoBooking, RefineSchemas(func(in, _ *jsonschema.Schema) error {
				in.Properties["no such property"].Minimum = jsonschema.Ptr(1.0)
				return nil
			}))
		}, "refine schemas: panicked"},
		{"refine breaks the schema", func() error {
			return AddTool(s, Tool{Name: "t"}, echoBooking, RefineSchemas(func(in, _ *jsonschema.Schema) error {
				in.Type = "array"
				return nil
			}))
		}, `"type": "object"`},
		{"a nil option", func() error {
			var nilOption ToolOption
			return AddTool(s, Tool{Name: "t"}, echoBooking, nilOption)
		}, "option 1 is nil"},
		{"deferred task without a task", func() error { return AddTool(s, Tool{Name: "t"}, echoBooking, DeferTask()) }, "DeferTask needs RunAsTask"},
		{"nil handler", func() error { return AddTool[geo, booking](s, Tool{Name: "t"}, nil) }, "nil handler"},
		{"bad name", func() error { return AddTool(s, Tool{Name: "a b"}, echoBooking) }, "may contain only"},
	}
	for _, tc := range cases {
		err := tc.add()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want one mentioning %q", tc.name, err, tc.want)
		}
	}
	if n := s.tools.len(); n != 0 {
		t.Fatalf("%d tools registered by failed registrations", n)
	}
}

// Errors map as for raw tools: plain errors are isError results, a
// *mcp.Error is sent as is, and a nil or schema-breaking Out is a
// logged -32603.
func TestTypedToolErrors(t *testing.T) {
	s, logs := newLoggedServer(t)
	c := newClient(t, s, "")
	err := AddTool(s, Tool{Name: "fail"}, func(_ context.Context, _ *ToolRequest, in struct {
		Mode string `json:"mode"`
	}) (*booking, error) {
		switch in.Mode {
		case "plain":
			return &booking{Restaurant: "ignored"}, errors.New("the kitchen is closed")
		case "rpc":
			return nil, &mcp.Error{Code: mcp.InvalidParams, Message: "no such restaurant"}
		case "nil":
			return nil, nil
		}
		return &booking{}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	res := completeResult(t, sendTool(t, c, "fail", map[string]any{"mode": "plain"}))
	if text, isErr := toolText(t, res); !isErr || text != "the kitchen is closed" {
		t.Errorf("plain error: %q (isError %v)", text, isErr)
	}
	if _, ok := res["structuredContent"]; ok {
		t.Error("an error result carries structuredContent")
	}
	if e := wantError(t, sendTool(t, c, "fail", map[string]any{"mode": "rpc"}), 400, mcp.InvalidParams); e.Message != "no such restaurant" {
		t.Errorf("rpc error: %q", e.Message)
	}
	if e := wantError(t, sendTool(t, c, "fail", map[string]any{"mode": "nil"}), 200, mcp.InternalError); !strings.Contains(e.Message, "no result") {
		t.Errorf("nil Out: %q", e.Message)
	}
	if !strings.Contains(logs.String(), "typed tool failed") {
		t.Errorf("nil Out not logged: %s", logs)
	}
	completeResult(t, sendTool(t, c, "fail", map[string]any{"mode": "ok"}))
}

// The output schema of a raw tool is enforced too: a non-error result
// must carry structuredContent that matches it.
func TestRawToolOutputSchema(t *testing.T) {
	s, logs := newLoggedServer(t)
	c := newClient(t, s, "")
	var res *ToolResult
	mustAddTool(t, s, Tool{
		Name:         "weather",
		OutputSchema: json.RawMessage(`{"type":"object","properties":{"temp":{"type":"number"}},"required":["temp"]}`),
	}, func(context.Context, *ToolRequest) (*ToolResult, error) { return res, nil })

	res = &ToolResult{Content: TextResult(`{"temp":21.5}`).Content, StructuredContent: map[string]any{"temp": 21.5}}
	got := completeResult(t, sendTool(t, c, "weather", nil))
	if !reflect.DeepEqual(got["structuredContent"], map[string]any{"temp": 21.5}) {
		t.Errorf("structuredContent %v", got["structuredContent"])
	}
	res = &ToolResult{StructuredContent: json.RawMessage(`{"temp": 3}`)}
	completeResult(t, sendTool(t, c, "weather", nil))

	for i, bad := range []*ToolResult{
		TextResult("21.5 degrees"), // no structuredContent
		{StructuredContent: map[string]any{"temp": "warm"}},
		{StructuredContent: json.RawMessage(`null`)},
		{StructuredContent: (*booking)(nil)},
	} {
		res = bad
		e := wantError(t, sendTool(t, c, "weather", nil), 200, mcp.InternalError)
		if !strings.Contains(e.Message, `tool "weather"`) || !strings.Contains(e.Message, "structuredContent") {
			t.Errorf("case %d: message %q", i, e.Message)
		}
	}
	if l := logs.String(); !strings.Contains(l, "lacks the structuredContent") || !strings.Contains(l, "/temp") {
		t.Errorf("log lacks the failures: %s", l)
	}

	// An error result needs no structuredContent.
	res = ErrorResult("the sensor is offline")
	if text, isErr := toolText(t, completeResult(t, sendTool(t, c, "weather", nil))); !isErr || text != "the sensor is offline" {
		t.Errorf("error result: %q", text)
	}
	// Without an output schema nothing is checked.
	mustAddTool(t, s, Tool{Name: "free"}, func(context.Context, *ToolRequest) (*ToolResult, error) {
		return &ToolResult{StructuredContent: map[string]any{"anything": []int{1}}}, nil
	})
	completeResult(t, sendTool(t, c, "free", nil))
}

// A typed tool that asks twice in the blocking style, over HTTP: three
// requests, the answers riding in the requestState, Out at the end.
func TestTypedToolTwoRoundsOverHTTP(t *testing.T) {
	s := newTestServer(t, nil)
	when, err := elicit.NewSchema(elicit.String("date").Format(elicit.FormatDate).Required(), elicit.String("note"))
	if err != nil {
		t.Fatal(err)
	}
	sure, err := elicit.NewSchema(elicit.Boolean("confirm").Required())
	if err != nil {
		t.Fatal(err)
	}
	type bookedOut struct {
		Restaurant string `json:"restaurant"`
		Party      int    `json:"party"`
		Date       string `json:"date"`
		Note       string `json:"note,omitempty"`
		Confirmed  bool   `json:"confirmed"`
	}
	err = AddTool(s, Tool{Name: "book_table"}, func(ctx context.Context, req *ToolRequest, in struct {
		Restaurant string `json:"restaurant"`
		Party      int    `json:"party"`
	}) (bookedOut, error) {
		res, err := req.CreateFormElicitation(ctx, "When?", when)
		if err != nil {
			return bookedOut{}, err
		}
		var w struct {
			Date string `json:"date"`
			Note string `json:"note"`
		}
		if err := res.Decode(&w); err != nil {
			return bookedOut{}, fmt.Errorf("no date: %w", err)
		}
		res, err = req.CreateFormElicitation(ctx, "Book "+in.Restaurant+" on "+w.Date+"?", sure)
		if err != nil {
			return bookedOut{}, err
		}
		var c struct {
			Confirm bool `json:"confirm"`
		}
		if err := res.Decode(&c); err != nil || !c.Confirm {
			return bookedOut{}, errors.New("not booked")
		}
		return bookedOut{Restaurant: in.Restaurant, Party: in.Party, Date: w.Date, Note: w.Note, Confirmed: true}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s)
	defer ts.Close()
	args := map[string]any{"restaurant": "Noma", "party": 2}
	// book answers the date question, then the confirmation with confirm.
	book := func(confirm func() (*elicit.Result, error)) *mcptest.ToolResult {
		t.Helper()
		c := newClientOpts(t, mcptest.URL(ts.URL, ts.Client()), &mcptest.Options{
			Capabilities: capsOf(t, formCaps),
			Elicitation: func(ctx context.Context, req *elicit.Request) (*elicit.Result, error) {
				if req.Message == "When?" {
					return mcptest.Accept(map[string]any{"date": "2026-08-01", "note": "window"})
				}
				if req.Message != "Book Noma on 2026-08-01?" {
					return nil, fmt.Errorf("second question %q", req.Message)
				}
				return confirm()
			},
		})
		res, err := c.CallTool(testContext(t), "book_table", args)
		if err != nil {
			t.Fatal(err)
		}
		// Three requests, one question in each of the first two.
		if keys := roundKeys(res.Exchange); len(keys) != 2 || len(keys[0]) != 1 || len(keys[1]) != 1 {
			t.Fatalf("rounds asked %v, want one question in each of two rounds", keys)
		}
		for i, r := range res.Exchange.Rounds {
			if r.Status != http.StatusOK {
				t.Errorf("round %d: HTTP %d", i+1, r.Status)
			}
		}
		return res
	}
	final := book(func() (*elicit.Result, error) { return mcptest.Accept(map[string]any{"confirm": true}) })
	var got map[string]any
	want := map[string]any{"restaurant": "Noma", "party": 2.0, "date": "2026-08-01", "note": "window", "confirmed": true}
	if err := final.Decode(&got); err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("round 3: structuredContent %s (%v)", final.StructuredContent, err)
	}
	if text := final.Text(); final.IsError || !strings.Contains(text, `"confirmed":true`) {
		t.Errorf("round 3 text %q", text)
	}

	// Declined at the second question: an isError result.
	final = book(mcptest.Decline)
	if text := final.Text(); !final.IsError || text != "not booked" {
		t.Errorf("declined: %q (isError %v)", text, final.IsError)
	}
}

// A typed handler's error wrapping ErrInputRequired suspends the call.
func TestTypedToolSuspends(t *testing.T) {
	s := newTestServer(t, nil)
	form := confirmForm(t, "Sure?")
	err := AddTool(s, Tool{Name: "ask"}, func(ctx context.Context, req *ToolRequest, _ struct{}) (booking, error) {
		if _, err := req.Elicit(ctx, form, WithKey("sure")); err != nil {
			return booking{}, fmt.Errorf("asking: %w", err)
		}
		return booking{Confirmed: true}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	c := newClient(t, s, elicitCaps)
	r1 := wantInputRequired(t, sendTool(t, c, "ask", nil), "sure")
	res := completeResult(t, sendTool(t, c, "ask", nil, mcptest.Resume(r1.RequestState, map[string]any{"sure": accept(true)})))
	if sc, _ := res["structuredContent"].(map[string]any); sc["confirmed"] != true {
		t.Errorf("result %v", res)
	}
}
