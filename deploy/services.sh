#!/usr/bin/env bash
# Local backing services for memgate: Redis + Neo4j (see deploy/README.md).
#
#   deploy/services.sh up       start Redis and Neo4j (each waited on) and print the URLs
#   deploy/services.sh down     stop Neo4j and Redis
#   deploy/services.sh status   status of both (exit 0 only when both are running)
#
# Environment: see deploy/redis.sh and deploy/neo4j.sh (MEMGATE_SERVICES_DIR,
# MEMGATE_REDIS_PORT, MEMGATE_NEO4J_PORT, MEMGATE_NEO4J_HEAP, MEMGATE_NEO4J_PAGECACHE, ...).
set -euo pipefail

DEPLOY_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REDIS_URL="redis://127.0.0.1:${MEMGATE_REDIS_PORT:-6379}/0"
NEO4J_URI="bolt://127.0.0.1:${MEMGATE_NEO4J_PORT:-7687}"

print_urls() {
  cat <<URLS

memgate backing services:
  redis: $REDIS_URL
  neo4j: $NEO4J_URI   (no auth)

  memgate serve --redis-url $REDIS_URL --neo4j-uri $NEO4J_URI
URLS
}

case "${1:-}" in
  up)
    "$DEPLOY_DIR/redis.sh" start
    "$DEPLOY_DIR/neo4j.sh" start
    print_urls
    ;;
  down)
    rc=0
    "$DEPLOY_DIR/neo4j.sh" stop || rc=$?
    "$DEPLOY_DIR/redis.sh" stop || rc=$?
    exit "$rc"
    ;;
  status)
    rc=0
    "$DEPLOY_DIR/redis.sh" status || rc=$?
    "$DEPLOY_DIR/neo4j.sh" status || rc=$?
    exit "$rc"
    ;;
  *)
    echo "usage: $0 {up|down|status}" >&2
    exit 2
    ;;
esac
