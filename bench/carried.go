package main

import (
	"fmt"
	"strconv"
	"strings"
)

// The carried scenario measures issue 23's bound over HTTP: "server CPU
// per request grows by at most 10% from 1 to 16 carried answers". Each
// operation is one retry of the ask tool whose sealed state carries k
// answers recorded by earlier rounds, answering the question that state
// issued. In carried-k the retry completes (the tool asks k+1 questions);
// in carried-suspend-k it asks one more question and seals a state
// carrying k+1 answers (the tool asks k+2). Each worker builds its retry
// once, through the rounds before it, and then sends the same request
// again and again: the ask tool keeps no ledger, so the request is
// served the same way every time, and one operation is one request.
// BenchmarkCarried (carried_test.go) is the same request in process.

// carriedScenario is the scenario name of the carried measurement with k
// carried answers, and carriedOf its inverse.
func carriedScenario(k int, suspend bool) string {
	if suspend {
		return "carried-suspend-" + strconv.Itoa(k)
	}
	return "carried-" + strconv.Itoa(k)
}

func carriedOf(sc string) (k int, suspend, ok bool) {
	rest, ok := strings.CutPrefix(sc, "carried-")
	if !ok {
		return 0, false, false
	}
	rest, suspend = strings.CutPrefix(rest, "suspend-")
	k, err := strconv.Atoi(rest)
	return k, suspend, err == nil
}

// carriedCountsOf parses -carried ("1,16"): each k from 1 to maxRounds-2.
func carriedCountsOf(s string) ([]int, error) {
	var out []int
	for _, f := range split(s) {
		k, err := strconv.Atoi(f)
		if err != nil || k < 1 || k > maxRounds-2 {
			return nil, fmt.Errorf("-carried: %q is not a number of carried answers from 1 to %d", f, maxRounds-2)
		}
		out = append(out, k)
	}
	return out, nil
}

// carriedOp returns one worker's operation for scenario (k, suspend): it
// runs the rounds that lead to the retry on its first call, then sends
// the retry.
func (c *rawClient) carriedOp(k int, suspend bool) func() error {
	n := k + 1
	want := []string{`"resultType":"complete"`, `"text":"done ` + strconv.Itoa(n) + `"`}
	if suspend {
		n = k + 2
		want = []string{`"resultType":"input_required"`, `"q` + strconv.Itoa(k+2) + `":{"method":"elicitation/create"`}
	}
	args := `"arguments":{"n":` + strconv.Itoa(n) + `},`
	var retry string
	return func() error {
		if retry == "" {
			params := args
			for r := 1; r <= k+1; r++ {
				if err := c.call(askTool, params); err != nil {
					return fmt.Errorf("building the retry, round %d: %w", r, err)
				}
				if err := c.checkCheap(askTool, `"resultType":"input_required"`, `"q`+strconv.Itoa(r)+`":{"method":"elicitation/create"`); err != nil {
					return fmt.Errorf("building the retry, round %d: %w", r, err)
				}
				state, err := c.state()
				if err != nil {
					return fmt.Errorf("building the retry, round %d: %w", r, err)
				}
				params = args + `"inputResponses":{"q` + strconv.Itoa(r) + `":{"action":"accept","content":{"ok":true}}},"requestState":"` + state + `",`
			}
			retry = params
		}
		if err := c.call(askTool, retry); err != nil {
			return err
		}
		if c.full() {
			if _, err := c.decode(askTool); err != nil {
				return err
			}
		}
		if err := c.checkCheap(askTool, want...); err != nil {
			return err
		}
		if suspend {
			lastStateLen.Store(int64(len(stateIn(c.body))))
		}
		return nil
	}
}

// reportCarried prints the carried-answers table: server CPU per request
// by the answers the retry's state carries, and its growth from the
// smallest k measured, against the bound (+10% from 1 to 16),
// for Baton and beside it the carried floor (carried_floor.go), then the
// cost per carried answer of each.
func reportCarried(scs []string, sum map[string]map[string]*summary) {
	fmt.Printf("\n## (c2) carried answers: one retry per operation whose state carries k answers (the issue's bound: server CPU per request +10%% at most from 1 to 16)\n\n")
	fmt.Println("| server | mode | k | requests/s | server CPU/request | growth from the first k | allocs/request | alloc KiB/request | state bytes of the reply | others on server CPU | bound by | verdict | errors |")
	fmt.Println("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---|---|---:|")
	type line struct {
		server string
		mode   string
		k0, k  int
		perAns float64
	}
	var per []line
	for _, server := range []string{"baton", "floor"} {
		base := map[bool]*summary{}
		baseK := map[bool]int{}
		for _, sc := range scs {
			k, suspend, _ := carriedOf(sc)
			m := sum[sc][server]
			if m == nil {
				continue
			}
			mode := "complete"
			if suspend {
				mode = "suspend"
			}
			growth, verdict := "–", "–"
			if b := base[suspend]; b == nil {
				base[suspend], baseK[suspend] = m, k
			} else {
				g := m.srvCPU/b.srvCPU - 1
				growth = fmt.Sprintf("%+.0f%%", 100*g)
				if baseK[suspend] == 1 && k == 16 && server == "baton" {
					verdict = "MISS"
					if g <= 0.10 {
						verdict = "PASS"
					}
				}
				per = append(per, line{server, mode, baseK[suspend], k, (m.srvCPU - b.srvCPU) / float64(k-baseK[suspend])})
			}
			errs := fmt.Sprint(m.errors)
			if m.errors > 0 {
				errs += " INVALID"
				verdict = "INVALID (errors)"
			}
			state := "–" // a completed call's reply has no state
			if suspend {
				state = fmt.Sprint(m.stateLen)
			}
			fmt.Printf("| %s | %s | %d | %.0f | %.1fµs | %s | %.1f | %.1f | %s | %s | %s | %s | %s |\n", server, mode, k, m.ops, m.srvCPU, growth,
				m.allocs, m.bytes/1024, state, fmtOthers(m.others), m.bound(), verdict, errs)
		}
	}
	if len(per) == 0 {
		return
	}
	fmt.Printf("\nServer CPU per carried answer (the growth divided by the answers added). " +
		"The issue's +10%% bound assumed the growth was answers validated again; what is left grows with the state's bytes " +
		"and the handler's replay, which any server carrying its answers sealed pays (see bench/notes/carried-answers.md, \"The carried-answers bound\"). " +
		"So Baton's cost per answer is also held against the carried floor's, mode for mode: at most the floor's is PASS.\n\n")
	fmt.Println("| server | mode | from k to k | µs per carried answer | against the floor's | verdict |")
	fmt.Println("|---|---|---|---:|---:|---|")
	floor := map[string]float64{}
	for _, l := range per {
		if l.server == "floor" {
			floor[l.mode] = l.perAns
		}
	}
	for _, l := range per {
		ratio, verdict := "–", "–"
		if f, ok := floor[l.mode]; ok && l.server == "baton" && f > 0 {
			ratio = fmt.Sprintf("%.2f×", l.perAns/f)
			verdict = "MISS"
			if l.perAns <= f {
				verdict = "PASS"
			}
		}
		fmt.Printf("| %s | %s | %d → %d | %.2fµs | %s | %s |\n", l.server, l.mode, l.k0, l.k, l.perAns, ratio, verdict)
	}
}
