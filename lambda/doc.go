// Package lambda serves a Baton server (any http.Handler, typically a
// *server.Server) as an AWS Lambda function, behind a Lambda function URL
// or behind an API Gateway HTTP API with payload format 2.0.
//
// The 2026-07-28 protocol is stateless and a Multi Round-Trip Request keeps
// its progress in the sealed requestState the client echoes, so a function
// needs no session affinity: any instance that holds the same state key
// (server.Options.StateKeys) finishes a flow another instance began, cold
// or warm. Give every instance the same key; without one each cold start
// makes a random key and flows break between instances.
//
// Each adapter is explicit about the event it accepts:
//
//	lambda.FunctionURL(srv) // events.LambdaFunctionURLRequest → events.LambdaFunctionURLResponse
//	lambda.HTTPAPI(srv)     // events.APIGatewayV2HTTPRequest → events.APIGatewayV2HTTPResponse
//
// and Start runs the Lambda runtime loop for the Trigger you name. The
// request handed to the http.Handler carries the method, the raw path and
// query string, the headers (the cookies list joined into a Cookie header),
// the decoded body, the source IP as RemoteAddr ("IP:0"), the event's domain name as
// Host, and the invocation's context (its deadline, and the event itself:
// see FunctionURLRequest and HTTPAPIRequest). The response's status,
// headers (several values joined with commas, Set-Cookie moved to the
// cookies list) and body come back; a body that is not UTF-8 text is sent
// base64-encoded.
//
// # Buffering
//
// Lambda buffers the whole response: headers and body are sent when the
// handler returns. Progress and log notifications that Baton streams as
// Server-Sent Events therefore reach the client together with the final
// response, in order, rather than as they happen. Multi Round-Trip Requests
// are unaffected (each round is one complete response), and
// subscriptions/listen, a long-lived stream, is not suited to Lambda.
//
// # Host checks
//
// Baton's DNS-rebinding protection refuses a non-loopback Host only when
// the server listens on a loopback address. In Lambda there is no listener,
// so with no AllowedHosts any Host is accepted. Set
// server.Options.AllowedHosts to the function's domain (for example
// "abcdefgh.lambda-url.eu-west-1.on.aws", or the API's custom domain):
// requests for any other Host are then refused with 403.
//
// # Errors
//
// The adapters never return a Lambda error and never panic. An event that
// cannot be turned into an HTTP request (no method, a path that is not
// absolute, a body that is not valid base64, a header that is not a valid
// field, an undecodable payload given to NewHandler) is answered with 400
// and a JSON-RPC error body. A handler that panics is answered with 500.
//
// Function URLs in the RESPONSE_STREAM invoke mode send a different
// response; this package serves the default BUFFERED mode only.
//
// Import direction: this package imports net/http, Baton's jsonrpc (for
// its error bodies) and aws-lambda-go; no other Baton package imports it,
// so aws-lambda-go stays out of programs that do not serve from Lambda.
package lambda
