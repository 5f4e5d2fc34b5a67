#!/usr/bin/env bash
# Runs a fleet on this machine: three examples/everything instances sharing
# one state key and one Redis (a ledger, tasks, 2025-11-25 sessions),
# behind nginx balancing round-robin, all on 127.0.0.1.
#
#   examples/fleet/run.sh
#
# Environment (all optional):
#   BATON_STATE_KEY       the shared signing key (>= 32 bytes); a random one
#                         is made for this run when unset
#   BATON_STATE_KEYS_OLD  older keys, comma-separated, to verify only
#   BATON_NGINX           the nginx binary (default: nginx on PATH, else
#                         /usr/sbin/nginx; Debian: apt-get install nginx)
#   BATON_REDIS_URL       the Redis the instances share confirmations, tasks
#                         and 2025-11-25 sessions through;
#                         when unset, a private redis-server is started on a
#                         Unix socket in the temporary directory
#   BATON_REDIS_SERVER    the redis-server binary for that (default:
#                         redis-server on PATH; Debian: apt-get install
#                         redis-server)
#   FLEET_PORT            the front port (default: a free one)
#
# It prints the front URL and runs until interrupted (Ctrl-C) or until any
# process of the fleet exits; then it stops them all and removes its
# temporary directory.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
HERE="$ROOT/examples/fleet"

NGINX=${BATON_NGINX:-$(command -v nginx || echo /usr/sbin/nginx)}
if [ ! -x "$NGINX" ]; then
  echo "fleet: nginx not found at $NGINX: apt-get install nginx (or set BATON_NGINX)" >&2
  exit 1
fi

