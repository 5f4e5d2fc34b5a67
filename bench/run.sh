#!/bin/sh
# Runs the harness with the figures' settings: every table of bench/README.md
# ("Latest figures", and the rest of the run in notes/latest-details.md) from one run of one process: echo and confirm over all
# five servers and the authorization and telemetry variants of Baton
# (baton-auth, baton-otel), the rounds-growth scenario, the carried
# answers (one retry carrying 1 and 16 answers, over HTTP, Baton and its floor), the 2025-11-25
# scenarios (session-call and session-elicit over Baton's legacy endpoint,
# the go-sdk's and mcp-go's stateful servers and a floor, 3 repetitions,
# about 3 minutes; session-memory), the hostile bodies, then the fleet
# (fleet.sh). The
# server process is pinned to CPU 0 and the load generator to CPU 1
# (taskset; -pin=false to share the CPUs). About 20 minutes on 2 CPUs.
# With -p, it instead profiles Baton's server process (cpu-echo.pprof,
# cpu-confirm.pprof, and the floor's beside them) and prints the top
# entries. Extra arguments go to the harness (`go run . -h`).
#   ./run.sh                    # every table
#   ./run.sh -p                 # profiles
#   ./run.sh -scenarios echo    # any flag of the harness
set -eu
cd "$(dirname "$0")"
go build -o /tmp/baton-bench .
if [ "${1:-}" = "-p" ]; then
	shift
	/tmp/baton-bench -servers baton,floor -scenarios echo,confirm -duration 5s -reps 3 -cpuprofile cpu -profile-servers baton,floor "$@"
	for s in echo confirm; do
		echo "== $s: cumulative"; go tool pprof -top -cum cpu-$s.pprof 2>/dev/null | sed -n '1,22p'
		echo "== $s: flat"; go tool pprof -top cpu-$s.pprof 2>/dev/null | sed -n '6,21p'
	done
	exit 0
fi
status=0
/tmp/baton-bench -servers baton,baton-echo,gosdk,mcpgo,floor,baton-auth,baton-otel -scenarios echo,confirm,rounds,carried,session-call,session-elicit,session-memory,hostile -rounds 1,2,4,8,16 -carried 1,16 -duration 5s -warmup 2s -reps 5 -session-reps 3 -concurrency 32 "$@" || status=$?
# The fleet (three instances behind nginx with Redis, beside one): fleet.sh.
./fleet.sh || status=$?
exit $status
