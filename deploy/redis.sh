#!/usr/bin/env bash
# Local Redis for memgate: 127.0.0.1 only, AOF persistence (appendfsync always: docs/SECURITY.md "Durability"), no RDB snapshots.
#
#   deploy/redis.sh start    install redis-server with apt if missing (as root), start, wait for PONG
#   deploy/redis.sh stop     SHUTDOWN NOSAVE (the AOF is flushed), else SIGTERM/SIGKILL the pid
#   deploy/redis.sh status   running or not (exit 0 when running, 3 when not)
#   deploy/redis.sh wait     wait for PONG (timeout MEMGATE_REDIS_WAIT_TIMEOUT, 30 s)
#   deploy/redis.sh restart  stop + start
#
# Environment (defaults in brackets):
#   MEMGATE_SERVICES_DIR        state root [<repo>/.services]; this script uses <root>/redis/
#   MEMGATE_REDIS_PORT          port on 127.0.0.1 [6379]
#   MEMGATE_REDIS_WAIT_TIMEOUT  seconds to wait for PONG [30]
set -euo pipefail

DEPLOY_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO_DIR="$(cd "$DEPLOY_DIR/.." && pwd)"
SERVICES_DIR="${MEMGATE_SERVICES_DIR:-$REPO_DIR/.services}"
STATE_DIR="$SERVICES_DIR/redis"
PID_FILE="$STATE_DIR/redis.pid"
LOG_FILE="$STATE_DIR/redis.log"
HOST="127.0.0.1"
PORT="${MEMGATE_REDIS_PORT:-6379}"
WAIT_TIMEOUT="${MEMGATE_REDIS_WAIT_TIMEOUT:-30}"
STOP_TIMEOUT=30

log() { echo "redis: $*"; }
err() { echo "redis: $*" >&2; }

cli() { timeout 5 redis-cli -h "$HOST" -p "$PORT" "$@"; }

ping_ok() { [[ "$(cli ping 2>/dev/null || true)" == "PONG" ]]; }

port_open() { timeout 2 bash -c "exec 3<>/dev/tcp/$HOST/$PORT" 2>/dev/null; }

running_pid() {
  local pid
  [[ -f "$PID_FILE" ]] || return 1
  pid="$(tr -dc '0-9' < "$PID_FILE")"
  [[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null || return 1
  if [[ -r "/proc/$pid/comm" ]] && ! grep -q '^redis' "/proc/$pid/comm"; then
    return 1 # recycled pid
  fi
  echo "$pid"
}

ensure_installed() {
  if command -v redis-server >/dev/null 2>&1 && command -v redis-cli >/dev/null 2>&1; then
    return 0
  fi
  if [[ "$(id -u)" != 0 ]] || ! command -v apt-get >/dev/null 2>&1; then
    err "redis-server is not installed; install it (e.g. 'sudo apt-get install redis-server') and retry"
    exit 1
  fi
  log "installing redis-server with apt-get..."
  DEBIAN_FRONTEND=noninteractive apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server >/dev/null
  # On a machine with systemd the package starts its own instance on 6379; we run our own.
  if [[ -d /run/systemd/system ]] && command -v systemctl >/dev/null 2>&1 \
     && systemctl is-active --quiet redis-server 2>/dev/null; then
    log "stopping and disabling the system redis-server service that apt just started"
    systemctl disable --now redis-server >/dev/null 2>&1 || true
  fi
}

cmd_wait() {
  local t0=$SECONDS
  printf 'redis: waiting for redis://%s:%s ' "$HOST" "$PORT"
  while ! ping_ok; do
    if ! running_pid >/dev/null; then
      echo
      err "process is not running; last 40 lines of $LOG_FILE:"
      [[ -f "$LOG_FILE" ]] && tail -40 "$LOG_FILE" >&2
      err "fix the error above (e.g. port $PORT taken: set MEMGATE_REDIS_PORT), then: $0 start"
      return 1
    fi
    if ((SECONDS - t0 >= WAIT_TIMEOUT)); then
      echo
      err "no PONG after ${WAIT_TIMEOUT}s; last 40 lines of $LOG_FILE:"
      tail -40 "$LOG_FILE" >&2 || true
      err "try '$0 stop' then '$0 start'; see $LOG_FILE"
      return 1
    fi
    printf '.'
    sleep 0.5
  done
  echo " ready after $((SECONDS - t0))s"
}

cmd_start() {
  local pid
  ensure_installed
  if pid="$(running_pid)"; then
    log "already running (pid $pid) on redis://$HOST:$PORT/0"
    return 0
  fi
  if port_open; then
    if ping_ok; then
      err "another redis (not started by this script) already answers on $HOST:$PORT;"
      err "use it directly (redis://$HOST:$PORT/0), stop it, or set MEMGATE_REDIS_PORT"
    else
      err "port $HOST:$PORT is already in use by another process; stop it or set MEMGATE_REDIS_PORT"
    fi
    exit 1
  fi
  mkdir -p "$STATE_DIR"
  rm -f "$PID_FILE"
  log "starting (data $STATE_DIR, log $LOG_FILE)"
  redis-server \
    --bind "$HOST" --port "$PORT" --protected-mode yes \
    --save "" --appendonly yes --appendfsync always \
    --dir "$STATE_DIR" \
    --daemonize yes --pidfile "$PID_FILE" --logfile "$LOG_FILE"
  # with --daemonize the pid file appears shortly after the fork
  local t0=$SECONDS
  until [[ -s "$PID_FILE" ]]; do
    if ((SECONDS - t0 >= 10)); then
      err "redis-server did not write $PID_FILE; last 40 lines of $LOG_FILE:"
      tail -40 "$LOG_FILE" >&2 || true
      exit 1
    fi
    sleep 0.1
  done
  cmd_wait
  log "redis://$HOST:$PORT/0 (pid $(cat "$PID_FILE"))"
}

cmd_stop() {
  local pid
  if ! pid="$(running_pid)"; then
    log "not running"
    rm -f "$PID_FILE"
    return 0
  fi
  printf 'redis: stopping pid %s ' "$pid"
  # SHUTDOWN only if the server on our port is the one we started
  if [[ "$(cli info server 2>/dev/null | tr -d '\r' | awk -F: '/^process_id:/{print $2}')" == "$pid" ]]; then
    cli shutdown nosave >/dev/null 2>&1 || true
  else
    kill -TERM "$pid" 2>/dev/null || true
  fi
  local t0=$SECONDS
  while kill -0 "$pid" 2>/dev/null; do
    if ((SECONDS - t0 >= STOP_TIMEOUT)); then
      echo
      err "still running after ${STOP_TIMEOUT}s, sending SIGKILL"
      kill -KILL "$pid" 2>/dev/null || true
      sleep 0.5
      break
    fi
    printf '.'
    sleep 0.2
  done
  rm -f "$PID_FILE"
  echo " stopped"
}

cmd_status() {
  local pid
  if pid="$(running_pid)"; then
    if ping_ok; then
      log "running (pid $pid) redis://$HOST:$PORT/0"
    else
      log "process $pid exists but does not answer PING on $HOST:$PORT"
    fi
    return 0
  fi
  log "not running (state dir $STATE_DIR)"
  return 3
}

case "${1:-}" in
  start) cmd_start ;;
  stop) cmd_stop ;;
  status) cmd_status ;;
  wait)
    if ! running_pid >/dev/null; then err "not running; use: $0 start"; exit 1; fi
    cmd_wait
    ;;
  restart) cmd_stop; cmd_start ;;
  *)
    echo "usage: $0 {start|stop|status|wait|restart}" >&2
    exit 2
    ;;
esac
