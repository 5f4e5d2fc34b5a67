package main

import (
	"fmt"
	"runtime"
	"runtime/metrics"
	"slices"
	"strconv"
	"strings"
	"time"
)

// legacyServersFor is the servers of the 2025-11-25 scenarios among
// -servers (baton-echo has no 2025-11-25 variant), by legacyKey.
func legacyServersFor(cfg config) []string {
	var out []string
	for _, name := range legacyServerNames {
		if slices.Contains(cfg.servers, name) {
			out = append(out, legacyKey(name))
		}
	}
	return out
}

// baseName is the -servers name of a server key (legacyKey undone).
func baseName(s string) string { return strings.TrimSuffix(s, "/2025") }

var legacyTitle = map[string]string{
	"session-call":   "(d) session-call (2025-11-25): one tools/call echo in an initialized session per operation",
	"session-elicit": "(e) session-elicit (2025-11-25): one blocking elicitation round trip per operation (tools/call → elicitation/create on the call's stream → answer POSTed, 202 → result)",
}

// reportLegacy prints the 2025-11-25 scenarios' tables and their ratios.
func reportLegacy(cfg config, all map[string]map[string][]*result, sum map[string]map[string]*summary) {
	var scs []string
	for _, sc := range cfg.scenarios {
		if legacyScenario(sc) {
			scs = append(scs, sc)
		}
	}
	if len(scs) == 0 {
		return
	}
	for _, sc := range scs {
		fmt.Printf("\n## %s\n\n", legacyTitle[sc])
		fmt.Printf("Baton's options changed from the defaults: %s.\n\n", legacyOptionsChanged)
		fmt.Println("| server | ops/s (median) | min–max ops/s | p50 | p99 | server CPU/op | server busy | others on server CPU | generator CPU/op | generator busy | bound by | allocs/op | alloc KiB/op | errors |")
		fmt.Println("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|")
		for _, s := range legacyServersFor(cfg) {
			m := sum[sc][s]
			if m == nil {
				continue
			}
			errs := fmt.Sprint(m.errors)
			if m.errors > 0 {
				errs += " INVALID"
			}
			fmt.Printf("| %s | %.0f | %.0f–%.0f | %s | %s | %.1fµs | %.0f%% | %s | %.1fµs | %.0f%% | %s | %.0f | %.1f | %s |\n", legacyLabel(s), m.ops, m.min, m.max,
				fmtDur(time.Duration(m.p50)), fmtDur(time.Duration(m.p99)), m.srvCPU, m.srvBusy, fmtOthers(m.others), m.cliCPU, m.cliBusy, m.bound(),
				m.allocs, m.bytes/1024, errs)
		}
	}
	fmt.Printf("\n## Ratios (2025-11-25)\n\nAs above: ops/s = ratio of the medians (the verdict), paired = per repetition, CPU = from server CPU per operation. mcp-go has no target (about 1.8x is the best expected: its plain call costs about twice a bare request).\n\n")
	fmt.Printf("| ratio | ops/s | paired | CPU | target | verdict (ops/s) | verdict (CPU) | note |\n|---|---:|---:|---:|---:|---|---|---|\n")
	for _, sc := range scs {
		for _, t := range []struct {
			den string
			min float64
		}{{"floor", 0.85}, {"gosdk", 5}, {"mcpgo", 0}} {
			num, den := legacyKey("baton"), legacyKey(t.den)
			n, d := sum[sc][num], sum[sc][den]
			if n == nil || d == nil {
				continue
			}
			var paired []float64
			for i, nr := range all[sc][num] {
				if i < len(all[sc][den]) {
					paired = append(paired, nr.OpsPerSec()/all[sc][den][i].OpsPerSec())
				}
			}
			v, vc := n.ops/d.ops, d.srvCPU/n.srvCPU
			target, verdict, verdictCPU := "–", "info", "info"
			if t.min > 0 {
				target = fmt.Sprintf("≥ %.2f", t.min)
				verdict, verdictCPU = "MISS", "MISS"
				if v >= t.min {
					verdict = "PASS"
				}
				if vc >= t.min {
					verdictCPU = "PASS"
				}
			}
			if n.errors > 0 || d.errors > 0 {
				verdict, verdictCPU = "INVALID (errors)", "INVALID (errors)"
			}
			note := ""
			if n.bound() != "server" || d.bound() != "server" {
				note = fmt.Sprintf("bound by: baton %s, %s %s", n.bound(), t.den, d.bound())
			}
			fmt.Printf("| baton/%s (%s) | %.2f | %.2f (%.2f–%.2f) | %.2f | %s | %s | %s | %s |\n", t.den, sc, v,
				median(paired), slices.Min(paired), slices.Max(paired), vc, target, verdict, verdictCPU, note)
		}
	}
}

