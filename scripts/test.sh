#!/usr/bin/env bash
# The one test command: every module's tests, with the race detector,
# through gotestsum (pinned in internal/tools/go.mod), which ends with the
# list of skipped tests and why each skipped.
#
#   scripts/test.sh [GO TEST FLAGS...]     e.g. scripts/test.sh -run Fleet -count=1
#
# The modules: the library (.), the examples (examples/go.mod: what only
# they use, chromedp, prometheus, zitadel/oidc, the go-sdk, is no
# dependency of the library) and the benchmarks' harness (bench/go.mod;
# its tests only, no benchmark). The flags go to `go test` in each.
# Every module runs even when one fails; the exit status is non-zero if
# any did.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
TOOLS="$ROOT/internal/tools/go.mod"
MODULES=(. examples bench)

failed=()
for m in "${MODULES[@]}"; do
  echo "== tests: module $m"
  # examples/fleet runs its fault suite too: past the 10-minute default.
  if ! (cd "$ROOT/$m" && go tool -modfile="$TOOLS" gotestsum --format pkgname-and-test-fails -- -race -timeout 20m "$@" ./...); then
    failed+=("$m")
  fi
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "test.sh: tests failed in module(s): ${failed[*]}" >&2
  exit 1
fi
