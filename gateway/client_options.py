"""The options every ``memgate`` command that calls a running gateway takes — target, agent, API
key, TLS (``--tls-ca``, ``--tls-cert``, ``--tls-key``, ``--tls-server-name`` or their
``MEMGATE_*`` variables) — and the client they make. One place for all commands (``cli.py``,
``ops_cli.py``, ``replay_cli.py``, the console, MCP)."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any


def read_file(path: str | None, what: str) -> bytes | None:
    if not path:
        return None
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        raise OSError(f"cannot read the {what} {path!r}: {exc.strerror or exc}") from None


def add_client_options(parser: argparse.ArgumentParser) -> None:
    """The options every command that calls a running gateway takes (one place for all)."""
    parser.add_argument("--target", default="127.0.0.1:50051", help="gateway address HOST:PORT")
    parser.add_argument("--agent", default="master", help="agent id to call as (default master)")
    parser.add_argument(
        "--api-key",
        default=os.environ.get("MEMGATE_API_KEY") or None,
        help="the agent's API key (default: $MEMGATE_API_KEY)",
    )
    add_tls_options(parser)
    parser.add_argument("--json", action="store_true", help="print JSON for scripts")
    parser.set_defaults(connect=connect)


def add_tls_options(parser: argparse.ArgumentParser) -> None:
    """How a client reaches a gateway that serves TLS (each also from the environment)."""
    env = os.environ.get
    parser.add_argument(
        "--tls-ca",
        default=env("MEMGATE_TLS_CA") or None,
        help="TLS: the CA that signed the gateway's certificate, PEM (default: $MEMGATE_TLS_CA)",
    )
    parser.add_argument(
        "--tls-cert",
        default=env("MEMGATE_CLIENT_CERT") or None,
        help="mTLS: this client's certificate, PEM (default: $MEMGATE_CLIENT_CERT)",
    )
    parser.add_argument(
        "--tls-key",
        default=env("MEMGATE_CLIENT_KEY") or None,
        help="mTLS: this client's key, PEM (default: $MEMGATE_CLIENT_KEY)",
    )
    parser.add_argument(
        "--tls-server-name",
        default=env("MEMGATE_TLS_SERVER_NAME") or None,
        help="the name to check the gateway's certificate against (default: the target's host)",
    )


def tls_of(args: argparse.Namespace) -> dict[str, Any]:
    """The client's TLS arguments from the options (files read here: a missing one is an
    OSError naming it)."""
    return {
        "root_certificates": read_file(args.tls_ca, "CA file (--tls-ca)"),
        "certificate_chain": read_file(args.tls_cert, "client certificate (--tls-cert)"),
        "private_key": read_file(args.tls_key, "client key (--tls-key)"),
        "server_name": args.tls_server_name,
    }


def connect(args: argparse.Namespace, timeout: float = 30.0) -> object:
    """A client for the gateway the shared options name."""
    from gateway.client import GatewayClient

    return GatewayClient(
        args.target, agent_id=args.agent, api_key=args.api_key, timeout=timeout, **tls_of(args)
    )
