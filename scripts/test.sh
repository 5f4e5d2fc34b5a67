#!/usr/bin/env bash
# The project's test command: every test of the module with the race
# detector, through gotestsum (one line per package, then the skipped tests
# with their reasons, the failures in full). Extra arguments go to go test.
set -euo pipefail
cd "$(dirname "$0")/.."
go tool gotestsum --format pkgname-and-test-fails -- -race -timeout 20m "$@" ./...
