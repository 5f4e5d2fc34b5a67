package legacy_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"runtime"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/baton-mcp/baton/server"
)

// BenchmarkParkedElicitations measures what a blocking call costs while it
// waits for its client: 10,000 tools/call requests of a tool that calls
// CreateFormElicitation, driven in process over one stdio legacy session,
// all parked at once. It reports the live heap and goroutine stack per
// parked call (after a GC, against the idle session), then answers every
// elicitation and checks that every call completes. Run it once:
//
//	go test -run '^$' -bench BenchmarkParkedElicitations -benchtime=1x ./legacy/
func BenchmarkParkedElicitations(b *testing.B) {
	const n = 10000
	for i := 0; i < b.N; i++ {
		heap, stack, gs := parkElicitations(b, n)
		b.ReportMetric(heap/n, "heap-B/parked")
		b.ReportMetric(stack/n, "stack-B/parked")
		b.ReportMetric(gs/n, "goroutines/parked")
	}
}

// parkElicitations parks n blocking elicitations and returns the heap,
// stack and goroutine growth while they wait.
func parkElicitations(b *testing.B, n int) (heap, stack, goroutines float64) {
	b.Helper()
	const limit = 60 * time.Second // a guard, never a pause
	srv := newServer(b)
	schema := nameSchema(b)
	addTool(b, srv, "park", func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
		r, err := req.CreateFormElicitation(ctx, "Name?", schema)
		if err != nil {
			return nil, err
		}
		if r.Action != "accept" {
			return server.ErrorResult("not accepted"), nil
		}
		return server.TextResult("ok"), nil
	})
	defer srv.Close()
	settle(b, srv) // park's announcement would count as an unexpected message

	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	served := make(chan error, 1)
	go func() {
		served <- srv.ServeStdio(context.Background(), inR, outW)
		_ = outW.Close()
	}()

	// The reader keeps only the elicitation ids (preallocated) and counts.
	ids := make([]json.RawMessage, 0, n)
	var results, failures atomic.Int64
	initialized, parked, finished := make(chan struct{}), make(chan struct{}), make(chan struct{})
	go func() {
		br := bufio.NewReaderSize(outR, 64<<10)
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		for {
			line, err := br.ReadSlice('\n')
			if err != nil {
				return
			}
			m.ID, m.Method, m.Result, m.Error = nil, "", nil, nil
			if json.Unmarshal(line, &m) != nil {
				failures.Add(1)
				continue
			}
			switch {
			case m.Method == "elicitation/create":
				ids = append(ids, append(json.RawMessage(nil), m.ID...))
				if len(ids) == n {
					close(parked)
				}
			case string(m.ID) == `"init"`:
				close(initialized)
			case m.Result != nil && !containsIsError(m.Result):
				if results.Add(1) == int64(n) {
					close(finished)
				}
			default:
				failures.Add(1)
			}
		}
	}()
	wait := func(ch <-chan struct{}, what string) {
		select {
		case <-ch:
		case <-time.After(limit):
			b.Fatalf("timed out waiting for %s (failures %d)", what, failures.Load())
		}
	}

	w := bufio.NewWriterSize(inW, 64<<10)
	write := func(line []byte) {
		if _, err := w.Write(line); err != nil {
			b.Fatal(err)
		}
	}
	write([]byte(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},"clientInfo":{"name":"bench","version":"1"}}}` + "\n"))
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	wait(initialized, "initialize")

	var before, during runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	g0 := runtime.NumGoroutine()

	b.ResetTimer()
	line := make([]byte, 0, 128)
	for i := range n {
		line = append(line[:0], `{"jsonrpc":"2.0","id":`...)
		line = strconv.AppendInt(line, int64(i), 10)
		line = append(line, `,"method":"tools/call","params":{"name":"park"}}`+"\n"...)
		write(line)
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	wait(parked, "every elicitation/create")
	b.StopTimer()

	runtime.GC()
	runtime.ReadMemStats(&during)
	g1 := runtime.NumGoroutine()
	heap = float64(int64(during.HeapAlloc) - int64(before.HeapAlloc))
	stack = float64(int64(during.StackInuse) - int64(before.StackInuse))
	goroutines = float64(g1 - g0)

	for _, id := range ids {
		line = append(line[:0], `{"jsonrpc":"2.0","id":`...)
		line = append(line, id...)
		line = append(line, `,"result":{"action":"accept","content":{"name":"x"}}}`+"\n"...)
		write(line)
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	wait(finished, "every tools/call result")
	if f := failures.Load(); f != 0 {
		b.Fatalf("%d unexpected or failed messages", f)
	}
	_ = inW.Close()
	select {
	case err := <-served:
		if err != nil {
			b.Fatalf("ServeStdio: %v", err)
		}
	case <-time.After(limit):
		b.Fatal("ServeStdio did not return")
	}
	return heap, stack, goroutines
}

func containsIsError(raw json.RawMessage) bool {
	var r struct {
		IsError bool `json:"isError"`
	}
	return json.Unmarshal(raw, &r) == nil && r.IsError
}
