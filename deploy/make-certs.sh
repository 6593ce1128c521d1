#!/usr/bin/env bash
# Makes the TLS material memgate's compose file expects, with openssl, into deploy/certs/:
#   ca.crt / ca.key        a private CA (keep ca.key offline once you are done)
#   server.crt / server.key the gateway's certificate: localhost, 127.0.0.1 and the names given
#   <agent>.crt / .key     one client certificate per agent (CN = the agent id), for mTLS
# Usage: deploy/make-certs.sh [--days N] [--name DNS]... [--client AGENT]...
#   deploy/make-certs.sh --name memgate.internal --client master --client researcher
# Re-running keeps an existing CA and re-issues the other certificates.
set -euo pipefail
cd "$(dirname "$0")"
out=certs days=825 names=() clients=()
while [ $# -gt 0 ]; do
  case "$1" in
    --days) days=$2; shift 2 ;;
    --name) names+=("$2"); shift 2 ;;
    --client) clients+=("$2"); shift 2 ;;
    *) echo "unknown argument $1 (see the header of $0)" >&2; exit 2 ;;
  esac
done
mkdir -p "$out"
chmod 755 "$out"  # bind-mounted into the gateway container (uid 10001)
if [ ! -f "$out/ca.key" ]; then
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days "$days" \
    -subj "/CN=memgate CA" -keyout "$out/ca.key" -out "$out/ca.crt" 2>/dev/null
  chmod 600 "$out/ca.key"
fi
issue() {  # name, subject CN, extensions
  openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=$2" \
    -keyout "$out/$1.key" -out "$out/$1.csr" 2>/dev/null
  openssl x509 -req -in "$out/$1.csr" -CA "$out/ca.crt" -CAkey "$out/ca.key" -CAcreateserial \
    -days "$days" -extfile <(printf '%s\n' "$3") -out "$out/$1.crt" 2>/dev/null
  rm -f "$out/$1.csr"
  chmod 600 "$out/$1.key"
}
san="DNS:localhost,DNS:gateway,IP:127.0.0.1"
for n in "${names[@]}"; do san="$san,DNS:$n"; done
issue server memgate-server "subjectAltName=$san
extendedKeyUsage=serverAuth
basicConstraints=critical,CA:FALSE"
for c in "${clients[@]}"; do
  issue "$c" "$c" "subjectAltName=DNS:$c
extendedKeyUsage=clientAuth
basicConstraints=critical,CA:FALSE"
done
# the gateway runs as uid 10001 in its image: it must read the server key (ca.key and client
# keys stay 600; move ca.key somewhere safe once every certificate is issued)
chmod 644 "$out/server.key" "$out/server.crt" "$out/ca.crt"
echo "certificates in deploy/$out: ca.crt, server.crt/.key${clients[*]:+, clients: ${clients[*]}}"