// legacyLabel names a 2025-11-25 server in the tables.
func legacyLabel(s string) string {
	switch baseName(s) {
	case "baton":
		return "baton (server + legacy.New)"
	case "gosdk":
		return "gosdk (stateful)"
	case "mcpgo":
		return "mcpgo (WithStateful)"
	}
	return baseName(s)
}

// ---------------------------------------------------------------- memory

// liveMemory is the server process's live heap (bytes of live objects
// after two collections), goroutines and goroutine stack bytes.
func liveMemory() (heap, goroutines, stacks uint64) {
	runtime.GC()
	runtime.GC()
	ms := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/sched/goroutines:goroutines"}, {Name: "/memory/classes/heap/stacks:bytes"}}
	metrics.Read(ms)
	return ms[0].Value.Uint64(), ms[1].Value.Uint64(), ms[2].Value.Uint64()
}

// memRow is one server's memory per idle session and per parked call.
type memRow struct {
	server                    string
	sessionHeap, sessionStack float64 // bytes per idle session
	sessionGoroutines         float64
	parkedHeap, parkedStack   float64 // bytes per parked call
	parkedGoroutines          float64
	// Baton only: per call once it waits as its record (past HoldFor, its
	// POST stream ended and the client's connection closed).
	recordHeap, recordStack float64
	recordGoroutines        float64
	records                 bool
}

// memSnapshot reads the server process's live memory.
func memSnapshot(c *child) (heap, goroutines, stacks float64, err error) {
	v, err := c.query("heap")
	if err != nil {
		return 0, 0, 0, err
	}
	f := strings.Fields(v)
	if len(f) != 3 {
		return 0, 0, 0, fmt.Errorf("heap: %q", v)
	}
	var out [3]float64
	for i := range f {
		n, err := strconv.ParseUint(f[i], 10, 64)
		if err != nil {
			return 0, 0, 0, fmt.Errorf("heap: %q", v)
		}
		out[i] = float64(n)
	}
	return out[0], out[1], out[2], nil
}

