package lambda

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/aws/aws-lambda-go/events"
	awslambda "github.com/aws/aws-lambda-go/lambda"
)

// Trigger names the kind of event a function receives, and for a function
// URL its invoke mode.
type Trigger string

const (
	// TriggerFunctionURL is a Lambda function URL in the BUFFERED invoke
	// mode (events.LambdaFunctionURLRequest → events.LambdaFunctionURLResponse).
	TriggerFunctionURL Trigger = "url"
	// TriggerFunctionURLStream is a Lambda function URL in the
	// RESPONSE_STREAM invoke mode (events.LambdaFunctionURLRequest →
	// events.LambdaFunctionURLStreamingResponse).
	TriggerFunctionURLStream Trigger = "url-stream"
	// TriggerHTTPAPI is an API Gateway HTTP API route with payload format
	// 2.0 (events.APIGatewayV2HTTPRequest → events.APIGatewayV2HTTPResponse).
	TriggerHTTPAPI Trigger = "httpapi"
)

// ParseTrigger returns the Trigger named s: "url", "url-stream" or
// "httpapi".
func ParseTrigger(s string) (Trigger, error) {
	switch t := Trigger(s); t {
	case TriggerFunctionURL, TriggerFunctionURLStream, TriggerHTTPAPI:
		return t, nil
	}
	return "", fmt.Errorf("lambda: unknown trigger %q: use %q (function URL, BUFFERED), %q (function URL, RESPONSE_STREAM) or %q (API Gateway HTTP API)",
		s, TriggerFunctionURL, TriggerFunctionURLStream, TriggerHTTPAPI)
}

type functionURLKey struct{}
type httpAPIKey struct{}

// FunctionURLRequest returns the function URL event a request came from,
// as the runtime delivered it, when it was served with
// TriggerFunctionURL or TriggerFunctionURLStream. Handlers may read the IAM authorizer or the request
// ID from it.
func FunctionURLRequest(ctx context.Context) (*events.LambdaFunctionURLRequest, bool) {
	ev, ok := ctx.Value(functionURLKey{}).(*events.LambdaFunctionURLRequest)
	return ev, ok
}

// HTTPAPIRequest returns the API Gateway HTTP API event a request came
// from, when it was served with TriggerHTTPAPI. Handlers may read the JWT or Lambda
// authorizer's claims, the stage or the request ID from it.
func HTTPAPIRequest(ctx context.Context) (*events.APIGatewayV2HTTPRequest, bool) {
	ev, ok := ctx.Value(httpAPIKey{}).(*events.APIGatewayV2HTTPRequest)
	return ev, ok
}

// functionURLStream adapts h to a Lambda function URL in the
// RESPONSE_STREAM invoke mode: what h writes and flushes reaches the client
// while h is still running. The returned function is a Lambda handler:
// pass it to the aws-lambda-go runtime on a provided.al2023 or
// provided.al2 function, or call it directly and read the response. It returns once h has sent the status
// and headers (by flushing, or by returning); the body is then written as
// the response is read, so the reader must read it to the end or close it.
// It never returns an error; malformed events are answered with 400.
func functionURLStream(h http.Handler) func(context.Context, *events.LambdaFunctionURLRequest) (*events.LambdaFunctionURLStreamingResponse, error) {
	a := newAdapter(h)
	return func(ctx context.Context, ev *events.LambdaFunctionURLRequest) (*events.LambdaFunctionURLStreamingResponse, error) {
		if ev == nil {
			ev = new(events.LambdaFunctionURLRequest)
		}
		return a.stream(context.WithValue(ctx, functionURLKey{}, ev), ev), nil
	}
}

// functionURL adapts h to a Lambda function URL in the BUFFERED invoke
// mode: the response reaches the client once h has returned. The returned
// function is a Lambda handler: pass it to the aws-lambda-go runtime, or
// call it directly. It never returns an error; malformed events are
// answered with 400.
func functionURL(h http.Handler) func(context.Context, events.LambdaFunctionURLRequest) (events.LambdaFunctionURLResponse, error) {
	a := newAdapter(h)
	return func(ctx context.Context, ev events.LambdaFunctionURLRequest) (events.LambdaFunctionURLResponse, error) {
		out := a.buffered(context.WithValue(ctx, functionURLKey{}, &ev), &ev)
		return events.LambdaFunctionURLResponse{
			StatusCode:      out.status,
			Headers:         out.headers,
			Cookies:         out.cookies,
			Body:            out.body,
			IsBase64Encoded: out.base64,
		}, nil
	}
}

