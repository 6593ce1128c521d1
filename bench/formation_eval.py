"""Memory-formation benchmark: the rule extractor over the long multi-session dialogues
(longdialog-v1), measured against their ground-truth facts.

    python -m bench.formation_eval --data bench/dialogues/longdialog-v1.json [--backend real]

Through the public client: every turn of a session is appended to the conversation's
``user/<conv>`` namespace (role user, the speaker in the turn's metadata: facts are about whoever
said them), EndSession(wait) after each session, then the memories formation wrote are read back
(found through the audit log, read with Get). Reported:

* extraction precision / recall — every candidate the extractor yields per session (the same
  code the gateway runs, applied to the same turns) against the stable ground-truth facts
  (attribute / preference / constraint); recall counts facts with at least one right candidate;
* promotion precision — formed semantic memories that match a stable fact (a one-off "passing"
  mention, a third party's fact, reported speech, a question, a hypothetical, a past habit or a
  joke promoted counts against it);
* promotion recall — of the facts said in at least two sessions (promotable), those formed.

``candidates_matching_distractors`` counts, per distractor type, the candidates whose speaker and
value are those of a labelled non-fact (bench/dialogues/distractors.py); ``--wrong`` lists every
wrong candidate and formed memory.

A candidate matches a fact when the speaker is its subject, the key is of a compatible kind and
the values share their content words (either way round); a fact's changed / added values count.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import sys
import tempfile
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.serving import real_servers
from gateway.client import GatewayClient
from gateway.core.model.candidates import slug
from gateway.core.model.models import Turn
from gateway.extractors.rules import RuleExtractor
from gateway.rpc.server import serve_in_thread
from gateway.settings import Settings

STABLE = ("attribute", "preference", "constraint")
#: our key kind -> the benchmark's keys it may stand for
KINDS: dict[str, tuple[str, ...]] = {
    "diet": ("diet",),
    "allergy": ("allergy",),
    "avoids": ("diet", "allergy"),
    "home_city": ("home_city",),
    "hometown": ("home_city",),
    "job": ("job",),
    "employer": ("job",),
    "pet": ("pet",),
    "likes": ("fav_food", "drink", "hobby"),
    "dislikes": ("dislike_food",),
    "favourite": ("fav_food", "drink", "hobby"),
    "hobby": ("hobby",),
    "learning": ("language",),
    "speaks": ("language",),
    "plays": ("instrument",),
    "commute": ("commute",),
}
_STOP = {"a", "an", "the", "my", "called", "named", "of", "to", "and", "now"}


def words(text: str) -> set[str]:
    return {w for w in re.findall(r"[\w']+", text.lower()) if w not in _STOP}


def compatible(kind: str, rel: str, gt_key: str, value: str = "") -> bool:
    if kind == "family":
        return gt_key == f"{rel}_name"
    if kind == "taste":  # "likes X" / "dislikes X" (rules.py: one key for both)
        kind = "dislikes" if value.startswith(("dislikes", "不喜欢")) else "likes"
    return gt_key in KINDS.get(kind, ())


def thing(value: str) -> str:
    """A taste's value without its polarity: "dislikes pho" -> "pho"."""
    return re.sub(r"^(?:dis)?likes\s+|^不?喜欢", "", value)


def values_of(fact: dict[str, Any]) -> list[str]:
    extra = [c["value"] for c in fact.get("changed", []) + fact.get("added", [])]
    zh = [fact["value_zh"]] if fact.get("value_zh") else []
    return [fact["value"], *zh, *extra]


def same_value(a: str, b: str) -> bool:
    wa, wb = words(a), words(b)
    return bool(wa and wb) and (wa <= wb or wb <= wa)


