"""Slot matching on hand-written phrasings the truth benchmark's templates never use
(``bench/truth/phrasings-*.json``): for each (stored fact, later statement) pair, does the later
one supersede (``kind=update``: it must) or leave the stored fact alone (``kind=lookalike``: it
must)? Compares the slot rules with the embedder-based alternative the issue asked to measure:
the two texts' cosine (raw, and with the stored value and the later statement's names and
numbers masked) above a threshold meaning "same slot".

    python -m bench.slot_phrasings                       # rules, both sets
    python -m bench.slot_phrasings --embedder minilm     # + the embedder variant's sweep
"""

from __future__ import annotations

import argparse
import json
import re
from dataclasses import dataclass
from pathlib import Path

from gateway.core.truth import slots

SETS = {
    "dev": Path(__file__).parent / "truth" / "phrasings-v1.json",
    "heldout": Path(__file__).parent / "truth" / "phrasings-heldout.json",
}
_NAMES_AND_NUMBERS = re.compile(r"(?<!^)\b[A-Z][\w@.-]*|\d[\w-]*|[\w.]+@[\w.]+")
_SUBJECTS = {"Alice", "Bob", "Carol", "I"}


@dataclass(frozen=True)
class Outcome:
    kind: str
    superseded: bool
    wrong_value: bool  # superseded with another value than the statement's


def rules(case: dict[str, str], namespace: str) -> Outcome:
    old = slots.parse(case["old"], namespace)
    new = slots.parse(case["new"], namespace)
    sup = bool(old and new and old.key == new.key and old.value != new.value)
    want = case.get("value", "")
    wrong = bool(sup and want and new is not None and new.value != slots.canonical(want))
    return Outcome(case["kind"], sup, wrong)


def score(outcomes: list[Outcome]) -> dict[str, float]:
    updates = [o for o in outcomes if o.kind == "update"]
    looks = [o for o in outcomes if o.kind == "lookalike"]
    return {
        "updates": len(updates),
        "lookalikes": len(looks),
        "supersede_recall": sum(o.superseded for o in updates) / max(1, len(updates)),
        "false_supersede": sum(o.superseded for o in looks) / max(1, len(looks)),
        "wrong_value": sum(o.wrong_value for o in updates) / max(1, len(updates)),
    }


def embedder_sweep(cases: list[dict[str, str]], namespace: str, kind: str) -> list[str]:
    from gateway.embedding.factory import build_embedder

    emb = build_embedder(kind)
    rows = []
    for c in cases:
        old = slots.parse(c["old"], namespace)
        if old is None:
            continue
        masked_old = re.sub(re.escape(old.value), "something", c["old"], flags=re.I)
        masked_new = _NAMES_AND_NUMBERS.sub(
            lambda m: m.group(0) if m.group(0) in _SUBJECTS else "something", c["new"]
        )
        v = emb.embed([c["old"], c["new"], masked_old, masked_new])
        rows.append((c["kind"], float(v[0] @ v[1]), float(v[2] @ v[3])))
    out = []
    n_up = sum(1 for r in rows if r[0] == "update")
    n_look = len(rows) - n_up
    for name, i in (("raw", 1), ("masked", 2)):
        for t in (0.55, 0.6, 0.65, 0.7, 0.75, 0.8):
            tp = sum(1 for r in rows if r[0] == "update" and r[i] >= t)
            fp = sum(1 for r in rows if r[0] == "lookalike" and r[i] >= t)
            out.append(
                f"  {kind} {name:6} cos>={t:.2f}: supersede recall {tp / n_up:.2f}, "
                f"false supersede {fp / n_look:.2f}"
            )
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--set", choices=[*SETS, "all"], default="all")
    ap.add_argument("--embedder", default="", help="also sweep this embedder (minilm, …)")
    ap.add_argument("--show", action="store_true", help="print every case the rules miss")
    args = ap.parse_args(argv)
    for name, path in SETS.items():
        if args.set not in (name, "all") or not path.exists():
            continue
        data = json.loads(path.read_text(encoding="utf-8"))
        ns = data["namespace"]
        outcomes = [rules(c, ns) for c in data["cases"]]
        s = score(outcomes)
        print(
            f"{name} ({s['updates']:.0f} updates, {s['lookalikes']:.0f} look-alikes) rules: "
            f"supersede recall {s['supersede_recall']:.2f}, false supersede "
            f"{s['false_supersede']:.2f}, wrong value {s['wrong_value']:.2f}"
        )
        if args.show:
            for c, o in zip(data["cases"], outcomes, strict=True):
                if o.superseded != (c["kind"] == "update") or o.wrong_value:
                    print(f"  miss [{c['kind']}] {c['old']} -> {c['new']}")
        if args.embedder:
            print("\n".join(embedder_sweep(data["cases"], ns, args.embedder)))


if __name__ == "__main__":
    main()
