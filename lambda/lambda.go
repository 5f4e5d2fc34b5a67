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

// Trigger names the kind of event a function receives.
type Trigger string

const (
	// TriggerFunctionURL is a Lambda function URL in the BUFFERED invoke
	// mode (events.LambdaFunctionURLRequest).
	TriggerFunctionURL Trigger = "url"
	// TriggerHTTPAPI is an API Gateway HTTP API route with payload format
	// 2.0 (events.APIGatewayV2HTTPRequest).
	TriggerHTTPAPI Trigger = "httpapi"
)

// ParseTrigger returns the Trigger named s: "url" or "httpapi".
func ParseTrigger(s string) (Trigger, error) {
	switch t := Trigger(s); t {
	case TriggerFunctionURL, TriggerHTTPAPI:
		return t, nil
	}
	return "", fmt.Errorf("lambda: unknown trigger %q: use %q (function URL) or %q (API Gateway HTTP API)", s, TriggerFunctionURL, TriggerHTTPAPI)
}

type functionURLKey struct{}
type httpAPIKey struct{}

// FunctionURLRequest returns the function URL event a request came from,
// when it was served by FunctionURL. Handlers may read the IAM authorizer
// or the request ID from it.
func FunctionURLRequest(ctx context.Context) (*events.LambdaFunctionURLRequest, bool) {
	ev, ok := ctx.Value(functionURLKey{}).(*events.LambdaFunctionURLRequest)
	return ev, ok
}

// HTTPAPIRequest returns the API Gateway HTTP API event a request came
// from, when it was served by HTTPAPI. Handlers may read the JWT or Lambda
// authorizer's claims, the stage or the request ID from it.
func HTTPAPIRequest(ctx context.Context) (*events.APIGatewayV2HTTPRequest, bool) {
	ev, ok := ctx.Value(httpAPIKey{}).(*events.APIGatewayV2HTTPRequest)
	return ev, ok
}

// FunctionURL adapts h to a Lambda function URL (BUFFERED invoke mode).
// The returned function is a Lambda handler: pass it to the aws-lambda-go
// runtime, or call it directly. It never returns an error; malformed
// events are answered with 400.
func FunctionURL(h http.Handler) func(context.Context, events.LambdaFunctionURLRequest) (events.LambdaFunctionURLResponse, error) {
	return func(ctx context.Context, ev events.LambdaFunctionURLRequest) (events.LambdaFunctionURLResponse, error) {
		rc := ev.RequestContext
		in := inbound{
			method:   rc.HTTP.Method,
			rawPath:  ev.RawPath,
			rawQuery: ev.RawQueryString,
			domain:   rc.DomainName,
			sourceIP: rc.HTTP.SourceIP,
			protocol: rc.HTTP.Protocol,
			headers:  ev.Headers,
			cookies:  ev.Cookies,
			body:     ev.Body,
			base64:   ev.IsBase64Encoded,
		}
		out := serve(context.WithValue(ctx, functionURLKey{}, &ev), h, &in)
		return events.LambdaFunctionURLResponse{
			StatusCode:      out.status,
			Headers:         out.headers,
			Cookies:         out.cookies,
			Body:            out.body,
			IsBase64Encoded: out.base64,
		}, nil
	}
}

// HTTPAPI adapts h to an API Gateway HTTP API integration with payload
// format 2.0. The raw path is passed on unchanged (on a named stage it
// begins with the stage). The returned function is a Lambda handler: pass
// it to the aws-lambda-go runtime, or call it directly. It never returns an
// error; malformed events are answered with 400.
func HTTPAPI(h http.Handler) func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
	return func(ctx context.Context, ev events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
		rc := ev.RequestContext
		in := inbound{
			method:   rc.HTTP.Method,
			rawPath:  ev.RawPath,
			rawQuery: ev.RawQueryString,
			domain:   rc.DomainName,
			sourceIP: rc.HTTP.SourceIP,
			protocol: rc.HTTP.Protocol,
			headers:  ev.Headers,
			cookies:  ev.Cookies,
			body:     ev.Body,
			base64:   ev.IsBase64Encoded,
		}
		out := serve(context.WithValue(ctx, httpAPIKey{}, &ev), h, &in)
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
// working on the raw payload: unlike the typed functions of FunctionURL and
// HTTPAPI given to the runtime, a payload that is not a JSON event of the
// expected shape is answered with a 400 response rather than a Lambda
// error. It fails only for an unknown trigger.
func NewHandler(h http.Handler, t Trigger) (awslambda.Handler, error) {
	switch t {
	case TriggerFunctionURL:
		return payloadHandler[events.LambdaFunctionURLRequest, events.LambdaFunctionURLResponse]{
			serve: FunctionURL(h),
			bad: func(out outbound) events.LambdaFunctionURLResponse {
				return events.LambdaFunctionURLResponse{StatusCode: out.status, Headers: out.headers, Body: out.body}
			},
		}, nil
	case TriggerHTTPAPI:
		return payloadHandler[events.APIGatewayV2HTTPRequest, events.APIGatewayV2HTTPResponse]{
			serve: HTTPAPI(h),
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
