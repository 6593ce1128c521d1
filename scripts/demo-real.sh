#!/usr/bin/env bash
# The agents demo against the real stack, in one command: starts Redis and Neo4j on loopback,
# a gateway on them, runs the master/sub-agent story through the client, and stops everything.
set -euo pipefail
cd "$(dirname "$0")/.."
python -m pip install -q --disable-pip-version-check --root-user-action=ignore -e ".[server]"
python -m gateway.cli model install  # the MiniLM weights, without sentence-transformers

redis_port="${MEMGATE_REDIS_PORT:-6379}"
neo4j_port="${MEMGATE_NEO4J_PORT:-7687}"
data_dir="$(mktemp -d -t memgate-demo-XXXX)"
log="$data_dir/gateway.log"
gateway_pid=""
cleanup() {
  if [ -n "$gateway_pid" ]; then kill "$gateway_pid" 2>/dev/null || true; wait "$gateway_pid" 2>/dev/null || true; fi
  deploy/services.sh down || true
}
trap cleanup EXIT

deploy/services.sh up
memgate serve --port 0 --data-dir "$data_dir" \
  --redis-url "redis://127.0.0.1:$redis_port/0" --neo4j-uri "bolt://127.0.0.1:$neo4j_port" >"$log" 2>&1 &
gateway_pid=$!
for _ in $(seq 1 120); do
  target=$(grep -o 'listening on [0-9.:]*' "$log" | awk '{print $3}' || true)
  [ -n "$target" ] && break
  kill -0 "$gateway_pid" 2>/dev/null || { cat "$log"; echo "the gateway did not start (log above)" >&2; exit 1; }
  sleep 0.5
done
[ -n "${target:-}" ] || { cat "$log"; echo "the gateway did not report its address" >&2; exit 1; }
echo "== gateway on Redis + Neo4j at $target"
python -m agents_demo --target "$target"

# the outage act: Neo4j stops, its breakers open, recall degrades and says so, a write is still
# acknowledged; Neo4j starts again, the breakers close, the write is recalled
outage_ns="user/demo-outage-$(date +%s)"
echo "== a backend stops: deploy/neo4j.sh stop"
deploy/neo4j.sh stop
python -m agents_demo.outage --target "$target" --namespace "$outage_ns" --phase down
echo "== and starts again: deploy/neo4j.sh start"
deploy/neo4j.sh start
python -m agents_demo.outage --target "$target" --namespace "$outage_ns" --phase up
