#!/usr/bin/env bash
# Regenerates the stubs of proto/memgate/v1/memgate.proto for the three clients, all through the
# protoc that the pinned grpcio-tools ships (see pyproject's dev extra):
#   Python      memgate/v1/*_pb2*.py                    (grpcio-tools' own plugins)
#   TypeScript  clients/typescript/src/gen/memgate/v1/  (protoc-gen-es, pinned in that package's
#                                                        package-lock.json; installed with npm ci)
#   Go          clients/go/memgatev1/                   (protoc-gen-go and protoc-gen-go-grpc at
#                                                        the versions below, built with go install)
# CI runs it with --check: regenerating must change nothing.
set -euo pipefail
cd "$(dirname "$0")/.."

PROTOC_GEN_GO=google.golang.org/protobuf/cmd/protoc-gen-go@v1.36.12
PROTOC_GEN_GO_GRPC=google.golang.org/grpc/cmd/protoc-gen-go-grpc@v1.6.2
GO_MODULE=memgate/client  # clients/go/go.mod
PROTO=proto/memgate/v1/memgate.proto

check=false
if [ "${1:-}" = "--check" ]; then check=true; fi
out=.
if $check; then out=$(mktemp -d); trap 'rm -rf "$out"' EXIT; fi

# ---- plugins
ts_dir=clients/typescript
if [ ! -x "$ts_dir/node_modules/.bin/protoc-gen-es" ]; then
  echo "== npm ci in $ts_dir (protoc-gen-es)" >&2
  npm ci --prefix "$ts_dir" --no-audit --no-fund --loglevel=error >&2
fi
tools="${MEMGATE_TOOLS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/memgate-protoc}"
go_plugin() {  # go_plugin module/cmd/name@version -> path of the built plugin
  local dir="$tools/${1//[\/@]/_}" bin
  bin="$dir/$(basename "${1%@*}")"
  [ -x "$bin" ] || GOBIN="$dir" GOFLAGS=-buildvcs=false go install "$1" >&2
  echo "$bin"
}
gen_go=$(go_plugin "$PROTOC_GEN_GO")
gen_go_grpc=$(go_plugin "$PROTOC_GEN_GO_GRPC")

# ---- generate
mkdir -p "$out/$ts_dir/src/gen" "$out/clients/go"
go_map="M${PROTO#proto/}=$GO_MODULE/memgatev1"
python -m grpc_tools.protoc -I proto \
  --python_out="$out" --pyi_out="$out" --grpc_python_out="$out" \
  --plugin=protoc-gen-es="$ts_dir/node_modules/.bin/protoc-gen-es" \
  --es_out="$out/$ts_dir/src/gen" --es_opt=target=ts,import_extension=js \
  --plugin=protoc-gen-go="$gen_go" --go_out="$out/clients/go" \
  --go_opt="module=$GO_MODULE,$go_map" \
  --plugin=protoc-gen-go-grpc="$gen_go_grpc" --go-grpc_out="$out/clients/go" \
  --go-grpc_opt="module=$GO_MODULE,$go_map" \
  "$PROTO"
touch "$out/memgate/__init__.py" "$out/memgate/v1/__init__.py"

if $check; then
  stale=0
  for f in memgate/v1/memgate_pb2.py memgate/v1/memgate_pb2.pyi memgate/v1/memgate_pb2_grpc.py \
    "$ts_dir/src/gen/memgate/v1/memgate_pb.ts" \
    clients/go/memgatev1/memgate.pb.go clients/go/memgatev1/memgate_grpc.pb.go; do
    if ! cmp -s "$out/$f" "$f"; then
      echo "$f is stale: run scripts/gen_proto.sh and commit the result" >&2
      stale=1
    fi
  done
  [ "$stale" = 0 ] || exit 1
  echo "generated code is up to date (Python, TypeScript, Go)"
fi
