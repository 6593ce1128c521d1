"""The demo's outage act, on Redis + Neo4j (``scripts/demo-real.sh`` stops and starts Neo4j around
it): while a backend is down its breaker opens, recall still answers from what is up and names
what it skipped (``degraded``), and a write is still acknowledged — journaled, applied once the
backend is back. Then the breaker closes and the write made during the outage is recalled.

    python -m agents_demo.outage --target HOST:PORT --phase down --namespace user/demo-x
    python -m agents_demo.outage --target HOST:PORT --phase up --namespace user/demo-x
"""

from __future__ import annotations

import argparse
import sys
import time

from agents_demo.access import Access
from gateway.client import GatewayClient, GatewayError
from gateway.client_options import add_tls_options, tls_of

FACT = "During the outage the user said they moved their dinner to 20:00"


def _breakers(c: GatewayClient) -> str:
    return ", ".join(f"{b.layer} {b.state}" for b in c.breakers())


def down(c: GatewayClient, ns: str, wait_s: float) -> bool:
    """Neo4j is stopped: wait for its breaker to open, write, recall (degraded)."""
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        with_hits = c.recall("dinner", [ns], top_k=3)  # calls trip the breaker
        if any(b.state == "open" for b in c.breakers()):
            break
        time.sleep(0.5)
    print(f"  breakers: {_breakers(c)}")
    print(f"  recall still answers; it skipped: {with_hits.degraded or 'nothing'}")
    wrote = c.write_result(ns, "semantic", FACT)
    print(f"  write acknowledged at the journal ({wrote.id[:8]}…): applied when Neo4j is back")
    return any(b.state == "open" for b in c.breakers())


def up(c: GatewayClient, ns: str, wait_s: float) -> bool:
    """Neo4j is back: the breaker closes, the write made during the outage is recalled."""
    deadline = time.monotonic() + wait_s
    found = False
    while time.monotonic() < deadline:
        try:
            hits = c.recall("when is the user's dinner now?", [ns], top_k=3, layers=["semantic"])
            found = any("20:00" in h.content for h in hits) and not hits.degraded
        except GatewayError:
            found = False
        if found and all(b.state == "closed" for b in c.breakers()):
            break
        time.sleep(1)
    print(f"  breakers: {_breakers(c)}")
    said = "recalled: nothing was lost" if found else "NOT recalled yet"
    print(f"  the outage's write is {said}")
    c.forget_namespace(ns, reason="demo clean-up")
    return found


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m agents_demo.outage", description=__doc__)
    ap.add_argument("--target", required=True)
    ap.add_argument("--namespace", required=True)
    ap.add_argument("--phase", choices=["down", "up"], required=True)
    ap.add_argument("--api-keys", metavar="FILE")
    ap.add_argument("--wait", type=float, default=90.0, help="seconds to wait for a breaker")
    add_tls_options(ap)
    args = ap.parse_args(argv)
    access = Access.of(args.target, args.api_keys, tls_of(args))
    with access.client("master") as c:
        ok = (down if args.phase == "down" else up)(c, args.namespace, args.wait)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
