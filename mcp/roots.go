package mcp

import (
	"errors"
	"fmt"
	"strings"

	"github.com/baton-mcp/baton/internal/clip"
	"github.com/baton-mcp/baton/internal/strictjson"
)

// Root is a root the client exposes: a directory or file the server may
// work within.
type Root struct {
	// URI is the root's location, a file:// URI ("uri").
	URI string `json:"uri"`
	// Name is a name for people ("name"); omitted when empty.
	Name string `json:"name,omitempty"`
}

// ListRootsResult is the client's answer to roots/list.
type ListRootsResult struct {
	// Roots are the client's roots ("roots"; required, possibly empty).
	Roots []Root `json:"roots"`
}

// ParseListRootsResult reads and checks a roots answer: an object with a
// roots array whose URIs are file:// URIs.
func ParseListRootsResult(data []byte) (*ListRootsResult, error) {
	if err := requireObject(data); err != nil {
		return nil, fmt.Errorf("roots result: %w", err)
	}
	var w struct {
		Roots *[]Root `json:"roots"`
	}
	if err := strictjson.Unmarshal(data, &w); err != nil {
		return nil, fmt.Errorf("roots result: %w", err)
	}
	if w.Roots == nil {
		return nil, errors.New(`roots result: missing "roots"`)
	}
	for i, r := range *w.Roots {
		if !strings.HasPrefix(r.URI, "file://") {
			return nil, fmt.Errorf("roots result: root %d: uri %s is not a file:// URI", i, clip.Quote(r.URI))
		}
	}
	return &ListRootsResult{Roots: *w.Roots}, nil
}
