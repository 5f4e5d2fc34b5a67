package main

import (
	"net/http"

	"github.com/labstack/echo/v4"
)

// mountMCP registers h, the MCP endpoint, on e at path: POST for every
// request, GET and DELETE for 2025-11-25 sessions (the server answers them
// 405 when it serves no legacy sessions). A *server.Server is a plain
// http.Handler, so echo's own WrapHandler is the whole adapter; net/http
// middleware such as auth.ResourceServer.Protect becomes echo middleware
// with echo.WrapMiddleware, which passes the request's context on, so the
// principal it binds reaches the server. Other paths and methods are
// echo's to answer (404, 405).
func mountMCP(e *echo.Echo, path string, h http.Handler, m ...echo.MiddlewareFunc) {
	eh := echo.WrapHandler(h)
	for _, method := range []string{http.MethodPost, http.MethodGet, http.MethodDelete} {
		e.Add(method, path, eh, m...)
	}
}
