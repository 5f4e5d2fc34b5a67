package legacy_test

import (
	"testing"

	"github.com/baton-mcp/baton/legacy"
	"github.com/baton-mcp/baton/storetest"
)

func TestMemoryStore(t *testing.T) {
	storetest.Sessions(t, func(t *testing.T) legacy.Store { return legacy.NewMemoryStore(nil) })
}
