package legacy_test

import (
	"testing"

	"github.com/baton-mcp/baton/legacy"
	"github.com/baton-mcp/baton/legacy/legacytest"
)

func TestMemoryEventStore(t *testing.T) {
	legacytest.RunEvents(t, func(t *testing.T) legacy.EventStore { return legacy.NewMemoryEventStore(0) })
}
