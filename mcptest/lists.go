package mcptest

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/baton-mcp/baton/internal/strictjson"
	"github.com/baton-mcp/baton/mcp"
)

// maxPages bounds the pages a List call follows, so a server whose cursor
// never ends fails the test instead of hanging it.
const maxPages = 1000

// DiscoverResult is the result of server/discover.
type DiscoverResult struct {
	// SupportedVersions are the protocol versions the server serves.
	SupportedVersions []string
	// Capabilities are the server's capabilities, by name, as sent.
	Capabilities map[string]json.RawMessage
	// Instructions are the server's instructions, if sent.
	Instructions string
	// ServerInfo is _meta serverInfo, or the zero value when not sent.
	ServerInfo mcp.Implementation
	// TTLMs is the caching hint's time to live in milliseconds, or nil.
	TTLMs *int64
	// CacheScope is the caching hint's scope ("public", "private"), or "".
	CacheScope string
	// Meta is the result's _meta, by key.
	Meta map[string]json.RawMessage
}

// Tool is a tool as tools/list describes it.
type Tool struct {
	// Name is the tool's name, as tools/call takes it.
	Name string `json:"name"`
	// Title is the display name, if sent.
	Title string `json:"title"`
	// Description says what the tool does, if sent.
	Description string `json:"description"`
	// InputSchema is the JSON Schema of the arguments, as sent.
	InputSchema json.RawMessage `json:"inputSchema"`
	// OutputSchema is the JSON Schema of structuredContent, or nil.
	OutputSchema json.RawMessage `json:"outputSchema"`
	// Annotations are the behaviour hints as sent, or nil.
	Annotations json.RawMessage `json:"annotations"`
	// Meta is the tool's _meta, by key.
	Meta map[string]json.RawMessage `json:"_meta"`
}

// Prompt is a prompt as prompts/list describes it.
type Prompt struct {
	// Name is the prompt's name, as prompts/get takes it.
	Name string `json:"name"`
	// Title is the display name, if sent.
	Title string `json:"title"`
	// Description says what the prompt is for, if sent.
	Description string `json:"description"`
	// Arguments are the arguments the prompt takes.
	Arguments []PromptArgument `json:"arguments"`
	// Meta is the prompt's _meta, by key.
	Meta map[string]json.RawMessage `json:"_meta"`
}

// PromptArgument is one argument a prompt takes.
type PromptArgument struct {
	// Name is the argument's name.
	Name string `json:"name"`
	// Title is the display name, if sent.
	Title string `json:"title"`
	// Description says what the argument is, if sent.
	Description string `json:"description"`
	// Required reports that prompts/get needs the argument.
	Required bool `json:"required"`
}

// Resource is a resource as resources/list describes it.
type Resource struct {
	// URI is the resource's URI, as resources/read takes it.
	URI string `json:"uri"`
	// Name is the resource's name.
	Name string `json:"name"`
	// Title is the display name, if sent.
	Title string `json:"title"`
	// Description says what the resource is, if sent.
	Description string `json:"description"`
	// MimeType is the contents' media type, if sent.
	MimeType string `json:"mimeType"`
	// Size is the size in bytes, if sent.
	Size *int64 `json:"size"`
	// Meta is the resource's _meta, by key.
	Meta map[string]json.RawMessage `json:"_meta"`
}

// ResourceTemplate is a resource template as resources/templates/list
// describes it.
type ResourceTemplate struct {
	// URITemplate is the RFC 6570 template of the resources' URIs.
	URITemplate string `json:"uriTemplate"`
	// Name is the template's name.
	Name string `json:"name"`
	// Title is the display name, if sent.
	Title string `json:"title"`
	// Description says what the resources are, if sent.
	Description string `json:"description"`
	// MimeType is the contents' media type, if sent.
	MimeType string `json:"mimeType"`
	// Meta is the template's _meta, by key.
	Meta map[string]json.RawMessage `json:"_meta"`
}

