"""Mixed concurrent traffic (bounded: 8 agents x 40 calls, loopback): no call fails, and every
acknowledged write is there afterwards, events exactly once."""

from __future__ import annotations

import random
import time
from concurrent.futures import ThreadPoolExecutor

from tests.e2e.conftest import RunningGateway


def test_mixed_concurrent_traffic(gw: RunningGateway, ns: str) -> None:
    def agent(n: int) -> list[tuple[str, str]]:
        rng = random.Random(n)
        written: list[tuple[str, str]] = []
        with gw.client() as c:
            for i in range(40):
                op = rng.random()
                if op < 0.35:
                    layer = rng.choice(["episodic", "semantic"])
                    text = f"agent {n} note {i} about topic {rng.randint(0, 9)}"
                    written.append((layer, c.write(ns, layer, text, wait=rng.random() < 0.5)))
                elif op < 0.6:
                    c.recall(f"topic {rng.randint(0, 9)}", namespaces=[ns], top_k=5)
                elif op < 0.8:
                    c.append_turn(ns, f"s{n}", role="user", content=f"turn {i}")
                elif op < 0.9:
                    c.timeline(ns, limit=20)
                else:
                    c.window(ns, f"s{n}")
        return written

    with ThreadPoolExecutor(max_workers=8) as pool:
        written = [w for ws in pool.map(agent, range(8)) for w in ws]
    with gw.client() as c:
        deadline = time.monotonic() + 60
        while c.stats().journal_pending:
            assert time.monotonic() < deadline, "the journal never drained"
            time.sleep(0.05)
        for _, mid in written:
            assert c.get(mid).id  # NotFound here would be a lost acknowledged write
        events = {mid for layer, mid in written if layer == "episodic"}
        assert sorted(e.id for e in c.timeline(ns, limit=1000)) == sorted(events)
