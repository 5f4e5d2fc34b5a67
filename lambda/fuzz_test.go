package lambda

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// FuzzPayload serves arbitrary payloads through every trigger's handler:
// none may panic; a buffered trigger never returns a Lambda error, and the
// streaming one only for a payload that is not JSON (the runtime decodes
// it first); every 400 carries a JSON-RPC error. The seeds are the
// recorded events in testdata.
func FuzzPayload(f *testing.F) {
	for _, name := range []string{"function-url-round1.json", "function-url-upload.json", "httpapi-round1.json", "httpapi-upload.json", "rest-api-v1.json"} {
		f.Add(readFile(f, name))
	}
	f.Add([]byte(`{"rawPath":"x","requestContext":{"http":{"method":"GET"},"domainName":"a"}}`))
	f.Add([]byte(`{"rawPath":"/","cookies":["a\u0000"],"requestContext":{"http":{"method":"GET"},"domainName":"a"}}`))
	srv := newServer(f, urlDomain, apiDomain)
	handlers := make(map[Trigger]interface {
		Invoke(context.Context, []byte) ([]byte, error)
	})
	for _, k := range kinds {
		lh, err := NewHandler(srv, k.trigger)
		if err != nil {
			f.Fatal(err)
		}
		handlers[k.trigger] = lh
	}
	f.Fuzz(func(t *testing.T, payload []byte) {
		for _, k := range kinds {
			out, err := handlers[k.trigger].Invoke(context.Background(), payload)
			if err != nil {
				if k.streaming() && !json.Valid(payload) {
					continue
				}
				t.Fatalf("%s: Lambda error %v for %q", k.name, err, payload)
			}
			res := decodeResponse(t, k, out)
			if res.Status == http.StatusBadRequest && !strings.Contains(string(res.decoded(t)), `"error"`) {
				t.Fatalf("%s: 400 without a JSON-RPC error: %q", k.name, out)
			}
		}
	})
}
