package server

import "github.com/baton-mcp/baton/mcp"

// UserPrompt returns a prompt result of one user message holding text, the
// PromptResult counterpart of TextResult. Build the PromptResult by hand
// (package mcp has the blocks and roles) for several messages or other
// content.
func UserPrompt(text string) *PromptResult {
	return &PromptResult{Messages: []PromptMessage{{Role: mcp.RoleUser, Content: mcp.Text(text)}}}
}

// TextResource returns a resources/read result holding text as the
// contents of uri, of media type mimeType (omitted when empty), the
// ResourceResult counterpart of TextResult. Build the ResourceResult by
// hand (mcp.BlobContents, several contents) for anything else.
func TextResource(uri, mimeType, text string) *ResourceResult {
	return &ResourceResult{Contents: []mcp.ResourceContents{mcp.TextContents(uri, mimeType, text)}}
}
