package mrtr

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/baton-mcp/baton/elicit"
	"github.com/baton-mcp/baton/mcp"
)

func TestInputRequestJSONRoundTrip(t *testing.T) {
	form := confirmForm(t, "ok?")
	sample := &mcp.CreateMessageParams{Messages: []mcp.SamplingMessage{mcp.UserText("hi")}, MaxTokens: 5}
	for _, ir := range []InputRequest{ElicitRequest(form), SampleRequest(sample), RootsRequest()} {
		b, err := json.Marshal(ir)
		if err != nil {
			t.Fatal(err)
		}
		var back InputRequest
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		b2, err := json.Marshal(back)
		if err != nil {
			t.Fatal(err)
		}
		if back.Method() != ir.Method() || string(b) != string(b2) {
			t.Fatalf("%s did not survive a JSON round trip", b)
		}
	}
	for _, bad := range []string{
		`{"method":"tools/call"}`,
		`{"method":"elicitation/create","params":{"message":"x","requestedSchema":{"type":"object","properties":{"a":{"type":"object"}}}}}`,
		`{"method":"sampling/createMessage","params":{"messages":[],"maxTokens":5}}`,
		`{"method":"sampling/createMessage","params":{"messages":[{"role":"system","content":{"type":"text","text":"x"}}],"maxTokens":5}}`,
	} {
		var ir InputRequest
		if err := json.Unmarshal([]byte(bad), &ir); err == nil {
			t.Errorf("%s should be refused", bad)
		}
	}
}

func TestModernElicitationHasNoID(t *testing.T) {
	req, err := elicit.NewURL("Sign in", "https://example.com/login")
	if err != nil {
		t.Fatal(err)
	}
	req.ElicitationID = "legacy-1"
	if err := ElicitRequest(req).Validate(); err == nil || !strings.Contains(err.Error(), "elicitationId") {
		t.Fatalf("err = %v", err)
	}
}

// TestRootsRequestWire checks roots/list goes out with "params":{} (some
// clients cannot decode a request without params) and is read back with
// params absent or present.
func TestRootsRequestWire(t *testing.T) {
	b, err := json.Marshal(RootsRequest())
	if err != nil || string(b) != `{"method":"roots/list","params":{}}` {
		t.Fatalf("RootsRequest() = %s (%v), want {\"method\":\"roots/list\",\"params\":{}}", b, err)
	}
	for _, in := range []string{`{"method":"roots/list"}`, `{"method":"roots/list","params":{}}`} {
		var ir InputRequest
		if err := json.Unmarshal([]byte(in), &ir); err != nil || ir.Method() != MethodListRoots {
			t.Errorf("%s: %v, method %q", in, err, ir.Method())
		}
	}
}

// TestMissingCapabilityMessages pins the wording the client reads in a
// -32021 error for each kind of input request.
func TestMissingCapabilityMessages(t *testing.T) {
	urlReq, err := elicit.NewURL("Sign in", "https://example.com/login")
	if err != nil {
		t.Fatal(err)
	}
	sample := &mcp.CreateMessageParams{Messages: []mcp.SamplingMessage{mcp.UserText("hi")}, MaxTokens: 10}
	for _, tc := range []struct {
		ir   InputRequest
		caps mcp.ClientCapabilities
		want string
	}{
		{ElicitRequest(confirmForm(t, "x")), mcp.ClientCapabilities{}, "an elicitation/create input request in form mode needs the client capability elicitation, which this request did not declare"},
		{ElicitRequest(urlReq), mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapability{}}, "an elicitation/create input request in url mode needs the client capability elicitation.url, which this request did not declare"},
		{SampleRequest(sample), mcp.ClientCapabilities{}, "a sampling/createMessage input request needs the client capability sampling, which this request did not declare"},
		{RootsRequest(), mcp.ClientCapabilities{}, "a roots/list input request needs the client capability roots, which this request did not declare"},
	} {
		err := tc.ir.CheckCapabilities(tc.caps)
		if err == nil || err.Error() != tc.want {
			t.Errorf("%s: error %v, want %q", tc.ir.Method(), err, tc.want)
		}
		var mc *mcp.MissingCapabilityError
		if !errors.As(err, &mc) {
			t.Errorf("%s: error %T, want *mcp.MissingCapabilityError", tc.ir.Method(), err)
		} else if rpc := mc.RPCError(); rpc.Message != "Missing required client capability: "+tc.want {
			t.Errorf("%s: wire message %q", tc.ir.Method(), rpc.Message)
		}
	}
}

func confirmForm(t testing.TB, message string) *elicit.Request {
	t.Helper()
	r, err := elicit.NewForm(message, elicit.Boolean("confirm").Required())
	if err != nil {
		t.Fatal(err)
	}
	return r
}
