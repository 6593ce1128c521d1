"""The options every ``memgate`` command that calls a running gateway takes — target, agent, API
key, TLS (``--tls-ca``, ``--tls-cert``, ``--tls-key``, ``--tls-server-name`` or their
``MEMGATE_*`` variables) — and the client they make. One place for all commands (``cli.py``,
``ops_cli.py``, ``replay_cli.py``, the console, MCP)."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any


def read_file(path: str | None, what: str) -> bytes | None:
    if not path:
        return None
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        raise OSError(f"cannot read the {what} {path!r}: {exc.strerror or exc}") from None


def secret(args: argparse.Namespace, name: str, env: str, command: str) -> str | None:
    """A secret option (``--api-key``, ``--token``): from ``--<name>-file`` (its first line),
    else the option, else ``$env``. Given on the command line it is visible to every local user
    in the process list (``/proc/PID/cmdline``): that works, with a warning that says what to
    use instead."""
    attr = name.replace("-", "_")
    path = getattr(args, f"{attr}_file", None)
    if path:
        text = read_file(path, f"--{name}-file")
        return (text or b"").decode().strip().splitlines()[0] if text and text.strip() else None
    given = getattr(args, attr, None)
    if given:
        print(
            f"{command}: WARNING --{name} on the command line is visible to every local user in "
            f"the process list: use ${env} or --{name}-file instead",
            file=sys.stderr,
        )
        return str(given)
    return os.environ.get(env) or None


def add_secret_option(parser: argparse.ArgumentParser, name: str, env: str, what: str) -> None:
    """``--<name>`` and ``--<name>-file`` (read by ``secret``)."""
    parser.add_argument(f"--{name}", default=None, help=f"{what} (prefer ${env} or --{name}-file)")
    parser.add_argument(
        f"--{name}-file", default=None, help=f"a file whose first line is {what} (mode 600)"
    )


def add_client_options(parser: argparse.ArgumentParser) -> None:
    """The options every command that calls a running gateway takes (one place for all)."""
    parser.add_argument("--target", default="127.0.0.1:50051", help="gateway address HOST:PORT")
    parser.add_argument("--agent", default="master", help="agent id to call as (default master)")
    add_secret_option(parser, "api-key", "MEMGATE_API_KEY", "the agent's API key")
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

    api_key = secret(args, "api-key", "MEMGATE_API_KEY", "memgate")
    return GatewayClient(
        args.target, agent_id=args.agent, api_key=api_key, timeout=timeout, **tls_of(args)
    )
