"""Transport security of the server: TLS / mTLS credentials from the settings, and the loud
warning for a plaintext, keyless listener that other machines can reach."""

from __future__ import annotations

import ipaddress
from pathlib import Path

import grpc

from gateway.settings import Settings


def _pem(path: str, what: str) -> bytes:
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise OSError(f"cannot read the {what} {path!r}: {exc.strerror or exc}") from None
    if b"-----BEGIN" not in data:
        raise OSError(f"the {what} {path!r} is not a PEM file (no -----BEGIN line)")
    return data


def server_credentials(settings: Settings) -> grpc.ServerCredentials | None:
    """TLS credentials when ``tls_cert``/``tls_key`` are set (None: plaintext); with
    ``tls_client_ca`` every client must present a certificate that CA signed."""
    if not settings.tls_cert:
        return None
    chain = _pem(settings.tls_cert, "TLS certificate (tls_cert)")
    key = _pem(settings.tls_key, "TLS private key (tls_key)")
    client_ca = None
    if settings.tls_client_ca:
        client_ca = _pem(settings.tls_client_ca, "client CA (tls_client_ca)")
    return grpc.ssl_server_credentials(
        [(key, chain)], root_certificates=client_ca, require_client_auth=client_ca is not None
    )


def is_loopback(host: str) -> bool:
    if host in ("localhost", "ip6-localhost"):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False  # a name or a wildcard ("0.0.0.0", "[::]" parse; "" does not)


def exposure_warning(settings: Settings) -> str | None:
    """What to shout at start-up, if anything: other machines can reach the gateway and nothing
    protects it (no TLS and no API keys), or keys travel in cleartext."""
    if is_loopback(settings.host):
        return None
    where = f"{settings.host}:{settings.port}"
    if not settings.tls_cert and not settings.api_keys:
        return (
            f"memgate listens on {where} in PLAINTEXT WITHOUT API KEYS: anyone who can reach "
            "this port reads and writes every agent's memory. Set api_keys and tls_cert/tls_key "
            "(docs/SECURITY.md 'Transport security'), or bind 127.0.0.1"
        )
    if not settings.tls_cert:
        return (
            f"memgate listens on {where} in plaintext: API keys and memories cross the network "
            "unencrypted. Set tls_cert/tls_key (docs/SECURITY.md 'Transport security')"
        )
    return None
