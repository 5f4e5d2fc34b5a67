package mcp

import (
	"encoding/json"
	"testing"
)

// AppendJSON and MarshalJSON agree, and the result decodes back.
func TestAppendJSON(t *testing.T) {
	p := 0.5
	for _, b := range []Block{
		Text(""),
		Text("héllo \"world\"\n<b>"),
		Image([]byte{1, 2, 3}, "image/png"),
		Audio([]byte{4}, "audio/wav"),
		Link("file:///a", "a"),
		Embedded(TextContents("test://r", "text/plain", "body")),
		Embedded(BlobContents("test://b", "image/png", []byte{9})),
		{Type: BlockText, Text: "annotated", Annotations: &Annotations{Priority: &p}},
		{Type: BlockToolUse, ID: "u1", Name: "t", Input: json.RawMessage(`{"a":1}`)},
	} {
		got, err := b.AppendJSON([]byte("x"))
		if err != nil {
			t.Fatal(err)
		}
		if got[0] != 'x' {
			t.Fatal("AppendJSON must append")
		}
		want, err := b.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		var g, w any
		if json.Unmarshal(got[1:], &g) != nil || json.Unmarshal(want, &w) != nil {
			t.Fatalf("invalid JSON: %s / %s", got[1:], want)
		}
		gb, _ := json.Marshal(g)
		wb, _ := json.Marshal(w)
		if string(gb) != string(wb) {
			t.Errorf("AppendJSON %s differs from MarshalJSON %s", got[1:], want)
		}
		var back Block
		if err := json.Unmarshal(got[1:], &back); err != nil || back.Type != b.Type {
			t.Errorf("%s does not decode back: %v", got[1:], err)
		}
	}
	if _, err := (Block{Type: "bogus"}).AppendJSON(nil); err == nil {
		t.Error("an unknown block type must be an error")
	}
}
