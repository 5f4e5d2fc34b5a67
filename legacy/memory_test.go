package legacy_test

import (
	"testing"

	"github.com/baton-mcp/baton/legacy"
	"github.com/baton-mcp/baton/legacy/legacytest"
)

func TestMemoryStore(t *testing.T) {
	legacytest.Run(t, func(t *testing.T) legacy.Store { return legacy.NewMemoryStore(nil) })
}
