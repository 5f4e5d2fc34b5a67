// Package mcpecho serves an MCP server from an echo application. The
// server itself is a plain http.Handler (a *server.Server, or one wrapped
// in net/http middleware such as auth.Verifier.Middleware); this package
// only registers it on echo's router:
//
//	e := echo.New()
//	mcpecho.Mount(e, "/mcp", srv)
//
// net/http middleware becomes echo middleware with echo.WrapMiddleware,
// which passes the request's context on, so a principal bound by
// auth.Verifier.Middleware reaches the server either way:
//
//	mcpecho.Mount(e, "/mcp", srv, echo.WrapMiddleware(verifier.Middleware))
package mcpecho

import (
	"net/http"

	"github.com/labstack/echo/v4"
)

// methods are the HTTP methods of the MCP endpoint, which Mount registers:
// POST for every request, GET and DELETE for 2025-11-25 sessions (the
// server answers them 405 when it serves no legacy sessions).
var methods = []string{http.MethodPost, http.MethodGet, http.MethodDelete}

// Mount registers h (usually a *server.Server) on e at path for POST, GET
// and DELETE. Middleware given here runs before h, for example
// authentication; other paths and methods are echo's to answer (404, 405).
func Mount(e *echo.Echo, path string, h http.Handler, m ...echo.MiddlewareFunc) {
	eh := func(c echo.Context) error {
		h.ServeHTTP(c.Response(), c.Request())
		return nil
	}
	for _, method := range methods {
		e.Add(method, path, eh, m...)
	}
}