def match(key: str, value: str, facts: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The ground-truth fact a (key, value) stands for, if any."""
    parts = key.split(".")
    subject, kind, rel = parts[0], parts[1], parts[2] if len(parts) > 2 else ""
    for f in facts:
        if slug(f["subject"]) != subject or not compatible(kind, rel, f["key"], value):
            continue
        if any(same_value(thing(value), v) for v in values_of(f)):
            return f
    return None


def distractor(key: str, value: str, facts: list[dict[str, Any]]) -> str:
    """The type of the labelled non-fact a (key, value) was drawn from ("" = none): said by the
    candidate's subject, with the same value (whatever key it was filed under)."""
    subject = key.split(".")[0]
    for f in facts:
        if f["type"] in STABLE or slug(f.get("mentioned_by", f["subject"])) != subject:
            continue
        if any(same_value(thing(value), v) for v in values_of(f)):
            return str(f["type"])
    return ""


def sessions_of(turn_ids: list[str]) -> set[str]:
    return {t.split(":")[0] for t in turn_ids}


def promotable(f: dict[str, Any]) -> bool:
    """Said in two sessions at least (one value, or one changed value)."""
    if f["type"] not in STABLE:
        return False
    groups = [f["stated"] + f["restated"]] + [c["turns"] for c in f.get("changed", [])]
    return any(len(sessions_of(g)) >= 2 for g in groups)


@dataclass
class Tally:
    candidates: int = 0
    candidates_right: int = 0
    candidates_passing: int = 0
    candidates_distractor: Counter[str] = field(default_factory=Counter)
    candidates_wrong: list[str] = field(default_factory=list)
    facts: int = 0
    facts_found: int = 0
    formed: int = 0
    formed_right: int = 0
    formed_wrong: list[str] = field(default_factory=list)
    promotable: int = 0
    promotable_formed: int = 0
    turns: int = 0
    seconds: float = 0.0

    def add(self, other: Tally) -> None:
        for name, value in vars(other).items():
            setattr(self, name, getattr(self, name) + value)

    def report(self) -> dict[str, Any]:
        def ratio(a: int, b: int) -> float:
            return round(a / b, 3) if b else 0.0

        return {
            "extraction_precision": ratio(self.candidates_right, self.candidates),
            "extraction_recall": ratio(self.facts_found, self.facts),
            "promotion_precision": ratio(self.formed_right, self.formed),
            "promotion_recall": ratio(self.promotable_formed, self.promotable),
            "candidates": self.candidates,
            "candidates_matching_passing_mentions": self.candidates_passing,
            "candidates_matching_distractors": dict(sorted(self.candidates_distractor.items())),
            "stable_facts": self.facts,
            "formed": self.formed,
            "formed_wrong": self.formed_wrong[:20],
            "promotable_facts": self.promotable,
            "turns": self.turns,
            "turns_per_s": round(self.turns / self.seconds, 1) if self.seconds else 0.0,
        }


def extraction(conv: dict[str, Any], tally: Tally) -> None:
    stable = [f for f in conv["facts"] if f["type"] in STABLE]
    found: set[int] = set()
    seen: set[tuple[str, str]] = set()
    extractor = RuleExtractor()
    for session in conv["sessions"]:
        turns = [
            Turn(t["id"], "user", t["text"], metadata={"speaker": t["speaker"]})
            for t in session["turns"]
        ]
        for c in asyncio.run(extractor.extract(turns)):
            if (c.key, c.pending_key) in seen:
                continue
            seen.add((c.key, c.pending_key))
            tally.candidates += 1
            f = match(c.key, c.value, stable)
            if f is not None:
                tally.candidates_right += 1
                found.add(id(f))
            else:
                kind = distractor(c.key, c.value, conv["facts"])
                tally.candidates_passing += kind == "passing"
                if kind:
                    tally.candidates_distractor[kind] += 1
                tally.candidates_wrong.append(
                    f"{conv['id']} {c.key} = {c.value} ({kind or '?'}; {c.confidence}) <- {c.quote}"
                )
    tally.facts += len(stable)
    tally.facts_found += len(found)


def formation(client: GatewayClient, conv: dict[str, Any], tally: Tally) -> None:
    ns = f"user/{conv['id']}-{uuid.uuid4().hex[:6]}"
    start = time.perf_counter()
    for session in conv["sessions"]:
        sid = f"D{session['session']}"
        for t in session["turns"]:
            meta = {"speaker": t["speaker"], "turn": t["id"]}
            client.append_turn(ns, sid, role="user", content=t["text"], metadata=meta)
            tally.turns += 1
        client.end_session(ns, sid, wait=True)
    tally.seconds += time.perf_counter() - start
    ids = {
        e.target for e in client.audit("memgate.formation", ns, limit=1000) if e.action == "form"
    }
    stable = [f for f in conv["facts"] if f["type"] in STABLE]
    formed_facts: set[int] = set()
    for mem in (client.get(i) for i in sorted(ids)):
        if mem.status != "active":
            continue
        key, value = mem.metadata["memgate.formed.key"], mem.metadata["memgate.formed.value"]
        tally.formed += 1
        f = match(key, value, stable)
        if f is None:
            tally.formed_wrong.append(f"{conv['id']} {key} = {value}")
        else:
            tally.formed_right += 1
            formed_facts.add(id(f))
    todo = [f for f in stable if promotable(f)]
    tally.promotable += len(todo)
    tally.promotable_formed += sum(id(f) in formed_facts for f in todo)


def run(data: Path, backend: str, limit: int = 0, wrong: bool = False) -> dict[str, Any]:
    convs = json.loads(data.read_text())["conversations"][: limit or None]
    extra: dict[str, Any] = real_servers(backend)
    tally = Tally()
    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings(
            port=0,
            data_dir=Path(tmp),
            embedder="hash",
            formation_idle_s=0,
            formation_every_turns=0,
            working_slow_ms=0,
            graph_slow_ms=0,
            **extra,
        )
        with serve_in_thread(settings) as address, GatewayClient(address, "master") as client:
            for conv in convs:
                part = Tally()
                extraction(conv, part)
                formation(client, conv, part)
                tally.add(part)
    report = {"dataset": data.name, "backend": backend, "conversations": len(convs)}
    report.update(tally.report())
    if wrong:
        report["candidates_wrong"] = tally.candidates_wrong
        report["formed_wrong"] = tally.formed_wrong
    return report


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data", type=Path, default=Path("bench/dialogues/longdialog-v1.json"))
    p.add_argument("--backend", choices=["embedded", "real", "both"], default="embedded")
    p.add_argument("--limit", type=int, default=0, help="first N conversations only")
    p.add_argument("--wrong", action="store_true", help="list every wrong candidate and memory")
    args = p.parse_args(argv)
    for backend in ("embedded", "real") if args.backend == "both" else (args.backend,):
        r = run(args.data, backend, args.limit, args.wrong)
        print(json.dumps(r, ensure_ascii=False, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
