#!/bin/sh
# Runs the load harness with the figures' settings and, with -p, also
# writes CPU profiles of Baton (cpu-echo.pprof, cpu-confirm.pprof) and
# prints their top entries. Extra arguments go to the harness.
#   ./run.sh                 # figures: 5s x 3 interleaved reps, 32 workers
#   ./run.sh -p              # profile run of Baton alone
#   ./run.sh -duration 10s   # any flag of `go run . -h`
set -eu
cd "$(dirname "$0")"
go build -o /tmp/baton-bench .
if [ "${1:-}" = "-p" ]; then
	shift
	/tmp/baton-bench -servers baton -duration 5s -concurrency 32 -cpuprofile cpu "$@"
	for s in echo confirm; do
		echo "== $s: cumulative"; go tool pprof -top -cum cpu-$s.pprof 2>/dev/null | sed -n '1,22p'
		echo "== $s: flat"; go tool pprof -top cpu-$s.pprof 2>/dev/null | sed -n '6,21p'
	done
	exit 0
fi
exec /tmp/baton-bench -duration 5s -concurrency 32 "$@"
