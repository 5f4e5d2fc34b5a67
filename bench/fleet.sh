#!/bin/sh
# The fleet's table (issue 23): a confirmed flow with the single-use ledger,
# a 2025-11-25 answer crossing instances and a task with one question, each
# on three instances behind nginx sharing a redis-server, beside one
# instance with memory stores (direct, and behind nginx): throughput, p50,
# p99, and the Redis round trips and commands per operation. It starts
# every process itself on loopback (redis-server on a Unix socket) and
# stops them; without nginx or redis-server it says how to get them and
# exits 0. About 2 minutes. Extra arguments go to the driver
# (`go run ./fleet -h`).
#   ./fleet.sh
#   ./fleet.sh -scenarios crossing -reps 3
set -eu
cd "$(dirname "$0")"
go build -o /tmp/baton-bench-fleet ./fleet
exec /tmp/baton-bench-fleet -duration 4s -warmup 1s -reps 2 -concurrency 16 "$@"
