"""The blind knowledge-update set (issue 44): 320 cases written by someone who never read the
slot rules, the vocabulary or ``bench/truth_cases.py`` — half English, half Chinese; updates
written and said in dialogue, corrections, chains of three, look-alikes that must both stay
(other person, other object, multi-valued), as-of questions. Scored once per design round,
never tuned on (``bench/truth/blind-v1.json``; its ``about`` says how answers are read).

    python -m bench.truth_blind --backend both [--json out.json] [--show-wrong]

Each case runs through the public client in a namespace of its own, as a user would: a written
step is ``write(semantic, event_time=day, wait)``, a dialogue step is its turns in a session of
their own (``append_turn(at=day)``, ``end_session(wait)``). Then the case's question is asked
with ``recall`` over every layer (what an agent asks), ``top_k`` 5.

* resolved — the top hit holds an answer word and no stale word (update-type cases);
* stale first — the top hit holds a stale word;
* false supersede — a look-alike case whose written steps did not all stay active as written;
* look-alike answered — the top hit of a look-alike case holds its answer word;
* as-of — ``recall(as_of=day)``'s top hit holds the answer word of then.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import uuid
from collections import Counter, defaultdict
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from bench.serving import real_servers
from gateway.client import GatewayClient
from gateway.client.errors import NotFound
from gateway.rpc.server import serve_in_thread
from gateway.settings import DEFAULT_EMBEDDER, Settings

DATA = Path(__file__).resolve().parent / "truth" / "blind-v1.json"
DAY0 = datetime(
    2023, 1, 2, 9, 0, tzinfo=UTC
)  # every step in the past (turns cannot be dated ahead)
UPDATES = ("update_written", "update_dialogue", "correction", "chain3", "as_of")
LOOKALIKES = ("lookalike_person", "lookalike_object", "multivalued")


def _has(text: str, words: list[str]) -> bool:
    low = text.lower()
    return any(w.lower() in low for w in words)


def _active(client: GatewayClient, mid: str, text: str) -> bool:
    try:
        m = client.get(mid)
    except NotFound:
        return False
    return m.status == "active" and m.content == text


def run_case(client: GatewayClient, case: dict[str, Any]) -> dict[str, Any]:
    ns = f"user/{case['namespace_user']}-{uuid.uuid4().hex[:10]}"
    written: list[tuple[str, str]] = []
    speaker = case["namespace_user"].capitalize()  # who says the dialogue turns
    for n, step in enumerate(case["steps"]):
        at = DAY0 + timedelta(days=step["day"])
        if step["how"] == "written":
            written.append(
                (client.write(ns, "semantic", step["text"], event_time=at, wait=True), step["text"])
            )
            continue
        session = f"s{n}"
        for i, turn in enumerate(step["turns"]):
            client.append_turn(
                ns, session, role=step.get("role", "user"), content=turn,
                at=at + timedelta(minutes=i), metadata={"speaker": speaker},
            )  # fmt: skip
        client.end_session(ns, session, wait=True)
    expect = case["expect"]
    hits = client.recall(case["question"], [ns], top_k=5)
    top = hits[0].content if hits else ""
    out: dict[str, Any] = {
        "id": case["id"],
        "category": case["category"],
        "lang": case["lang"],
        "dialogue": any(s["how"] == "dialogue" for s in case["steps"]),
        "top": top,
        "right": _has(top, expect["answer_words"]) and not _has(top, expect["stale_words"]),
        "stale_first": bool(expect["stale_words"]) and _has(top, expect["stale_words"]),
    }
    if case["category"] in LOOKALIKES:
        out["kept"] = all(_active(client, mid, text) for mid, text in written)
    as_of = []
    for q in case.get("as_of", []):
        then = client.recall(
            q["question"], [ns], top_k=5, as_of=DAY0 + timedelta(days=q["day"], hours=12)
        )
        as_of.append(bool(then.hits) and _has(then.hits[0].content, q["answer_words"]))
    out["as_of"] = as_of
    return out


def score(results: list[dict[str, Any]]) -> dict[str, Any]:
    t: Counter[str] = Counter()
    for r in results:
        cat, lang = r["category"], r["lang"]
        if cat in UPDATES:
            t["updates"] += 1
            t["resolved"] += r["right"]
            t["stale_first"] += r["stale_first"]
            t[f"updates:{lang}"] += 1
            t[f"resolved:{lang}"] += r["right"]
            if r["dialogue"]:
                t[f"dialogue:{lang}"] += 1
                t[f"dialogue_resolved:{lang}"] += r["right"]
        else:
            t["lookalikes"] += 1
            t["false_supersede"] += not r["kept"]
            t["lookalike_right"] += r["right"]
        t["as_of"] += len(r["as_of"])
        t["as_of_right"] += sum(r["as_of"])
    by_cat: dict[str, list[bool]] = defaultdict(list)
    for r in results:
        by_cat[f"{r['category']}:{r['lang']}"].append(r["right"])

    def frac(a: str, b: str) -> float | None:
        return round(t[a] / t[b], 3) if t[b] else None

    return {
        "cases": len(results),
        "supersede_recall": frac("resolved", "updates"),
        "stale_first": frac("stale_first", "updates"),
        "false_supersede": frac("false_supersede", "lookalikes"),
        "lookalike_answered": frac("lookalike_right", "lookalikes"),
        "as_of": frac("as_of_right", "as_of"),
        "resolved_en": frac("resolved:en", "updates:en"),
        "resolved_zh": frac("resolved:zh", "updates:zh"),
        "dialogue_resolved_en": frac("dialogue_resolved:en", "dialogue:en"),
        "dialogue_resolved_zh": frac("dialogue_resolved:zh", "dialogue:zh"),
        "by_category": {k: f"{sum(v)}/{len(v)}" for k, v in sorted(by_cat.items())},
    }


def run(
    backend: str, embedder: str, limit: int = 0, data: Path = DATA
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    cases = json.loads(data.read_text())["cases"][: limit or None]
    with tempfile.TemporaryDirectory(prefix="memgate-blind-") as tmp:
        settings = Settings(
            host="127.0.0.1", port=0, data_dir=Path(tmp), embedder=embedder,
            recall_cache_ttl_s=0.0, wait_timeout_s=120.0, recall_processes=0,
            working_slow_ms=0.0, graph_slow_ms=0.0, **real_servers(backend),
        )  # fmt: skip
        with (
            serve_in_thread(settings) as address,
            GatewayClient(address, agent_id="master", timeout=120) as c,
        ):
            results = []
            for n, case in enumerate(cases, 1):
                results.append(run_case(c, case))
                if n % 40 == 0:
                    print(f"  {backend}: {n}/{len(cases)} cases", flush=True)
    return score(results), results


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--backend", choices=["embedded", "real", "both"], default="embedded")
    ap.add_argument("--embedder", default=DEFAULT_EMBEDDER, help="default: the gateway's default")
    ap.add_argument("--limit", type=int, default=0, help="first N cases (a smoke run)")
    ap.add_argument(
        "--data", default=str(DATA), help="another set in this format (truth/recency-dev.json)"
    )
    ap.add_argument("--json", default="")
    ap.add_argument("--show-wrong", action="store_true")
    args = ap.parse_args(argv)
    out: dict[str, Any] = {}
    for backend in ("embedded", "real") if args.backend == "both" else (args.backend,):
        fig, results = run(backend, args.embedder, args.limit, Path(args.data))
        out[backend] = fig
        print(f"== {backend} ({args.embedder}, {fig['cases']} blind cases)")
        for k, v in fig.items():
            if k != "by_category":
                print(f"  {k:<22} {v}")
        print("  " + "  ".join(f"{k} {v}" for k, v in fig["by_category"].items()))
        if args.show_wrong:
            for r in results:
                if not r["right"]:
                    print(f"  wrong {r['id']}: {r['top'][:100]!r}")
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=2, ensure_ascii=False) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
