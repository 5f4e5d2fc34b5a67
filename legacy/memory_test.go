package legacy_test

import (
	"testing"

	"github.com/baton-mcp/baton/internal/sessionstoretest"
	"github.com/baton-mcp/baton/legacy"
)

func TestMemoryStore(t *testing.T) {
	sessionstoretest.Run(t, func(t *testing.T) legacy.Store { return legacy.NewMemoryStore() })
}
