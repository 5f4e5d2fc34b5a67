package round

import "github.com/baton-mcp/baton/server/internal/seal"

// nextFlow is the flow the state this round seals carries: the flow of the
// state it resumed (a zero id on the first round, which Seal draws), with
// this round's span as the previous one, and as the first on round 1.
func (r *Round) nextFlow() seal.Flow {
	var f seal.Flow
	if r.state != nil {
		f = r.state.Flow
	} else {
		f.First = r.opts.Span
	}
	f.Prev = r.opts.Span
	return f
}
