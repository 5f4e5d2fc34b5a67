package legacy

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/baton-mcp/baton/elicit"
)

// TestElicitParamsEncoding: the params of elicitation/create, which
// peer.Request writes with the question's AppendJSON, are the bytes
// json.Marshal writes for it (HTML characters escaped, compact), for
// every kind of field and a URL question.
func TestElicitParamsEncoding(t *testing.T) {
	form, err := elicit.NewForm(`Proceed <b>"now"</b> & then? é`,
		elicit.Boolean("confirm").Required().Title("OK?").Default(true),
		elicit.String("name").MinLength(1).MaxLength(10).Description("a <name>").Default("x&y"),
		elicit.String("mail").Format(elicit.FormatEmail),
		elicit.Number("n").Minimum(-1.5).Maximum(1e21).Default(0.1),
		elicit.Integer("i").Minimum(0).Maximum(9),
		elicit.Enum("e", "a", "<b>").Default("a"),
		elicit.TitledEnum("te", elicit.Option{Const: "1", Title: "One & only"}),
		elicit.MultiEnum("me", "x", "y").MinItems(1).MaxItems(2).Default([]string{"x"}),
		elicit.TitledMultiEnum("tme", elicit.Option{Const: "p", Title: "P"}),
		elicit.LegacyEnum("le", []string{"a", "b"}, []string{"A", "B"}),
	)
	if err != nil {
		t.Fatal(err)
	}
	plain, err := elicit.NewForm("Proceed?", elicit.Boolean("confirm").Required())
	if err != nil {
		t.Fatal(err)
	}
	url, err := elicit.NewURL("Sign in <here>", "https://example.com/a?b=1&c=2")
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []*elicit.Request{form, plain, url} {
		want, err := json.Marshal(q)
		if err != nil {
			t.Fatal(err)
		}
		if got := q.AppendJSON(nil); !bytes.Equal(got, want) {
			t.Errorf("AppendJSON %s\njson.Marshal %s", got, want)
		}
	}
}
