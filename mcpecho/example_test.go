package mcpecho_test

import (
	"context"
	"fmt"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/baton-mcp/baton/mcpecho"
	"github.com/baton-mcp/baton/mcptest"
	"github.com/baton-mcp/baton/server"
)

// Mounting the MCP endpoint at a path of an existing echo application.
func ExampleMount() {
	srv, err := server.New(server.Implementation{Name: "example", Version: "1.0.0"}, nil)
	if err != nil {
		panic(err)
	}
	defer srv.Close()
	_ = srv.AddTool(server.Tool{Name: "ping_me"}, func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
		return server.TextResult("pong"), nil
	})
	e := echo.New()
	e.GET("/healthz", func(c echo.Context) error { return c.String(http.StatusOK, "ok") })
	mcpecho.Mount(e, "/mcp", srv)

	c, err := mcptest.New(mcptest.HandlerAt("http://localhost/mcp", e), nil)
	if err != nil {
		panic(err)
	}
	res, err := c.CallTool(context.Background(), "ping_me", nil)
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Text())
	// Output: pong
}
