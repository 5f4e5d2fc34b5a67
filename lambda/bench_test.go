package lambda

import (
	"context"
	"io"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"
)

// invokeRound1 serves the recorded round-1 payload through lh, reading
// the whole response as the runtime would, and checks that the flow
// began.
func invokeRound1(b *testing.B, k kind, lh interface {
	Invoke(context.Context, []byte) ([]byte, error)
}, payload []byte) {
	out, err := lh.Invoke(context.Background(), payload)
	if err != nil {
		b.Fatal(err)
	}
	if res := decodeResponse(b, k, out); res.Status != 200 || !strings.Contains(res.Body, `"input_required"`) {
		b.Fatalf("%s: round 1 answered %s", k.name, out)
	}
}

// BenchmarkColdStart measures a new function instance from nothing to its
// first response, for each mode (function-url: BUFFERED; function-url-
// stream: RESPONSE_STREAM; http-api): the key ring derived from the shared
// secret, server.New, the greet tool registered (its form built), the
// adapter made, and round 1 of the flow served from the recorded event's
// bytes as the runtime would deliver them (decode, request, dispatch,
// sealing the requestState, and the response: encoded as JSON, or streamed
// as prelude and body and read to the end).
func BenchmarkColdStart(b *testing.B) {
	for _, k := range kinds {
		b.Run(k.name, func(b *testing.B) {
			payload := readFile(b, k.round1)
			b.ReportAllocs()
			for b.Loop() {
				srv, err := buildServer([]string{k.domain})
				if err != nil {
					b.Fatal(err)
				}
				lh, err := NewHandler(srv, k.trigger)
				if err != nil {
					b.Fatal(err)
				}
				invokeRound1(b, k, lh, payload)
			}
		})
	}
}

// BenchmarkWarmRequest serves the same first round on an instance that is
// already built, for comparison with BenchmarkColdStart.
func BenchmarkWarmRequest(b *testing.B) {
	for _, k := range kinds {
		b.Run(k.name, func(b *testing.B) {
			payload := readFile(b, k.round1)
			srv, err := buildServer([]string{k.domain})
			if err != nil {
				b.Fatal(err)
			}
			lh, err := NewHandler(srv, k.trigger)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				invokeRound1(b, k, lh, payload)
			}
		})
	}
}

// BenchmarkWarmTypedRequest serves the decoded round-1 event through the
// typed function URL adapters on a built instance: the adapter's own cost,
// without the runtime's JSON decoding and encoding.
func BenchmarkWarmTypedRequest(b *testing.B) {
	var ev events.LambdaFunctionURLRequest
	load(b, "function-url-round1.json", &ev)
	srv, err := buildServer([]string{urlDomain})
	if err != nil {
		b.Fatal(err)
	}
	b.Run("function-url", func(b *testing.B) {
		h := functionURL(srv)
		b.ReportAllocs()
		for b.Loop() {
			res, err := h(context.Background(), ev)
			if err != nil || res.StatusCode != 200 {
				b.Fatalf("%d %v", res.StatusCode, err)
			}
		}
	})
	b.Run("function-url-stream", func(b *testing.B) {
		h := functionURLStream(srv)
		b.ReportAllocs()
		for b.Loop() {
			res, err := h(context.Background(), &ev)
			if err != nil || res.StatusCode != 200 {
				b.Fatalf("%d %v", res.StatusCode, err)
			}
			if n, err := io.Copy(io.Discard, res); err != nil || n == 0 {
				b.Fatalf("read %d: %v", n, err)
			}
			_ = res.Close()
		}
	})
}
