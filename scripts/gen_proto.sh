#!/usr/bin/env bash
# Regenerates the stubs of proto/memgate/v1/memgate.proto for the three clients, all through the
# protoc that the pinned grpcio-tools ships (see pyproject's dev extra):
#   Python      memgate/v1/*_pb2*.py                    (grpcio-tools' own plugins)
#   TypeScript  clients/typescript/src/gen/memgate/v1/  (protoc-gen-es, pinned in that package's
#                                                        package-lock.json; installed with npm ci)
#   Go          clients/go/memgatev1/                   (protoc-gen-go and protoc-gen-go-grpc: the
#                                                        `tool` lines of clients/go/go.mod pin
#                                                        them, go.sum verifies them)
# CI runs it with --check: regenerating must change nothing.
set -euo pipefail
cd "$(dirname "$0")/.."

GO_MODULE=memgate/client  # clients/go/go.mod
PROTO=proto/memgate/v1/memgate.proto

check=false
if [ "${1:-}" = "--check" ]; then check=true; fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
out=.
if $check; then out="$tmp/out"; fi

# ---- plugins
ts_dir=clients/typescript
if [ ! -x "$ts_dir/node_modules/.bin/protoc-gen-es" ]; then
  echo "== npm ci in $ts_dir (protoc-gen-es)" >&2
  npm ci --prefix "$ts_dir" --no-audit --no-fund --loglevel=error >&2
fi
# built from clients/go's module graph (the versions its go.mod pins, the protobuf runtime its
# tests compile too)
bin="$tmp/bin"
(cd clients/go && GOFLAGS=-buildvcs=false go build -o "$bin/" \
  google.golang.org/protobuf/cmd/protoc-gen-go google.golang.org/grpc/cmd/protoc-gen-go-grpc)
gen_go="$bin/protoc-gen-go"
gen_go_grpc="$bin/protoc-gen-go-grpc"

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
