package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/baton-mcp/baton/elicit"
	"github.com/baton-mcp/baton/server"
)

// askTool is the rounds scenario's tool on the Baton server: it asks n
// questions in sequence (n from its arguments, 1 to maxRounds), each a
// form with one required boolean, keyed q1 … qn, and answers "done n" once
// every answer is yes. On the stateless protocol the handler runs again
// from the top on every round: the answers of the earlier rounds come
// back from the sealed state, so round k replays k-1 answers and its state
// carries them.
const (
	askTool   = "ask"
	maxRounds = 64
)

func addAskTool(srv *server.Server) error {
	// The forms and their keys are built once, as a handler asking a fixed
	// sequence writes them as literals: the key's string is not the
	// handler's work on every ask.
	forms := make([]*elicit.Request, maxRounds+1)
	keys := make([]string, maxRounds+1)
	for i := 1; i <= maxRounds; i++ {
		f, err := elicit.NewForm("Step "+strconv.Itoa(i)+"?", elicit.Boolean("ok").Required())
		if err != nil {
			return err
		}
		forms[i], keys[i] = f, "q"+strconv.Itoa(i)
	}
	return server.AddTool(srv, server.Tool{Name: askTool, Description: "Asks n questions in sequence, then answers"},
		func(ctx context.Context, req *server.ToolRequest, in askIn) (*server.ToolResult, error) {
			if in.N < 1 || in.N > maxRounds {
				return server.ErrorResult("n out of range"), nil
			}
			for i := 1; i <= in.N; i++ {
				answer, err := req.Elicit(ctx, forms[i], server.WithKey(keys[i]))
				if err != nil {
					return nil, err
				}
				var a struct {
					OK bool `json:"ok"`
				}
				if answer.Action != elicit.ActionAccept || answer.Decode(&a) != nil || !a.OK {
					return server.ErrorResult("not confirmed"), nil
				}
			}
			return server.TextResult("done " + strconv.Itoa(in.N)), nil
		})
}

// askIn is the ask tool's typed input (the schema is inferred from it).
type askIn struct {
	N int `json:"n" jsonschema:"how many questions to ask in sequence"`
}

// roundsOp is one flow of the rounds scenario with n questions: n
// input_required rounds, each answered with the last question's answer
// and the echoed state, then the complete result. One operation.
func (c *rawClient) roundsOp(n int) error {
	args := `"arguments":{"n":` + strconv.Itoa(n) + `},`
	params := args
	for k := 1; k <= n; k++ {
		if err := c.call(askTool, params); err != nil {
			return fmt.Errorf("round %d: %w", k, err)
		}
		key := "q" + strconv.Itoa(k)
		if c.full() {
			r, err := c.decode(askTool)
			if err != nil {
				return fmt.Errorf("round %d: %w", k, err)
			}
			q, ok := r.Result.InputRequests[key]
			if r.Result.ResultType != "input_required" || !ok || len(r.Result.InputRequests) != 1 ||
				q.Method != "elicitation/create" || q.Params.RequestedSchema.Properties["ok"].Type != "boolean" {
				b, _ := json.Marshal(r.Result)
				return fmt.Errorf("round %d: want input_required asking %s, got %.300s", k, key, b)
			}
		} else if err := c.checkCheap(askTool, `"resultType":"input_required"`, `"`+key+`":{"method":"elicitation/create"`); err != nil {
			return fmt.Errorf("round %d: %w", k, err)
		}
		state, err := c.state()
		if err != nil {
			return fmt.Errorf("round %d: %w", k, err)
		}
		if k == 1 {
			firstStateLen.Store(int64(len(state)))
		}
		lastStateLen.Store(int64(len(state)))
		params = args + `"inputResponses":{"` + key + `":{"action":"accept","content":{"ok":true}}},"requestState":"` + state + `",`
	}
	if err := c.call(askTool, params); err != nil {
		return fmt.Errorf("last round: %w", err)
	}
	want := "done " + strconv.Itoa(n)
	if c.full() {
		r, err := c.decode(askTool)
		if err != nil {
			return fmt.Errorf("last round: %w", err)
		}
		return wantText(r, want)
	}
	return c.checkCheap(askTool, `"resultType":"complete"`, `"text":"`+want+`"`)
}

// roundsOf parses the rounds scenario's list ("1,2,4,8,16").
func roundsOf(s string) ([]int, error) {
	var out []int
	for _, f := range split(s) {
		n, err := strconv.Atoi(f)
		if err != nil || n < 1 || n > maxRounds {
			return nil, fmt.Errorf("-rounds: %q is not a number of rounds from 1 to %d", f, maxRounds)
		}
		out = append(out, n)
	}
	return out, nil
}

// roundsScenario is the scenario name of the rounds measurement with n
// questions, and roundsN its inverse.
func roundsScenario(n int) string { return "rounds-" + strconv.Itoa(n) }

func roundsN(sc string) (int, bool) {
	rest, ok := strings.CutPrefix(sc, "rounds-")
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(rest)
	return n, err == nil
}
