package server

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"testing"

	"github.com/baton-mcp/baton/elicit"
	"github.com/baton-mcp/baton/mcptest"
)

// TestReplayedAnswersEveryWay: a handler that replays its questions from
// the top gets, on every round, the recorded answer of each earlier
// question as a result it can decode, whether the question has a key of
// its own or not, and when it asks a keyed question twice in a run (the
// second time the same result, not a nil one).
func TestReplayedAnswersEveryWay(t *testing.T) {
	const n = 12 // more than the round's scan of recorded answers
	srv := newTestServer(t, nil)
	forms := make([]*elicit.Request, n)
	for i := range forms {
		f, err := elicit.NewForm("Step "+strconv.Itoa(i)+"?", elicit.Integer("v").Required())
		if err != nil {
			t.Fatal(err)
		}
		forms[i] = f
	}
	rounds := 0
	mustAddTool(t, srv, Tool{Name: "steps"}, func(ctx context.Context, req *ToolRequest) (*ToolResult, error) {
		rounds++
		sum := 0
		for i, f := range forms {
			var opts []AskOption
			times := 1    // a question without a key asked again is another question (at the next position)
			if i%3 != 2 { // every third question without a key of its own
				opts = append(opts, WithKey("s"+strconv.Itoa(i)))
				times = 2
			}
			for again := range times {
				res, err := req.Elicit(ctx, f, opts...)
				if err != nil {
					return nil, err
				}
				if res == nil {
					return nil, fmt.Errorf("question %d (asked %d times): nil result", i, again+1)
				}
				var v struct {
					V int `json:"v"`
				}
				if err := res.Decode(&v); err != nil {
					return nil, err
				}
				if v.V != 10*i {
					return nil, fmt.Errorf("question %d: v = %d, want %d", i, v.V, 10*i)
				}
				if again == 0 {
					sum += v.V
				}
			}
		}
		return TextResult("sum " + strconv.Itoa(sum)), nil
	})
	step := map[string]int{}
	for i, f := range forms {
		step[f.Message] = i
	}
	c := newClientOpts(t, mcptest.Handler(srv), &mcptest.Options{
		Capabilities: capsOf(t, `{"elicitation":{"form":{}}}`),
		MaxRounds:    n + 2,
		Elicitation: func(ctx context.Context, r *elicit.Request) (*elicit.Result, error) {
			i, ok := step[r.Message]
			if !ok {
				return nil, errors.New("unknown question " + r.Message)
			}
			return &elicit.Result{Action: elicit.ActionAccept, Content: []byte(`{"v":` + strconv.Itoa(10*i) + `}`)}, nil
		},
	})
	res, err := c.CallTool(testContext(t), "steps", nil)
	if err != nil {
		t.Fatal(err)
	}
	want := 0
	for i := range n {
		want += 10 * i
	}
	if res.IsError || len(res.Content) != 1 || res.Content[0].Text != "sum "+strconv.Itoa(want) {
		t.Fatalf("result %+v, want sum %d", res, want)
	}
	if rounds != n+1 {
		t.Fatalf("%d rounds, want %d", rounds, n+1)
	}
}
