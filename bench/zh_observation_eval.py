"""Observations formed from Chinese chats: precision and recall against the hand annotations of
``bench/dialogues/zh-chats-v1.json`` (every user turn annotated by a helper who never read the
rules: dev zh-01..06, held-out zh-07..16, scored once per round).

Words: jieba's, without the user's name, punctuation and function words. Recall: an annotated
observation is found when a formed one of the same turn holds at least half of its words and at
least a quarter of the formed one's words are the annotation's. Precision: a formed observation is
right when it finds an annotated one of its turn, or is part of one (two of its words at least,
and 60 % of them, are the annotation's) — the rules of ``bench/observation_eval.py``, in words.

    python -m bench.zh_observation_eval [--split dev|test|all] [-v]

Today's rules form no observation from a Chinese turn (English only); a first rule set for
Chinese was measured and left out (docs/BENCHMARKS-HISTORY.md, "Chinese observations, a first
try").
"""

from __future__ import annotations

import argparse
import json
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from gateway.core.model.candidates import Observation
from gateway.core.model.models import Turn, Zone
from gateway.extractors.observe import observe

DATA = Path(__file__).parent / "dialogues" / "zh-chats-v1.json"
_FUNCTION_WORDS = """
的 了 在 是 和 与 跟 也 都 就 还 又 很 太 挺 比较 一个 一些 一下 这个 那个 这 那 有 会 要
去 到 把 被 给 让 对 从 为 着 过 吧 呢 啊 呀 哈 嘛 吗 哦 嗯 啦 我 你 他 她 它 们
"""
_FUNCTION = frozenset(_FUNCTION_WORDS.split())
_PUNCT = re.compile(r"^[\W_]+$")


def words(text: str, name: str) -> set[str]:
    import jieba

    text = text.replace(name, " ")
    return {
        w.lower()
        for w in jieba.lcut(text)
        if w.strip() and not _PUNCT.match(w) and w not in _FUNCTION and not w.isdigit()
    }


def turns_of(chat: dict[str, Any]) -> list[Turn]:
    out = []
    for session in chat["sessions"]:
        start = datetime.fromisoformat(session["date_time"]).replace(tzinfo=UTC)
        for i, t in enumerate(session["turns"]):
            role = "user" if t["speaker"] == "user" else "assistant"
            name = chat["user"] if role == "user" else chat["other"]
            out.append(
                Turn(
                    t["id"],
                    role,
                    t["text"],
                    Zone.DIALOGUE,
                    start + timedelta(seconds=30 * i),
                    metadata={"speaker": name},
                )  # fmt: skip
            )
    return out


def score(chat: dict[str, Any], formed: list[Observation]) -> dict[str, Any]:
    name = chat["user"]
    gold = {o["turn"]: o["observations"] for o in chat["observations"]}
    by_turn: dict[str, list[Observation]] = {}
    for o in formed:
        by_turn.setdefault(o.turn_ids[0], []).append(o)
    right, wrong, found, missed = [], [], 0, 0
    for turn, annotated in gold.items():
        mine = [(o, words(o.text, name)) for o in by_turn.get(turn, [])]
        for a in annotated:
            aw = words(a, name)
            if any(len(aw & fw) >= len(aw) / 2 and len(aw & fw) >= len(fw) / 4 for _, fw in mine):
                found += 1
            else:
                missed += 1
        for o, fw in mine:
            ok = any(
                (lambda aw: (len(aw & fw) >= len(aw) / 2 and len(aw & fw) >= len(fw) / 4)
                 or (len(aw & fw) >= 2 and len(aw & fw) >= 0.6 * len(fw)))(words(a, name))
                for a in annotated
            )  # fmt: skip
            (right if ok else wrong).append((turn, o.text, annotated))
    return {"right": right, "wrong": wrong, "found": found, "missed": missed}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--split", choices=["dev", "test", "all"], default="dev")
    ap.add_argument("-v", action="store_true", help="print every wrong observation")
    args = ap.parse_args()
    data = json.loads(DATA.read_text())
    ids = set(data["splits"]["dev"] + data["splits"]["test"])
    if args.split != "all":
        ids = set(data["splits"][args.split])
    totals = {"right": 0, "wrong": 0, "found": 0, "missed": 0}
    for chat in data["chats"]:
        if chat["id"] not in ids:
            continue
        turns = turns_of(chat)
        got = score(chat, observe(turns, "user/" + chat["id"]))
        for k in ("found", "missed"):
            totals[k] += got[k]
        totals["right"] += len(got["right"])
        totals["wrong"] += len(got["wrong"])
        if args.v:
            for turn, text, gold in got["wrong"]:
                print(f"  {chat['id']} {turn}: {text}  | gold {gold}")
    formed = totals["right"] + totals["wrong"]
    annotated = totals["found"] + totals["missed"]
    p = totals["right"] / formed if formed else 0.0
    r = totals["found"] / annotated if annotated else 0.0
    print(
        f"{args.split}: formed {formed}, precision {p:.2f}, recall {r:.2f} ({annotated} annotated)"
    )


if __name__ == "__main__":
    main()
