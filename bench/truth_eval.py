"""Knowledge-update benchmark: does the memory know what is true now?

    python -m bench.truth_eval [--backend embedded|real|both] [--per-kind N] [--embedder hash]

Every case of ``bench/truth_cases.py`` (seeded; English, Chinese, mixed) is written through the
public client into a namespace of its own (``wait``; event times a month apart where the case
states them), then read back. Reported per backend, with the floor beside it in the same run
(``fact_slots=False``: the gateway as it was before slots, dedup by similarity only):

* supersede recall — update cases where every stale write is no longer current (its id resolves
  to a memory whose content is the new value, or it is no longer active) and the last write is;
* stale first — update cases whose top recall hit is a stale value;
* false supersede — look-alike cases where one of the two facts did not stay active as written;
* merged — one fact in two languages stored once;
* as-of accuracy — recall ``as_of`` a date returns the version true then, first.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import uuid
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from bench.serving import real_servers
from bench.truth_cases import Case, generate
from gateway.client import GatewayClient
from gateway.client.errors import NotFound
from gateway.rpc.server import serve_in_thread
from gateway.settings import DEFAULT_EMBEDDER, Settings

DAY0 = datetime(2026, 1, 5, tzinfo=UTC)


def _ns(case: Case) -> str:
    return f"user/{'u' if case.user_ns else 'x'}{uuid.uuid4().hex[:12]}"


def _current(client: GatewayClient, mid: str) -> tuple[str, str]:
    try:
        m = client.get(mid)
    except NotFound:
        return "", ""
    return m.id, m.content if m.status == "active" else ""


def run_dialogue(
    client: GatewayClient, ns: str, case: Case, tally: Counter[str], wrong: list[str]
) -> None:
    """Each turn in a session of its own, ended with formation: the later value must be the
    one recalled, the earlier one in no active hit."""
    for n, text in enumerate(case.sessions):
        client.append_turn(ns, f"s{n}", role="user", content=text)
        client.end_session(ns, f"s{n}", wait=True)
    old, new = case.values
    hits = client.recall(case.question, [ns], top_k=5, layers=["semantic"])
    tally["update"] += 1
    tally[f"update:dialogue:{case.lang}"] += 1
    if hits and new in hits[0].content and not any(old in h.content for h in hits):
        tally["superseded"] += 1
        tally[f"superseded:dialogue:{case.lang}"] += 1
    else:
        wrong.append(f"dialogue not superseded: {case.sessions} -> {[h.content for h in hits]}")
    if hits and old in hits[0].content:
        tally["stale_first"] += 1
    if any(old in h.content for h in hits):
        tally["stale_in_top5"] += 1


def run_case(client: GatewayClient, case: Case, tally: Counter[str], wrong: list[str]) -> None:
    ns = _ns(case)
    if case.sessions:
        run_dialogue(client, ns, case, tally, wrong)
        return
    ids = []
    for text, day in case.writes:
        at = DAY0 + timedelta(days=day) if day is not None else None
        ids.append(client.write(ns, "semantic", text, event_time=at, wait=True))
    texts = [t for t, _ in case.writes]
    kind = case.kind
    if case.both:
        tally["lookalike"] += 1
        kept = all(_current(client, i) == (i, t) for i, t in zip(ids, texts, strict=True))
        if not kept:
            tally["false_supersede"] += 1
            wrong.append(f"false supersede [{kind}]: {texts}")
        return
    if case.same:
        tally["same"] += 1
        first, second = _current(client, ids[0])[0], _current(client, ids[1])[0]
        if first and first == second:
            tally["merged"] += 1
        else:
            wrong.append(f"not merged: {texts}")
        return
    tally["update"] += 1
    tally[f"update:{kind}:{case.lang}"] += 1
    assert case.current is not None
    new = texts[case.current]
    now = [_current(client, i)[1] for i in ids]
    resolved = now[case.current] == new and all(now[i] != texts[i] for i in case.stale)
    if resolved:
        tally["superseded"] += 1
        tally[f"superseded:{kind}:{case.lang}"] += 1
    else:
        wrong.append(f"not superseded [{kind}]: {texts} -> {now}")
    hits = client.recall(case.question, [ns], top_k=5, layers=["semantic"])
    stale = {texts[i] for i in case.stale}
    if hits and hits[0].content in stale:
        tally["stale_first"] += 1
    if any(h.content in stale for h in hits):
        tally["stale_in_top5"] += 1
    for day, expect in case.as_of:
        tally["as_of"] += 1
        then = client.recall(
            case.question, [ns], top_k=5, layers=["semantic"], as_of=DAY0 + timedelta(days=day)
        )
        if then and then[0].content == texts[expect]:
            tally["as_of_right"] += 1
        else:
            wrong.append(
                f"as_of day {day} [{kind}]: want {texts[expect]!r}, got "
                f"{[h.content for h in then][:2]}"
            )


def run(
    backend: str,
    per_kind: int = 0,
    embedder: str = "minilm",
    slots: bool = True,
    show_wrong: bool = False,
) -> dict[str, Any]:
    cases = generate(per_kind=per_kind)
    extra: dict[str, Any] = real_servers(backend)
    tally: Counter[str] = Counter()
    wrong: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings(
            port=0,
            data_dir=Path(tmp),
            embedder=embedder,
            fact_slots=slots,
            formation_idle_s=0,
            formation_every_turns=0,
            working_slow_ms=0,
            graph_slow_ms=0,
            **extra,
        )
        with serve_in_thread(settings) as address, GatewayClient(address, "master") as client:
            for n, case in enumerate(cases, 1):
                run_case(client, case, tally, wrong)
                if n % 50 == 0:
                    print(
                        f"  {backend}{'' if slots else ' (floor)'}: {n}/{len(cases)} cases",
                        file=sys.stderr,
                    )

    def ratio(a: str, b: str) -> float:
        return round(tally[a] / tally[b], 3) if tally[b] else 0.0

    report: dict[str, Any] = {
        "backend": backend,
        "slots": slots,
        "embedder": embedder,
        "cases": len(cases),
        "update_cases": tally["update"],
        "supersede_recall": ratio("superseded", "update"),
        "stale_first": ratio("stale_first", "update"),
        "stale_in_top5": ratio("stale_in_top5", "update"),
        "lookalike_cases": tally["lookalike"],
        "false_supersede": ratio("false_supersede", "lookalike"),
        "same_cases": tally["same"],
        "merged": ratio("merged", "same"),
        "as_of_questions": tally["as_of"],
        "as_of_accuracy": ratio("as_of_right", "as_of"),
        "supersede_recall_by_kind": {
            k.split(":", 1)[1]: round(tally["superseded:" + k.split(":", 1)[1]] / v, 3)
            for k, v in sorted(tally.items())
            if k.startswith("update:")
        },
    }
    if show_wrong:
        report["wrong"] = wrong
    return report


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--backend", choices=["embedded", "real", "both"], default="embedded")
    p.add_argument("--per-kind", type=int, default=0, help="reduced set: N cases per kind")
    p.add_argument("--embedder", default=DEFAULT_EMBEDDER)
    p.add_argument("--no-floor", action="store_true", help="skip the run without slots")
    p.add_argument("--wrong", action="store_true", help="list every case that went wrong")
    args = p.parse_args(argv)
    for backend in ("embedded", "real") if args.backend == "both" else (args.backend,):
        for slots in (True,) if args.no_floor else (True, False):
            r = run(backend, args.per_kind, args.embedder, slots, args.wrong)
            print(json.dumps(r, ensure_ascii=False, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