// Discover sends server/discover.
func (c *Client) Discover(ctx context.Context, opts ...CallOption) (*DiscoverResult, error) {
	res, err := c.complete(ctx, "server/discover", nil, opts)
	if err != nil {
		return nil, err
	}
	var r struct {
		SupportedVersions []string                   `json:"supportedVersions"`
		Capabilities      map[string]json.RawMessage `json:"capabilities"`
		Instructions      string                     `json:"instructions"`
		TTLMs             *int64                     `json:"ttlMs"`
		CacheScope        string                     `json:"cacheScope"`
		Meta              map[string]json.RawMessage `json:"_meta"`
	}
	if err := strictjson.Unmarshal(res, &r); err != nil || r.SupportedVersions == nil {
		return nil, fmt.Errorf("server/discover: %w", protocolError("the result needs supportedVersions: %v", err))
	}
	out := &DiscoverResult{
		SupportedVersions: r.SupportedVersions, Capabilities: r.Capabilities, Instructions: r.Instructions,
		TTLMs: r.TTLMs, CacheScope: r.CacheScope, Meta: r.Meta,
	}
	if raw, ok := r.Meta[metaServerInfo]; ok {
		if err := strictjson.Unmarshal(raw, &out.ServerInfo); err != nil {
			return nil, fmt.Errorf("server/discover: %w", protocolError("unreadable serverInfo: %v", err))
		}
	}
	return out, nil
}

// ListTools returns every tool, following nextCursor across pages.
func (c *Client) ListTools(ctx context.Context, opts ...CallOption) ([]Tool, error) {
	return listAll[Tool](ctx, c, "tools/list", "tools", opts)
}

// ListPrompts returns every prompt, following nextCursor across pages.
func (c *Client) ListPrompts(ctx context.Context, opts ...CallOption) ([]Prompt, error) {
	return listAll[Prompt](ctx, c, "prompts/list", "prompts", opts)
}

// ListResources returns every resource, following nextCursor across pages.
func (c *Client) ListResources(ctx context.Context, opts ...CallOption) ([]Resource, error) {
	return listAll[Resource](ctx, c, "resources/list", "resources", opts)
}

// ListResourceTemplates returns every resource template, following
// nextCursor across pages.
func (c *Client) ListResourceTemplates(ctx context.Context, opts ...CallOption) ([]ResourceTemplate, error) {
	return listAll[ResourceTemplate](ctx, c, "resources/templates/list", "resourceTemplates", opts)
}

func listAll[T any](ctx context.Context, c *Client, method, member string, opts []CallOption) ([]T, error) {
	out := []T{}
	var cursor *string
	seen := map[string]bool{}
	for page := 0; page < maxPages; page++ {
		var params map[string]any
		if cursor != nil {
			params = map[string]any{"cursor": *cursor}
		}
		res, err := c.complete(ctx, method, params, opts)
		if err != nil {
			return nil, err
		}
		var r map[string]json.RawMessage
		if err := strictjson.Unmarshal(res, &r); err != nil {
			return nil, fmt.Errorf("%s: %w", method, protocolError("unreadable result: %v", err))
		}
		var items []T
		if raw, ok := r[member]; !ok || strictjson.Unmarshal(raw, &items) != nil || items == nil {
			return nil, fmt.Errorf("%s: %w", method, protocolError("the result needs a %s array", member))
		}
		out = append(out, items...)
		raw, ok := r["nextCursor"]
		if !ok {
			return out, nil
		}
		var next string
		if err := strictjson.Unmarshal(raw, &next); err != nil {
			return nil, fmt.Errorf("%s: %w", method, protocolError("nextCursor is not a string"))
		}
		if next == "" {
			return out, nil
		}
		if seen[next] {
			return nil, fmt.Errorf("%s: %w", method, protocolError("nextCursor %q repeats", next))
		}
		seen[next] = true
		cursor = &next
	}
	return nil, fmt.Errorf("%s: %w", method, protocolError("more than %d pages", maxPages))
}

// complete sends a request that must answer with a complete result (not
// input_required) and returns that result.
func (c *Client) complete(ctx context.Context, method string, params any, opts []CallOption) (json.RawMessage, error) {
	resp, err := c.Do(ctx, method, params, opts...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", method, err)
	}
	if err := resp.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", method, err)
	}
	if rt := resp.ResultType(); rt != "complete" && !c.legacy {
		return nil, fmt.Errorf("%s: %w", method, protocolError("resultType is %q; %s must complete", rt, method))
	}
	return resp.Result, nil
}
