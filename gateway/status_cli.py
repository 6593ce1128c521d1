"""``memgate status``: is a gateway up, and how is it doing — as tables for people or, with
``--json``, one JSON object for scripts. Health answers for any agent; the rest (stats, breakers,
the review backlog) is the master's and shows as "master only" for others."""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from datetime import UTC, datetime
from typing import Any

from rich.console import Console
from rich.table import Table

from gateway.client_options import secret, tls_of

PIPED_WIDTH = 240
STATUSES = ("active", "quarantined", "superseded", "archived", "forgotten")
LISTED = 500  # the gateway's cap on listed proposals / queued memories


def _age(stamp: datetime | None) -> float | None:
    return round((datetime.now(UTC) - stamp).total_seconds(), 1) if stamp else None


def gather(client: Any, target: str) -> dict[str, Any]:
    """What ``status`` reports, as plain values (the JSON of ``--json``)."""
    from gateway.client import PermissionDenied

    out: dict[str, Any] = {"target": target, "health": client.health()}
    try:
        stats = client.stats()
    except PermissionDenied:
        out["stats"] = "master only"
        return out
    out.update(
        embedder=stats.embedder,
        shards=stats.shards,
        vectors=stats.vectors,
        journal_pending=stats.journal_pending,
        journal_applied=stats.journal_applied,
        apply_lag_seconds=round(stats.apply_lag_seconds, 3),
        recall_cache={"hits": stats.recall_cache_hits, "misses": stats.recall_cache_misses},
        memories=dict(stats.memories),
        breakers={b.layer: b.state for b in client.breakers()},
        languages=dict(stats.languages),
        languages_sampled=stats.languages_sampled,
        embedder_advice=stats.embedder_advice,
    )
    with contextlib.suppress(PermissionDenied):
        pending = client.proposals("pending", LISTED)
        oldest = min((p.created_at for p in pending if p.created_at), default=None)
        out["review"] = {
            "proposals_pending": len(pending),
            "proposals_listed_cap": LISTED,
            "oldest_pending_age_seconds": _age(oldest),
            "quarantine_queue": len(client.review_queue(LISTED)),
        }
    return out


def _human_age(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds / size:.1f} {unit}"
    return f"{seconds:.0f} s"


def tables(s: dict[str, Any]) -> list[Table]:
    head = Table(title="memgate gateway", show_header=False)
    head.add_column("", style="bold")
    head.add_column("")
    head.add_row("target", s["target"])
    head.add_row("health", s["health"])
    if "embedder" not in s:
        head.add_row("stats", "master only (pass --agent master and its key)")
        return [head]
    head.add_row("embedder / shards", f"{s['embedder']} / {s['shards']}")
    if s.get("languages_sampled"):
        shares = ", ".join(f"{k} {v:.0%}" for k, v in sorted(s["languages"].items()))
        head.add_row("stored languages", f"{shares} (of {s['languages_sampled']} sampled)")
    if s.get("embedder_advice"):
        head.add_row("[bold yellow]embedder[/]", f"[yellow]{s['embedder_advice']}[/]")
    head.add_row("vectors", str(s["vectors"]))
    head.add_row("journal pending / applied", f"{s['journal_pending']} / {s['journal_applied']}")
    head.add_row("apply lag", f"{s['apply_lag_seconds']:.1f} s")
    cache = s["recall_cache"]
    head.add_row("recall cache hits / misses", f"{cache['hits']} / {cache['misses']}")
    head.add_row("breakers", ", ".join(f"{k} {v}" for k, v in sorted(s["breakers"].items())))
    review = s.get("review")
    if review:
        n = review["proposals_pending"]
        head.add_row(
            "proposals pending",
            f"{'at least ' if n >= LISTED else ''}{n} (oldest "
            f"{_human_age(review['oldest_pending_age_seconds'])})",
        )
        head.add_row("quarantine queue", str(review["quarantine_queue"]))
    counts = Table(title="memories")
    counts.add_column("layer")
    for status in STATUSES:
        counts.add_column(status, justify="right")
    layers: dict[str, dict[str, int]] = {}
    for key, n in s["memories"].items():
        layer, _, status = key.partition("/")
        layers.setdefault(layer, {})[status] = n
    for layer, by_status in sorted(layers.items()):
        counts.add_row(layer, *(str(by_status.get(x, 0)) for x in STATUSES))
    return [head, counts]


def run_status(args: argparse.Namespace) -> int:
    from gateway.client import GatewayClient, GatewayError, Unauthenticated, Unavailable

    try:
        tls = tls_of(args)
        client = GatewayClient(
            args.target,
            agent_id=args.agent,
            api_key=secret(args, "api-key", "MEMGATE_API_KEY", "memgate status"),
            timeout=5.0,
            retries=0,
            **tls,
        )
    except (OSError, ValueError) as exc:
        print(f"memgate status: {exc}", file=sys.stderr)
        return 2
    with client:
        try:
            report = gather(client, args.target)
        except Unauthenticated as exc:
            print(
                f"memgate at {args.target}: credentials refused ({exc}); pass --api-key (or "
                "MEMGATE_API_KEY) and --agent, and the client certificate if it asks for one",
                file=sys.stderr,
            )
            return 1
        except Unavailable as exc:
            hint = "is `memgate serve` running?"
            if not tls["root_certificates"]:
                hint += " If it serves TLS, pass --tls-ca"
            print(f"memgate at {args.target}: not reachable ({exc}); {hint}", file=sys.stderr)
            return 1
        except GatewayError as exc:
            print(f"memgate at {args.target}: {exc}", file=sys.stderr)
            return 1
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        console = Console(soft_wrap=False, width=None if sys.stdout.isatty() else PIPED_WIDTH)
        for table in tables(report):
            console.print(table)
    return 0