WORK=$(mktemp -d "${TMPDIR:-/tmp}/baton-fleet.XXXXXX")
PIDS=()
cleanup() {
  local pid
  for pid in "${PIDS[@]}"; do
    kill -TERM "$pid" 2>/dev/null || true
  done
  for pid in "${PIDS[@]}"; do
    wait "$pid" 2>/dev/null || true
  done
  rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM HUP

fail() {
  echo "fleet: $*" >&2
  exit 1
}

echo "fleet: building examples/everything"
# examples/ is a module of its own (examples/go.mod).
(cd "$ROOT/examples" && go build -o "$WORK/everything" ./everything)

if [ -z "${BATON_STATE_KEY:-}" ]; then
  BATON_STATE_KEY=$(head -c 32 /dev/urandom | base64 | tr -d '\n')
  echo "fleet: BATON_STATE_KEY is unset; using a random key for this run"
fi
export BATON_STATE_KEY
export BATON_STATE_KEYS_OLD=${BATON_STATE_KEYS_OLD:-}

# One ledger for the three instances, so that a confirmation is redeemed
# once across the fleet: a replayed confirmed retry transfers nothing on
# any instance. Without it each instance would refuse a replay only of
# what it redeemed itself. The same Redis keeps tasks and 2025-11-25
# sessions, so that any instance serves them. It runs with the append-only
# file (appendonly yes): a confirmation redeemed before a Redis restart
# stays redeemed after it (docs/deployment.md, "What Redis must keep").
if [ -z "${BATON_REDIS_URL:-}" ]; then
  REDIS=${BATON_REDIS_SERVER:-$(command -v redis-server || echo /usr/bin/redis-server)}
  [ -x "$REDIS" ] || fail "redis-server not found at $REDIS: apt-get install redis-server (or set BATON_REDIS_SERVER, or BATON_REDIS_URL to a running Redis)"
  "$REDIS" --port 0 --unixsocket "$WORK/redis.sock" --unixsocketperm 700 \
    --save "" --appendonly yes --appendfsync always --dir "$WORK" --daemonize no > "$WORK/redis.log" 2>&1 &
  PIDS+=("$!")
  for _ in $(seq 1 100); do
    [ -S "$WORK/redis.sock" ] && break
    kill -0 "${PIDS[-1]}" 2>/dev/null || { cat "$WORK/redis.log" >&2; fail "redis-server exited"; }
    sleep 0.1
  done
  [ -S "$WORK/redis.sock" ] || { cat "$WORK/redis.log" >&2; fail "redis-server did not start"; }
  BATON_REDIS_URL="unix://$WORK/redis.sock"
  echo "fleet: redis-server (pid ${PIDS[-1]}) at $BATON_REDIS_URL"
else
  echo "fleet: redis at $BATON_REDIS_URL"
fi
export BATON_REDIS_URL

# Three instances, each on a port of its own choosing; the address is read
# from the line it logs once it listens.
UPSTREAMS=()
for i in 1 2 3; do
  # The log exists before the instance starts: the shell opens the
  # redirect in the child, which may run after the first sed below.
  : > "$WORK/instance$i.log"
  # nginx runs on this host: its X-Forwarded-For is believed.
  "$WORK/everything" -addr 127.0.0.1:0 -trusted-proxy 127.0.0.1 2>> "$WORK/instance$i.log" &
  pid=$!
  PIDS+=("$pid")
  addr=
  for _ in $(seq 1 100); do
    addr=$(sed -n 's/.*msg="serving MCP" url=http:\/\/\([^/ ]*\)\/mcp.*/\1/p' "$WORK/instance$i.log" | head -n1)
    [ -n "$addr" ] && break
    kill -0 "$pid" 2>/dev/null || { cat "$WORK/instance$i.log" >&2; fail "instance $i exited"; }
    sleep 0.1
  done
  [ -n "$addr" ] || { cat "$WORK/instance$i.log" >&2; fail "instance $i did not start"; }
  UPSTREAMS+=("$addr")
  echo "fleet: instance $i at http://$addr/mcp (pid $pid, log $WORK/instance$i.log)"
done

free_port() {
  # A port in the ephemeral range that nothing on 127.0.0.1 answers on.
  local p
  for _ in $(seq 1 50); do
    p=$((20000 + RANDOM % 40000))
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
      echo "$p"
      return 0
    fi
  done
  return 1
}

USER_DIRECTIVE=
if [ "$(id -u)" = 0 ]; then
  USER_DIRECTIVE="user $(id -un) $(id -gn);"
fi

# nginx binds before it forks its worker; a port taken in between makes it
# exit, so try again with another unless the port was chosen.
for attempt in 1 2 3; do
  PORT=${FLEET_PORT:-$(free_port)} || fail "no free port found"
  sed -e "s|@USER@|$USER_DIRECTIVE|" \
      -e "s|@PREFIX@|$WORK|g" \
      -e "s|@LISTEN@|127.0.0.1:$PORT|" \
      -e "s|@UPSTREAM1@|${UPSTREAMS[0]}|" \
      -e "s|@UPSTREAM2@|${UPSTREAMS[1]}|" \
      -e "s|@UPSTREAM3@|${UPSTREAMS[2]}|" \
      "$HERE/nginx.conf.in" > "$WORK/nginx.conf"
  "$NGINX" -p "$WORK" -c "$WORK/nginx.conf" -e "$WORK/error.log" &
  NGINX_PID=$!
  up=
  for _ in $(seq 1 50); do
    kill -0 "$NGINX_PID" 2>/dev/null || break
    if (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null; then
      up=1
      break
    fi
    sleep 0.1
  done
  if [ -n "$up" ]; then
    PIDS+=("$NGINX_PID")
    break
  fi
  kill -TERM "$NGINX_PID" 2>/dev/null || true
  wait "$NGINX_PID" 2>/dev/null || true
  cat "$WORK/error.log" >&2 || true
  [ -z "${FLEET_PORT:-}" ] || fail "nginx did not start on port $FLEET_PORT"
done
[ -n "$up" ] || fail "nginx did not start"

echo "fleet: nginx (pid $NGINX_PID) config $WORK/nginx.conf, access log $WORK/access.log"
echo "fleet: front http://127.0.0.1:$PORT/mcp"
echo "fleet: Ctrl-C stops the fleet"

# Run until any member exits or we are told to stop.
set +e
wait -n "${PIDS[@]}"
status=$?
set -e
echo "fleet: a process of the fleet exited (status $status); stopping the rest" >&2
exit 1