// measureLegacyMemory measures, in the server process, for each
// 2025-11-25 server: n sessions opened (initialize and
// notifications/initialized, one after the other on one keep-alive
// connection) and left idle; then one call parked in each (tools/call
// confirm, each on a connection of its own, read up to its
// elicitation/create). Per idle session: the live heap, goroutines and
// stack growth over the n sessions, / n; per parked call: the growth from
// the idle sessions to the parked calls, / n (the call's HTTP connection
// included: a parked call holds one). Then every call is answered and
// checked, and its connection closed.
func measureLegacyMemory(c *child, urls map[string]string, cfg config) ([]memRow, error) {
	n := cfg.memorySessions
	var rows []memRow
	for _, s := range legacyServersFor(cfg) {
		url := urls[s]
		h0, g0, st0, err := memSnapshot(c)
		if err != nil {
			return nil, err
		}
		opener, err := newLegacyClient(url, 1<<30)
		if err != nil {
			return nil, err
		}
		sids := make([]string, n)
		for i := range n {
			if err := opener.initialize(); err != nil {
				return nil, fmt.Errorf("%s: session %d: %w", s, i, err)
			}
			sids[i] = opener.sid
		}
		h1, g1, st1, err := memSnapshot(c)
		if err != nil {
			return nil, err
		}
		callers := make([]*legacyClient, n)
		eids := make([][]byte, n)
		calls := make([]int, n)
		for i := range n {
			cl, err := newLegacyClient(url, 1<<30)
			if err != nil {
				return nil, err
			}
			cl.sid, cl.id = sids[i], 100
			callers[i] = cl
			if eids[i], calls[i], err = cl.startConfirm(); err != nil {
				return nil, fmt.Errorf("%s: parking call %d: %w", s, i, err)
			}
		}
		h2, g2, st2, err := memSnapshot(c)
		if err != nil {
			return nil, err
		}
		nf := float64(n)
		row := memRow{server: s,
			sessionHeap: (h1 - h0) / nf, sessionGoroutines: (g1 - g0) / nf, sessionStack: (st1 - st0) / nf,
			parkedHeap: (h2 - h1) / nf, parkedGoroutines: (g2 - g1) / nf, parkedStack: (st2 - st1) / nf,
		}
		if baseName(s) == "baton" {
			// Past legacy.Options.HoldFor (2 s) the calls park: each POST
			// stream ends (SSE polling) and the client, which would resume
			// later, closes its connection. What is left is the records.
			for i := range n {
				if err := callers[i].main.finishBody(); err != nil {
					return nil, fmt.Errorf("%s: the stream of call %d did not end: %w", s, i, err)
				}
				callers[i].close()
			}
			var h3, g3, st3 float64
			for range 50 { // until the server has let go of the connections
				time.Sleep(100 * time.Millisecond)
				if h3, g3, st3, err = memSnapshot(c); err != nil {
					return nil, err
				}
				if g3 <= g1+nf/100 {
					break
				}
			}
			row.records = true
			row.recordHeap, row.recordGoroutines, row.recordStack = (h3-h1)/nf, (g3-g1)/nf, (st3-st1)/nf
			for i := range n {
				opener.sid = sids[i]
				if err := opener.answerConfirm(eids[i], true); err != nil {
					return nil, fmt.Errorf("%s: answering parked call %d: %w", s, i, err)
				}
			}
			opener.close()
			rows = append(rows, row)
			fmt.Printf("# memory %-10s idle session %6.2f KiB heap, %.2f goroutines, %.2f KiB stack; call waiting in its handler (first %v) %6.2f KiB heap, %.2f goroutines, %.2f KiB stack; call waiting as its record %6.2f KiB heap, %.2f goroutines, %.2f KiB stack\n",
				s, row.sessionHeap/1024, row.sessionGoroutines, row.sessionStack/1024, batonHoldFor, row.parkedHeap/1024, row.parkedGoroutines, row.parkedStack/1024,
				row.recordHeap/1024, row.recordGoroutines, row.recordStack/1024)
			continue
		}
		for i := range n {
			opener.sid = sids[i]
			if err := opener.answerConfirm(eids[i], true); err != nil {
				return nil, fmt.Errorf("%s: answering call %d: %w", s, i, err)
			}
			if err := callers[i].endConfirm(calls[i], confirmText); err != nil {
				return nil, fmt.Errorf("%s: call %d: %w", s, i, err)
			}
			callers[i].close()
		}
		opener.close()
		rows = append(rows, row)
		fmt.Printf("# memory %-10s idle session %6.2f KiB heap, %.2f goroutines, %.2f KiB stack; parked call %6.2f KiB heap, %.2f goroutines, %.2f KiB stack\n",
			s, (h1-h0)/nf/1024, (g1-g0)/nf, (st1-st0)/nf/1024, (h2-h1)/nf/1024, (g2-g1)/nf, (st2-st1)/nf/1024)
	}
	return rows, nil
}

// reportLegacyMemory prints the memory table.
func reportLegacyMemory(rows []memRow, n int) {
	if len(rows) == 0 {
		return
	}
	fmt.Printf("\n## (f) session-memory (2025-11-25): live memory in the server process, %d sessions and %d parked calls per server\n\n", n, n)
	fmt.Printf("Baton's options changed from the defaults: %s.\n\n", legacyOptionsChanged)
	fmt.Println("| server | idle session: heap | goroutines | stack | waiting call, in its handler (its connection included): heap | goroutines | stack | heap + stack | waiting call, as its record (Baton, past HoldFor): heap | goroutines | stack |")
	fmt.Println("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, r := range rows {
		rec := "| – | – | –"
		if r.records {
			rec = fmt.Sprintf("| %.2f KiB | %.2f | %.2f KiB", r.recordHeap/1024, r.recordGoroutines, r.recordStack/1024)
		}
		fmt.Printf("| %s | %.2f KiB | %.2f | %.2f KiB | %.2f KiB | %.2f | %.2f KiB | %.2f KiB %s |\n", legacyLabel(r.server),
			r.sessionHeap/1024, r.sessionGoroutines, r.sessionStack/1024, r.parkedHeap/1024, r.parkedGoroutines, r.parkedStack/1024, (r.parkedHeap+r.parkedStack)/1024, rec)
	}
}
