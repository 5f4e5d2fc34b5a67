package legacy_test

import (
	"net/http"
)

// lateAnswer POSTs an answer to a server request whose call no longer
// waits for it: it is refused with 400, and goes nowhere.
func (c *wireClient) lateAnswer(req message, result any) {
	c.tb.Helper()
	s := c.do(http.MethodPost, mustJSON(c.tb, map[string]any{"jsonrpc": "2.0", "id": req.ID, "result": result}), nil)
	if s.status != http.StatusBadRequest {
		c.tb.Errorf("late answer to %s: HTTP %d, want 400", req.ID, s.status)
	}
	s.end()
}
