package redisfleet

import "context"

// deadlineMs is ctx's deadline in Unix milliseconds, 0 for none: the
// scripts that write compare it with Redis's clock (past, in
// pastDeadline) and write nothing once it has passed.
func deadlineMs(ctx context.Context) int64 {
	if d, ok := ctx.Deadline(); ok {
		return d.UnixMilli()
	}
	return 0
}

// nowMs reads the Redis server's clock in a script, in milliseconds.
const nowMs = `local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
`

// pastDeadline defines past(ms) for a script: whether the caller's
// deadline ms (Unix ms, deadlineMs; 0 for none) has passed by Redis's
// clock. A script that writes begins with it, so that a request the
// caller gave up on (Redis stalled, a paused server runs the commands
// queued for it when it resumes) writes nothing.
const pastDeadline = `local function past(deadline)
  deadline = tonumber(deadline)
  if deadline <= 0 then
    return false
  end
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) > deadline
end
`
