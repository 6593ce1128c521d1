"""Observations as retrieval keys (issue 27 item 5), bounded before building it: the long-dialogue
recall benchmark (``bench/recall_eval.py``) with the observations the rules form from each turn
added to what is written, two ways.

    python -m bench.observation_keys --keys append --backend embedded --gateway thread
    python -m bench.observation_keys --keys beside --backend embedded --gateway thread

``append``: each observation appended to its evidence turn's text (keyword and vector keys both).
``beside``: each written as a memory of its own that stands for its evidence turn — a hit on it
counts as the turn, each turn once per answer, the answer filled to k (asked for k + 15).
``none``: the benchmark as it is. The rules run in this process over each session, once per
speaker (the benchmark writes turns with ``BatchWrite``, so the gateway forms none itself). Every
other option is ``recall_eval``'s. Figures: docs/BENCHMARKS-HISTORY.md, "Observations on real
conversations"."""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from bench import recall_eval
from gateway.client import GatewayClient
from gateway.core.model.candidates import Observation
from gateway.core.model.models import Turn
from gateway.extractors.observe import observe

_turn_items = recall_eval.turn_items
EXTRA = 15  # more hits asked for with "beside", so k distinct turns are left


def observations(conv: dict[str, Any]) -> list[tuple[str, Observation]]:
    """(session id, observation) for every observation of every speaker of ``conv``."""
    out = []
    for session in conv["sessions"]:
        start = datetime.fromisoformat(session["date_time"]).replace(tzinfo=UTC)
        for who in conv["speakers"]:
            turns = [
                Turn(
                    t["id"],
                    "user" if t["speaker"] == who else "assistant",
                    t["text"],
                    at=start + i * recall_eval.TURN_SPACING,
                    metadata={"speaker": t["speaker"]},
                )
                for i, t in enumerate(session["turns"])
            ]
            out += [(f"{conv['id']}-s{session['session']}", o) for o in observe(turns)]
    return out


def appended(conv: dict[str, Any], namespace: str, content: str = "speaker") -> list[Any]:
    items = _turn_items(conv, namespace, content)
    extra: dict[str, list[str]] = {}
    for _, o in observations(conv):
        extra.setdefault(o.turn_ids[0], []).append(o.text)
    for item in items:
        more = extra.get(item["metadata"]["turn_id"])
        if more:
            item["content"] += "\n" + " ".join(more)
    return items


def beside(conv: dict[str, Any], namespace: str, content: str = "speaker") -> list[Any]:
    items = _turn_items(conv, namespace, content)
    for n, (session, o) in enumerate(observations(conv)):
        items.append(
            dict(
                namespace=namespace,
                layer="episodic",
                content=o.text,
                type="observation",
                session_id=session,
                event_time=o.event_time,
                metadata={"speaker": o.speaker, "turn_id": o.turn_ids[0]},
                idempotency_key=f"{namespace}/observation/{n}",
            )
        )
    return items


def ask_once_per_turn(
    client: GatewayClient,
    conv: dict[str, Any],
    namespace: str,
    ids: dict[str, str],
    run: recall_eval.Run,
) -> None:
    top = max(run.ks)
    for q in conv["questions"]:
        t0 = time.perf_counter()
        recall = client.recall(q["question"], namespaces=[namespace], top_k=top + EXTRA)
        run.latencies_ms.append((time.perf_counter() - t0) * 1000)
        got: list[str] = []
        for h in recall.hits:
            turn = ids.get(h.id) or h.metadata.get("turn_id", "")
            if turn not in got:
                got.append(turn)
        recall_eval._score(run, conv, q, got[:top])


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    keys = "none"
    if "--keys" in args:
        at = args.index("--keys")
        keys = args[at + 1]
        del args[at : at + 2]
    if keys == "append":
        recall_eval.turn_items = appended
    elif keys == "beside":
        recall_eval.turn_items = beside
        recall_eval.ask = ask_once_per_turn
    elif keys != "none":
        sys.exit("--keys none|append|beside")
    return recall_eval.main(args)


if __name__ == "__main__":
    sys.exit(main())
