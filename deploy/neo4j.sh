#!/usr/bin/env bash
# Local Neo4j Community 5.26 (embedded, Bolt only, no auth) for memgate.
#
#   deploy/neo4j.sh build    build the launcher (skipped when up to date; 'build --force' rebuilds)
#   deploy/neo4j.sh start    build if needed, start in the background, wait until Bolt answers
#   deploy/neo4j.sh stop     SIGTERM, wait up to 60 s, then SIGKILL
#   deploy/neo4j.sh status   running or not (exit 0 when running, 3 when not)
#   deploy/neo4j.sh wait     wait until Bolt answers (timeout MEMGATE_NEO4J_WAIT_TIMEOUT, 180 s)
#   deploy/neo4j.sh restart  stop + start
#   deploy/neo4j.sh logs     last 40 lines of the launcher log
#
# Environment (defaults in brackets):
#   MEMGATE_SERVICES_DIR        state root [<repo>/.services]; this script uses <root>/neo4j/
#   MEMGATE_NEO4J_PORT          Bolt port on 127.0.0.1 [7687]
#   MEMGATE_NEO4J_HEAP          JVM max heap (-Xmx) [512m]
#   MEMGATE_NEO4J_PAGECACHE     Neo4j page cache (server.memory.pagecache.size) [128m]
#   MEMGATE_NEO4J_DATA_DIR      Neo4j home: store in <dir>/data, Neo4j's logs in <dir>/logs [<state>/data]
#   MEMGATE_NEO4J_WAIT_TIMEOUT  seconds to wait for Bolt [180]
#   MEMGATE_NEO4J_JAVA          java binary [java on PATH; Neo4j 5.26 needs Java 17 or 21]
#   MEMGATE_NEO4J_JAVA_OPTS     extra JVM options appended to the defaults
set -euo pipefail

DEPLOY_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO_DIR="$(cd "$DEPLOY_DIR/.." && pwd)"
SRC_DIR="$DEPLOY_DIR/neo4j"
TARGET_DIR="$SRC_DIR/target"
JAR="$TARGET_DIR/memgate-neo4j-launcher.jar"
BUILD_STAMP="$TARGET_DIR/.memgate-build-ok"
MAIN_CLASS="memgate.neo4j.Launcher"

SERVICES_DIR="${MEMGATE_SERVICES_DIR:-$REPO_DIR/.services}"
STATE_DIR="$SERVICES_DIR/neo4j"
PID_FILE="$STATE_DIR/neo4j.pid"
LOG_FILE="$STATE_DIR/neo4j.log"
BUILD_LOG="$STATE_DIR/build.log"
DATA_DIR="${MEMGATE_NEO4J_DATA_DIR:-$STATE_DIR/data}"

PORT="${MEMGATE_NEO4J_PORT:-7687}"
HOST="127.0.0.1"
HEAP="${MEMGATE_NEO4J_HEAP:-512m}"
PAGECACHE="${MEMGATE_NEO4J_PAGECACHE:-128m}"
WAIT_TIMEOUT="${MEMGATE_NEO4J_WAIT_TIMEOUT:-180}"
JAVA="${MEMGATE_NEO4J_JAVA:-java}"
STOP_TIMEOUT=60

log() { echo "neo4j: $*"; }
err() { echo "neo4j: $*" >&2; }

# --- helpers -----------------------------------------------------------------

# Size like 512m / 1g / 262144k -> MiB (integer), for picking -Xms.
to_mib() {
  local v="${1,,}" n
  n="${v%[kmg]}"
  [[ "$n" =~ ^[0-9]+$ ]] || { err "bad size '$1' (use e.g. 512m or 1g)"; exit 2; }
  case "$v" in
    *g) echo $((n * 1024)) ;;
    *m) echo "$n" ;;
    *k) echo $((n / 1024)) ;;
    *) echo $((n / 1024 / 1024)) ;;
  esac
}

port_open() {
  # true when something accepts TCP connections on HOST:PORT
  timeout 2 bash -c "exec 3<>/dev/tcp/$HOST/$PORT" 2>/dev/null
}

running_pid() {
  # prints the pid and returns 0 when our launcher is running
  local pid
  [[ -f "$PID_FILE" ]] || return 1
  pid="$(tr -dc '0-9' < "$PID_FILE")"
  [[ -n "$pid" ]] || return 1
  kill -0 "$pid" 2>/dev/null || return 1
  # guard against a recycled pid
  if [[ -r "/proc/$pid/cmdline" ]] && ! tr '\0' ' ' < "/proc/$pid/cmdline" | grep -q "$MAIN_CLASS"; then
    return 1
  fi
  echo "$pid"
}

