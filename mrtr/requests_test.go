package mrtr

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/baton-mcp/baton/client"
	"github.com/baton-mcp/baton/elicit"
)

func TestInputRequestJSONRoundTrip(t *testing.T) {
	form := confirmForm(t, "ok?")
	sample := &client.CreateMessageParams{Messages: []client.SamplingMessage{client.UserText("hi")}, MaxTokens: 5}
	for _, ir := range []InputRequest{ElicitRequest(form), SampleRequest(sample), RootsRequest()} {
		b, err := json.Marshal(ir)
		if err != nil {
			t.Fatal(err)
		}
		var back InputRequest
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		d1, _ := ir.Digest()
		d2, _ := back.Digest()
		if back.Method() != ir.Method() || d1 != d2 {
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

func TestDigestDistinguishesRequests(t *testing.T) {
	a, _ := ElicitRequest(confirmForm(t, "a")).Digest()
	b, _ := ElicitRequest(confirmForm(t, "b")).Digest()
	r, _ := RootsRequest().Digest()
	s1, _ := SampleRequest(&client.CreateMessageParams{Messages: []client.SamplingMessage{client.UserText("x")}, MaxTokens: 5}).Digest()
	s2, _ := SampleRequest(&client.CreateMessageParams{Messages: []client.SamplingMessage{client.UserText("x")}, MaxTokens: 6}).Digest()
	seen := map[Digest]bool{}
	for _, d := range []Digest{a, b, r, s1, s2} {
		if seen[d] {
			t.Fatal("two different requests share a digest")
		}
		seen[d] = true
	}
}

func TestParseCreateMessageResult(t *testing.T) {
	res, err := client.ParseCreateMessageResult([]byte(`{"role":"assistant","content":{"type":"text","text":"Paris"},"model":"m","stopReason":"endTurn"}`))
	if err != nil || res.Text() != "Paris" || res.Model != "m" {
		t.Fatalf("%+v, %v", res, err)
	}
	res, err = client.ParseCreateMessageResult([]byte(`{"role":"assistant","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}],"model":"m"}`))
	if err != nil || res.Text() != "ab" {
		t.Fatalf("array content: %+v, %v", res, err)
	}
	for _, bad := range []string{`12`, `null`, `{"role":"assistant","model":"m"}`, `{"role":"robot","content":{"type":"text","text":"x"},"model":"m"}`, `{"role":"assistant","content":{"type":"text","text":"x"}}`} {
		if _, err := client.ParseCreateMessageResult([]byte(bad)); err == nil {
			t.Errorf("%s should be refused", bad)
		}
	}
}

func TestParseListRootsResult(t *testing.T) {
	res, err := client.ParseListRootsResult([]byte(`{"roots":[{"uri":"file:///a","name":"A"}]}`))
	if err != nil || len(res.Roots) != 1 || res.Roots[0].Name != "A" {
		t.Fatalf("%+v, %v", res, err)
	}
	for _, bad := range []string{`{}`, `{"roots":[{"uri":"https://x"}]}`, `[]`, `"x"`} {
		_, err := client.ParseListRootsResult([]byte(bad))
		if err == nil || !strings.Contains(err.Error(), "roots result") {
			t.Errorf("%s: err = %v", bad, err)
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

// TestMissingCapabilityMessages pins the wording the client reads in a
// -32021 error for each kind of input request.
func TestMissingCapabilityMessages(t *testing.T) {
	urlReq, err := elicit.NewURL("Sign in", "https://example.com/login")
	if err != nil {
		t.Fatal(err)
	}
	sample := &client.CreateMessageParams{Messages: []client.SamplingMessage{client.UserText("hi")}, MaxTokens: 10}
	for _, tc := range []struct {
		ir   InputRequest
		caps client.Capabilities
		want string
	}{
		{ElicitRequest(confirmForm(t, "x")), client.Capabilities{}, "an elicitation/create input request in form mode needs the client capability elicitation, which this request did not declare"},
		{ElicitRequest(urlReq), client.Capabilities{Elicitation: &client.ElicitationCapability{}}, "an elicitation/create input request in url mode needs the client capability elicitation.url, which this request did not declare"},
		{SampleRequest(sample), client.Capabilities{}, "a sampling/createMessage input request needs the client capability sampling, which this request did not declare"},
		{RootsRequest(), client.Capabilities{}, "a roots/list input request needs the client capability roots, which this request did not declare"},
	} {
		err := tc.ir.CheckCapabilities(tc.caps)
		if err == nil || err.Error() != tc.want {
			t.Errorf("%s: error %v, want %q", tc.ir.Method(), err, tc.want)
		}
		var mc *client.MissingCapabilityError
		if !errors.As(err, &mc) {
			t.Errorf("%s: error %T, want *MissingCapabilityError", tc.ir.Method(), err)
		} else if rpc := mc.RPCError(); rpc.Message != "Missing required client capability: "+tc.want {
			t.Errorf("%s: wire message %q", tc.ir.Method(), rpc.Message)
		}
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
