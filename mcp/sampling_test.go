package mcp

import (
	"strings"
	"testing"
)

func TestParseCreateMessageResult(t *testing.T) {
	res, err := ParseCreateMessageResult([]byte(`{"role":"assistant","content":{"type":"text","text":"Paris"},"model":"m","stopReason":"endTurn"}`))
	if err != nil || res.Text() != "Paris" || res.Model != "m" {
		t.Fatalf("%+v, %v", res, err)
	}
	res, err = ParseCreateMessageResult([]byte(`{"role":"assistant","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}],"model":"m"}`))
	if err != nil || res.Text() != "ab" {
		t.Fatalf("array content: %+v, %v", res, err)
	}
	for _, bad := range []string{`12`, `null`, `{"role":"assistant","model":"m"}`, `{"role":"robot","content":{"type":"text","text":"x"},"model":"m"}`, `{"role":"assistant","content":{"type":"text","text":"x"}}`} {
		if _, err := ParseCreateMessageResult([]byte(bad)); err == nil {
			t.Errorf("%s should be refused", bad)
		}
	}
}

func TestParseListRootsResult(t *testing.T) {
	res, err := ParseListRootsResult([]byte(`{"roots":[{"uri":"file:///a","name":"A"}]}`))
	if err != nil || len(res.Roots) != 1 || res.Roots[0].Name != "A" {
		t.Fatalf("%+v, %v", res, err)
	}
	for _, bad := range []string{`{}`, `{"roots":[{"uri":"https://x"}]}`, `[]`, `"x"`} {
		_, err := ParseListRootsResult([]byte(bad))
		if err == nil || !strings.Contains(err.Error(), "roots result") {
			t.Errorf("%s: err = %v", bad, err)
		}
	}
}