ready_in_log() {
  [[ -f "$LOG_FILE" ]] || return 1
  # only look at the log of the current run (after the last start marker)
  awk '/^=== memgate neo4j start /{ready=0} /^NEO4J_READY /{ready=1} END{exit ready?0:1}' "$LOG_FILE"
}

ensure_tools() {
  local missing=()
  command -v "$JAVA" >/dev/null 2>&1 || missing+=(openjdk-17-jdk-headless)
  command -v mvn >/dev/null 2>&1 || missing+=(maven)
  if ((${#missing[@]})); then
    if [[ "$(id -u)" == 0 ]] && command -v apt-get >/dev/null 2>&1; then
      log "installing ${missing[*]} with apt-get..."
      DEBIAN_FRONTEND=noninteractive apt-get update -qq
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
    else
      err "missing ${missing[*]}: install a Java 17 JDK and Maven (or set MEMGATE_NEO4J_JAVA)"
      exit 1
    fi
  fi
}

check_java_version() {
  local ver major
  ver="$("$JAVA" -XshowSettings:properties -version 2>&1 | awk -F'= ' '/java.specification.version/{print $2; exit}')"
  major="${ver%%.*}"
  if [[ -z "$major" || ! "$major" =~ ^[0-9]+$ ]]; then
    err "could not determine the Java version of '$JAVA'"
    exit 1
  fi
  if ((major < 17)); then
    err "Java $major found; Neo4j 5.26 needs Java 17 or 21 (set MEMGATE_NEO4J_JAVA)"
    exit 1
  fi
  if ((major != 17 && major != 21)); then
    err "warning: Java $major is not supported by Neo4j 5.26 (17 or 21 are); trying anyway"
  fi
}

needs_build() {
  [[ -f "$BUILD_STAMP" && -f "$JAR" && -d "$TARGET_DIR/lib" ]] || return 0
  # rebuild when pom.xml or any source file is newer than the last successful build
  [[ -n "$(find "$SRC_DIR/pom.xml" "$SRC_DIR/src" -newer "$BUILD_STAMP" -print -quit)" ]]
}

# --- commands ----------------------------------------------------------------

cmd_build() {
  local force="${1:-}"
  if [[ "$force" != "force" ]] && ! needs_build; then
    [[ "$force" == "quiet" ]] || log "launcher is up to date ($JAR)"
    return 0
  fi
  ensure_tools
  mkdir -p "$STATE_DIR"
  if [[ ! -d "$TARGET_DIR/lib" ]]; then
    log "building neo4j launcher (first time downloads ~100 MB from Maven Central)..."
  else
    log "building neo4j launcher..."
  fi
  local t0=$SECONDS
  rm -f "$BUILD_STAMP"
  if ! (cd "$SRC_DIR" && mvn -B -q package) >"$BUILD_LOG" 2>&1; then
    err "build failed; last lines of $BUILD_LOG:"
    sed 's/\x1b\[[0-9;]*m//g' "$BUILD_LOG" | tail -40 >&2
    exit 1
  fi
  touch "$BUILD_STAMP"
  log "built in $((SECONDS - t0))s ($JAR)"
}

cmd_wait() {
  local t0=$SECONDS pid elapsed
  printf 'neo4j: waiting for bolt://%s:%s ' "$HOST" "$PORT"
  while true; do
    elapsed=$((SECONDS - t0))
    if ! pid="$(running_pid)"; then
      echo
      err "process is not running (it exited during startup); last 40 lines of $LOG_FILE:"
      [[ -f "$LOG_FILE" ]] && tail -40 "$LOG_FILE" >&2
      err "fix the error above (e.g. port $PORT taken: set MEMGATE_NEO4J_PORT), then: $0 start"
      return 1
    fi
    if ready_in_log && port_open; then
      echo " ready after ${elapsed}s"
      return 0
    fi
    if ((elapsed >= WAIT_TIMEOUT)); then
      echo
      err "not ready after ${WAIT_TIMEOUT}s (pid $pid still running); last 40 lines of $LOG_FILE:"
      tail -40 "$LOG_FILE" >&2 || true
      err "it may just be slow: run '$0 wait' again (or raise MEMGATE_NEO4J_WAIT_TIMEOUT);"
      err "otherwise '$0 stop', look at $DATA_DIR/logs/debug.log, and '$0 start' again"
      return 1
    fi
    if ((elapsed > 0 && elapsed % 10 == 0)); then printf '%ss' "$elapsed"; else printf '.'; fi
    sleep 1
  done
}

cmd_start() {
  local pid
  if pid="$(running_pid)"; then
    log "already running (pid $pid) on bolt://$HOST:$PORT"
    return 0
  fi
  cmd_build quiet
  check_java_version
  if port_open; then
    err "port $HOST:$PORT is already in use by another process; stop it or set MEMGATE_NEO4J_PORT"
    exit 1
  fi

  local heap_mib xms
  heap_mib="$(to_mib "$HEAP")"
  xms=$((heap_mib < 256 ? heap_mib : 256))
  local -a jvm_opts=(
    "-Xmx${heap_mib}m" "-Xms${xms}m"
    -XX:+UseG1GC -XX:+ExitOnOutOfMemoryError -XX:-OmitStackTraceInFastThrow
    # the same opens that Neo4j's own server scripts pass; without them the page cache
    # and the transaction log fall back to slower paths
    --add-opens=java.base/java.nio=ALL-UNNAMED
    --add-opens=java.base/java.io=ALL-UNNAMED
    --add-opens=java.base/sun.nio.ch=ALL-UNNAMED
    --add-opens=java.base/java.lang=ALL-UNNAMED
    -Dio.netty.tryReflectionSetAccessible=true
    -Dlog4j2.disable.jmx=true
    -Djdk.nio.maxCachedBufferSize=1024
  )
  if [[ -n "${MEMGATE_NEO4J_JAVA_OPTS:-}" ]]; then
    # shellcheck disable=SC2206  # intentional word splitting of user options
    jvm_opts+=(${MEMGATE_NEO4J_JAVA_OPTS})
  fi

  mkdir -p "$STATE_DIR" "$DATA_DIR"
  echo "=== memgate neo4j start $(date -u +%Y-%m-%dT%H:%M:%SZ) port=$PORT heap=$HEAP pagecache=$PAGECACHE" >>"$LOG_FILE"
  log "starting (heap $HEAP, page cache $PAGECACHE, data $DATA_DIR, log $LOG_FILE)"
  nohup "$JAVA" "${jvm_opts[@]}" -cp "$JAR:$TARGET_DIR/lib/*" "$MAIN_CLASS" \
    --port "$PORT" --host "$HOST" --data-dir "$DATA_DIR" --pagecache "$PAGECACHE" \
    >>"$LOG_FILE" 2>&1 </dev/null &
  local child=$!
  echo "$child" >"$PID_FILE"
  # the forked shell becomes java a moment later; until then its cmdline is not the launcher's
  for _ in $(seq 1 100); do
    tr '\0' ' ' < "/proc/$child/cmdline" 2>/dev/null | grep -q "$MAIN_CLASS" && break
    kill -0 "$child" 2>/dev/null || break
    sleep 0.05
  done
  cmd_wait
  log "bolt://$HOST:$PORT (pid $(cat "$PID_FILE"))"
}

cmd_stop() {
  local pid
  if ! pid="$(running_pid)"; then
    log "not running"
    rm -f "$PID_FILE"
    return 0
  fi
  printf 'neo4j: stopping pid %s ' "$pid"
  kill -TERM "$pid" 2>/dev/null || true
  local t0=$SECONDS
  while kill -0 "$pid" 2>/dev/null; do
    if ((SECONDS - t0 >= STOP_TIMEOUT)); then
      echo
      err "still running after ${STOP_TIMEOUT}s, sending SIGKILL (the store will recover on next start)"
      kill -KILL "$pid" 2>/dev/null || true
      sleep 1
      break
    fi
    printf '.'
    sleep 1
  done
  rm -f "$PID_FILE"
  echo " stopped after $((SECONDS - t0))s"
}

cmd_status() {
  local pid rss
  if pid="$(running_pid)"; then
    rss="$(awk '/^VmRSS:/{printf "%d MiB", $2/1024}' "/proc/$pid/status" 2>/dev/null || true)"
    if ready_in_log && port_open; then
      log "running (pid $pid, RSS ${rss:-?}) bolt://$HOST:$PORT"
    else
      log "starting (pid $pid, RSS ${rss:-?}), bolt://$HOST:$PORT not ready yet"
    fi
    return 0
  fi
  log "not running (state dir $STATE_DIR)"
  return 3
}

case "${1:-}" in
  build) if [[ "${2:-}" == "--force" ]]; then cmd_build force; else cmd_build; fi ;;
  start) cmd_start ;;
  stop) cmd_stop ;;
  status) cmd_status ;;
  wait)
    if ! running_pid >/dev/null; then err "not running; use: $0 start"; exit 1; fi
    cmd_wait
    ;;
  restart) cmd_stop; cmd_start ;;
  logs) tail -40 "$LOG_FILE" ;;
  *)
    echo "usage: $0 {build|start|stop|status|wait|restart|logs}" >&2
    exit 2
    ;;
esac
