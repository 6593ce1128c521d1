"""Recall in Chinese, in English and across the two (issue 34), through the public client.

``bench/multilingual/bilingual-v1.json``: six people, 30 facts each, written by hand in both
languages — as a short third-person fact and as a first-person chat turn with small talk around
it — and one paraphrased question per fact in each language (180 facts, 360 questions). Each
condition stores one person's 30 facts (or turns) in a namespace of their own and asks the 30
questions; a question is answered when its fact is the top hit (R@1) or in the top 5 (R@5).

Conditions: ``en→en``, ``zh→zh``, ``en→zh`` (an English question, facts stored in Chinese),
``zh→en``, and ``mixed`` (half the facts stored in each language, every question asked in
both), each for short facts (semantic layer) and chat turns (episodic, with the speaker). Beside
the gateway, in the same run: the embedder alone (exact cosine over the same 30 texts), so the
fusion's effect is read off directly.

The six people are split in two: ``dev`` (the first three) is what weights and analyzers were
chosen on, ``test`` (the last three) is held out; ``--split all`` reports both together.
``--misses`` prints every question whose fact is not the top hit, with the hit above it.

    python -m bench.multilingual_eval [--embedder minilm|use-multilingual|hash] [--backend both]
        [--split dev|test|all] [--misses]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from bench.serving import real_servers
from gateway.settings import DEFAULT_EMBEDDER

DATA = Path(__file__).parent / "multilingual" / "bilingual-v1.json"
CONDITIONS = ("en→en", "zh→zh", "en→zh", "zh→en", "mixed")
FORMS = ("fact", "turn")
#: the people weights are tuned on (dev) and the ones held out (test)
SPLITS = {"dev": slice(0, 3), "test": slice(3, 6), "all": slice(0, None)}


@dataclass(frozen=True, slots=True)
class Asked:
    condition: str
    form: str
    language: str  # the question's
    rank: int  # 1-based rank of the right fact in the gateway's answer (0: not in the top 5)
    alone: int  # ... in the embedder's own exact ranking
    question: str = ""
    expected: str = ""
    top: str = ""  # the gateway's top hit


def load(path: Path = DATA) -> list[dict[str, Any]]:
    return json.loads(path.read_text())["personas"]  # type: ignore[no-any-return]


def stored_text(fact: dict[str, Any], form: str, language: str) -> str:
    return str(fact[language] if form == "fact" else fact[f"turn_{language}"])


def plan(persona: dict[str, Any], condition: str) -> tuple[dict[str, str], list[tuple[str, str]]]:
    """(fact id → the language it is stored in, [(fact id, question language)])."""
    facts = [f["id"] for f in persona["facts"]]
    if condition == "mixed":
        stored = {fid: ("zh" if n % 2 else "en") for n, fid in enumerate(facts)}
        asks = [(q["fact"], lang) for q in persona["questions"] for lang in ("en", "zh")]
        return stored, asks
    q_lang, f_lang = condition.split("→")
    return {fid: f_lang for fid in facts}, [(q["fact"], q_lang) for q in persona["questions"]]


def run_persona(
    client: Any, embedder: Any, persona: dict[str, Any], condition: str, form: str
) -> list[Asked]:
    stored, asks = plan(persona, condition)
    by_id = {f["id"]: f for f in persona["facts"]}
    questions = {(q["fact"], lang): q[lang] for q in persona["questions"] for lang in ("en", "zh")}
    ns = f"user/{persona['id']}{uuid.uuid4().hex[:8]}"
    texts = {fid: stored_text(by_id[fid], form, lang) for fid, lang in stored.items()}
    items = []
    for fid, text in texts.items():
        item: dict[str, Any] = {
            "namespace": ns,
            "content": text,
            "metadata": {"fact": fid},
            "importance": 0.6,  # every one is kept: none is small talk
        }
        if form == "fact":
            item["layer"] = "semantic"
        else:
            name = persona["name_zh"] if stored[fid] == "zh" else persona["name_en"]
            item.update(layer="episodic", session_id="s1", metadata={"fact": fid, "speaker": name})
        items.append(item)
    ids = client.batch_write(items, wait=True)
    fact_of = dict(zip(ids, texts, strict=True))
    fids = list(texts)
    vectors = np.asarray(embedder.embed([texts[f] for f in fids]))
    out = []
    for fid, lang in asks:
        q = questions[(fid, lang)]
        hits = client.recall(q, namespaces=[ns], top_k=5)
        got = [fact_of.get(h.id, "") for h in hits]
        rank = got.index(fid) + 1 if fid in got else 0
        scores = vectors @ np.asarray(getattr(embedder, "embed_queries", embedder.embed)([q]))[0]
        order = [fids[i] for i in np.argsort(-scores)[:5]]
        alone = order.index(fid) + 1 if fid in order else 0
        top = texts.get(got[0], "") if got else ""
        out.append(Asked(condition, form, lang, rank, alone, q, texts[fid], top))
    return out


def run(
    backend: str = "embedded",
    embedder: str = "minilm",
    personas: int = 0,
    conditions: Sequence[str] = CONDITIONS,
    forms: Sequence[str] = FORMS,
    split: str = "all",
    **overrides: Any,
) -> dict[str, Any]:
    from gateway.client import GatewayClient
    from gateway.embedding import build_embedder
    from gateway.rpc.server import serve_in_thread
    from gateway.settings import Settings

    people = load()[SPLITS[split]][: personas or None]
    extra: dict[str, Any] = real_servers(backend)
    alone = build_embedder(embedder)
    asked: list[Asked] = []
    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings(port=0, data_dir=Path(tmp), embedder=embedder, **extra, **overrides)
        with serve_in_thread(settings) as address, GatewayClient(address, "master") as c:
            for form in forms:
                for condition in conditions:
                    for p in people:
                        asked += run_persona(c, alone, p, condition, form)
                    print(f"  {backend} {embedder}: {form} {condition}", file=sys.stderr)
    return {"backend": backend, "embedder": embedder, "table": table(asked), "asked": asked}


def table(asked: Sequence[Asked]) -> dict[str, dict[str, float]]:
    """(form, condition, question language) → R@1, R@5 for the gateway and the embedder alone."""
    groups: dict[str, list[Asked]] = {}
    for a in asked:
        key = f"{a.form} {a.condition}" + (f" ({a.language} q)" if a.condition == "mixed" else "")
        groups.setdefault(key, []).append(a)
    out = {}
    for key, rows in groups.items():
        n = len(rows)
        out[key] = {
            "n": n,
            "r1": round(100 * sum(r.rank == 1 for r in rows) / n, 1),
            "r5": round(100 * sum(r.rank > 0 for r in rows) / n, 1),
            "alone_r1": round(100 * sum(r.alone == 1 for r in rows) / n, 1),
            "alone_r5": round(100 * sum(r.alone > 0 for r in rows) / n, 1),
        }
    return out


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--backend", choices=["embedded", "real", "both"], default="embedded")
    ap.add_argument("--embedder", default=DEFAULT_EMBEDDER)
    ap.add_argument("--personas", type=int, default=0, help="first N people only (0: all)")
    ap.add_argument("--forms", default=",".join(FORMS))
    ap.add_argument("--conditions", default=",".join(CONDITIONS))
    ap.add_argument("--split", choices=list(SPLITS), default="all")
    ap.add_argument("--misses", action="store_true", help="print the questions not answered first")
    ap.add_argument("--set", action="append", default=[], help="a setting, e.g. w_lexical=0.1")
    args = ap.parse_args(argv)
    overrides = {k: float(v) for k, v in (s.split("=", 1) for s in args.set)}
    for backend in ["embedded", "real"] if args.backend == "both" else [args.backend]:
        r = run(
            backend,
            args.embedder,
            args.personas,
            args.conditions.split(","),
            args.forms.split(","),
            args.split,
            **overrides,
        )
        if args.misses:
            for a in r["asked"]:
                if a.rank != 1:
                    print(f"[{a.form} {a.condition} rank {a.rank or '>5'}] {a.question}")
                    print(f"    want: {a.expected}\n    got:  {a.top}")
        print(f"\n{backend}, {args.embedder}, {args.split}: R@1 / R@5, gateway | embedder alone")
        for key, v in r["table"].items():
            print(
                f"  {key:<22} n={v['n']:<4} {v['r1']:5.1f} / {v['r5']:5.1f}   |"
                f" {v['alone_r1']:5.1f} / {v['alone_r5']:5.1f}"
            )


if __name__ == "__main__":
    main()
