package legacy_test

import (
	"testing"

	"github.com/baton-mcp/baton/legacy"
	"github.com/baton-mcp/baton/storetest"
)

func TestMemoryEventStore(t *testing.T) {
	storetest.Events(t, func(t *testing.T) legacy.EventStore { return legacy.NewMemoryEventStore(0) })
}
