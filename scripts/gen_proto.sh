#!/usr/bin/env bash
# Regenerates memgate/v1/*_pb2*.py from proto/ with the pinned grpcio-tools (see pyproject's dev extra).
# CI runs it with --check: regenerating must change nothing.
set -euo pipefail
cd "$(dirname "$0")/.."
out=.
if [ "${1:-}" = "--check" ]; then out=$(mktemp -d); fi
python -m grpc_tools.protoc -I proto --python_out="$out" --pyi_out="$out" --grpc_python_out="$out" proto/memgate/v1/memgate.proto
touch "$out/memgate/__init__.py" "$out/memgate/v1/__init__.py"
if [ "${1:-}" = "--check" ]; then
  for f in memgate_pb2.py memgate_pb2.pyi memgate_pb2_grpc.py; do
    if ! cmp -s "$out/memgate/v1/$f" "memgate/v1/$f"; then
      echo "memgate/v1/$f is stale: run scripts/gen_proto.sh and commit the result" >&2; exit 1
    fi
  done
  echo "generated code is up to date"
fi
