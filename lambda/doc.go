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
// # Choosing the mode
//
// Each Trigger, given to Start or NewHandler, is explicit about the event
// it accepts and the response it gives. It must match how the function is
// configured in AWS: a function URL's InvokeMode, or an HTTP API
// integration.
//
//	Trigger                   configure in AWS
//	TriggerFunctionURLStream  function URL, InvokeMode RESPONSE_STREAM
//	TriggerFunctionURL        function URL, InvokeMode BUFFERED (the default)
//	TriggerHTTPAPI            HTTP API route, Lambda integration, payload format 2.0
//
// RESPONSE_STREAM sends the status and headers, then each part of the body
// as the handler flushes it: progress and log notifications, which Baton
// streams as Server-Sent Events, reach the client as they happen, and the
// final response follows. The response may be up to 200 MB (the first 6 MB
// at full speed, the rest at up to 2 MB/s). Streaming needs an OS-only
// runtime (provided.al2023 or provided.al2), whose Runtime API the
// aws-lambda-go runtime streams through; the Lambda console shows streamed
// responses buffered.
//
// BUFFERED, and every HTTP API, sends the response once the handler has
// returned, up to 6 MB: notifications reach the client together with the
// final response, in order, rather than as they happen.
//
// Multi Round-Trip Requests work in every mode (each round is one complete
// response). subscriptions/listen, a stream that lasts as long as the
// client listens, is suited to neither: a buffered function answers only
// when the invocation ends, and a streaming one holds an invocation (and
// its bill) for as long as the stream is open, cut off at the function's
// timeout.
//
// # The request
//
// aws-lambda-go's lambdaurl package builds the request handed to the
// http.Handler (an HTTP API event is mapped onto the function URL event,
// which has the same fields, and served the same way): the method, the URL
// (https://, the event's domain name as Host, the raw path and query
// string), the headers, and the body. This package adds what lambdaurl
// leaves out: the cookies list joined into the Cookie header, a base64 body
// decoded before the handler runs (so its length is known), RemoteAddr as
// "IP:0" and RequestURI set, as net/http gives them. The request carries
// the invocation's context: its deadline, and the event as the runtime
// delivered it (see FunctionURLRequest and HTTPAPIRequest).
//
// The response's status and headers (several values joined with commas,
// Set-Cookie moved to the cookies list) go first; the body is kept until
// the handler flushes it (http.Flusher, http.ResponseController) or has
// written 32 KiB, so a handler that does not flush has its response sent
// whole when it returns. A missing Content-Type is sniffed from the body.
// In the buffered modes a body that is not UTF-8 text is sent
// base64-encoded.
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
// absolute, a method or URL net/http refuses, a body that is not valid
// base64, a header that is not a valid field, a payload of the wrong shape
// given to NewHandler) is answered with 400 and a JSON-RPC error body, and
// the handler does not run. A handler that panics before its response was
// flushed is answered with 500. In the streaming mode a handler that panics
// after flushing cannot change the status any more: the stream ends there,
// with an error the runtime reports as the invocation's failure, rather
// than as a whole response.
//
// Import direction: this package imports net/http, Baton's mcp and
// internal/rpcwire (for its error bodies) and aws-lambda-go; no other
// Baton package imports it,
// so aws-lambda-go stays out of programs that do not serve from Lambda.
package lambda