// httpAPI adapts h to an API Gateway HTTP API integration with payload
// format 2.0; HTTP APIs buffer the response. The raw path is passed on
// unchanged (on a named stage it begins with the stage). The returned
// function is a Lambda handler: pass it to the aws-lambda-go runtime, or
// call it directly. It never returns an error; malformed events are
// answered with 400.
func httpAPI(h http.Handler) func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
	a := newAdapter(h)
	return func(ctx context.Context, ev events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
		// Payload format 2.0 is the function URL event's shape: lambdaurl
		// reads only these fields.
		rc := ev.RequestContext
		as := events.LambdaFunctionURLRequest{
			Version:        ev.Version,
			RawPath:        ev.RawPath,
			RawQueryString: ev.RawQueryString,
			Cookies:        ev.Cookies,
			Headers:        ev.Headers,
			RequestContext: events.LambdaFunctionURLRequestContext{
				AccountID:  rc.AccountID,
				RequestID:  rc.RequestID,
				APIID:      rc.APIID,
				DomainName: rc.DomainName,
				HTTP: events.LambdaFunctionURLRequestContextHTTPDescription{
					Method:    rc.HTTP.Method,
					Path:      rc.HTTP.Path,
					Protocol:  rc.HTTP.Protocol,
					SourceIP:  rc.HTTP.SourceIP,
					UserAgent: rc.HTTP.UserAgent,
				},
			},
			Body:            ev.Body,
			IsBase64Encoded: ev.IsBase64Encoded,
		}
		out := a.buffered(context.WithValue(ctx, httpAPIKey{}, &ev), &as)
		return events.APIGatewayV2HTTPResponse{
			StatusCode:      out.status,
			Headers:         out.headers,
			Cookies:         out.cookies,
			Body:            out.body,
			IsBase64Encoded: out.base64,
		}, nil
	}
}

// NewHandler returns h as an aws-lambda-go Handler for the trigger t,
// working on the raw payload: a payload that is JSON but not an event of
// the expected shape is answered with a 400 response rather than a Lambda
// error. For the buffered triggers (TriggerFunctionURL, TriggerHTTPAPI) so
// is a payload that is not JSON at all; for TriggerFunctionURLStream the
// runtime decodes the payload as JSON before the adapter sees it, so such
// a payload (which Lambda never delivers) is a runtime error. The Handler
// for TriggerFunctionURLStream streams when given to the runtime
// (awslambda.Start); its Invoke method returns the whole stream, prelude
// included. NewHandler fails only for an unknown trigger.
func NewHandler(h http.Handler, t Trigger) (awslambda.Handler, error) {
	switch t {
	case TriggerFunctionURL:
		return payloadHandler[events.LambdaFunctionURLRequest, events.LambdaFunctionURLResponse]{
			serve: functionURL(h),
			bad: func(out outbound) events.LambdaFunctionURLResponse {
				return events.LambdaFunctionURLResponse{StatusCode: out.status, Headers: out.headers, Body: out.body}
			},
		}, nil
	case TriggerFunctionURLStream:
		serve := functionURLStream(h)
		// A function returning an io.Reader is the runtime's only way to
		// stream, so this goes through its reflective handler.
		return awslambda.NewHandler(func(ctx context.Context, payload json.RawMessage) (*events.LambdaFunctionURLStreamingResponse, error) {
			ev := new(events.LambdaFunctionURLRequest)
			if err := json.Unmarshal(payload, ev); err != nil {
				return badRequest("the payload is not a JSON event of the expected kind: " + err.Error()).stream(), nil
			}
			return serve(ctx, ev)
		}), nil
	case TriggerHTTPAPI:
		return payloadHandler[events.APIGatewayV2HTTPRequest, events.APIGatewayV2HTTPResponse]{
			serve: httpAPI(h),
			bad: func(out outbound) events.APIGatewayV2HTTPResponse {
				return events.APIGatewayV2HTTPResponse{StatusCode: out.status, Headers: out.headers, Body: out.body}
			},
		}, nil
	}
	_, err := ParseTrigger(string(t))
	return nil, err
}

// Start runs the Lambda runtime loop, serving h for the trigger t through
// NewHandler. It does not return once the loop has started (outside Lambda
// the runtime logs that its environment is missing and exits); it returns
// an error only for an unknown trigger.
func Start(h http.Handler, t Trigger) error {
	lh, err := NewHandler(h, t)
	if err != nil {
		return err
	}
	awslambda.Start(lh)
	return nil
}

// payloadHandler decodes an event of type E, serves it and encodes the
// response of type R.
type payloadHandler[E, R any] struct {
	serve func(context.Context, E) (R, error)
	bad   func(outbound) R
}

// Invoke implements awslambda.Handler.
func (p payloadHandler[E, R]) Invoke(ctx context.Context, payload []byte) ([]byte, error) {
	var ev E
	var res R
	if err := json.Unmarshal(payload, &ev); err != nil {
		res = p.bad(badRequest("the payload is not a JSON event of the expected kind: " + err.Error()))
	} else {
		res, _ = p.serve(ctx, ev) // never fails
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(res); err != nil {
		return nil, fmt.Errorf("lambda: encode response: %w", err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte{'\n'}), nil
}
