"""Derives the CI fixture of the formation benchmark (tests/data/formation_dialogues.json) from
longdialog-v1: two conversations (one partly in Chinese), every session, with their ground-truth
facts. ``SESSIONS`` cuts the sessions (and the facts' turn lists) when set.

    python -m bench.formation_fixture   # rewrites the fixture byte for byte from the dataset
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from bench.dialogues.generate import load

CONVERSATIONS = ("conv-01", "conv-04")
SESSIONS = 0  # 0: every session


def _in(turns: list[str]) -> list[str]:
    return [t for t in turns if not SESSIONS or int(t[1:].split(":")[0]) <= SESSIONS]


def cut_fact(f: dict[str, Any]) -> dict[str, Any] | None:
    out = dict(f, stated=_in(f["stated"]), restated=_in(f["restated"]))
    out["changed"] = [dict(c, turns=_in(c["turns"])) for c in f["changed"] if _in(c["turns"])]
    if "added" in f:
        out["added"] = [dict(c, turns=_in(c["turns"])) for c in f["added"] if _in(c["turns"])]
    if not (out["stated"] or out["restated"] or out["changed"] or out.get("added")):
        return None
    return out


def derive(data: dict[str, Any]) -> dict[str, Any]:
    convs = []
    for c in data["conversations"]:
        if c["id"] not in CONVERSATIONS:
            continue
        sessions = [
            {**s, "turns": [{k: t[k] for k in ("id", "speaker", "text")} for t in s["turns"]]}
            for s in c["sessions"][: SESSIONS or None]
        ]
        facts = [f for f in (cut_fact(x) for x in c["facts"]) if f is not None]
        convs.append(
            {"id": c["id"], "speakers": c["speakers"], "sessions": sessions, "facts": facts}
        )
    return {
        "name": f"{data['name']} (formation fixture: conversations 1 and 4"
        + (f", sessions 1-{SESSIONS})" if SESSIONS else ")"),
        "source": f"bench/dialogues/generate.py --seed {data['seed']}; python -m bench.formation_fixture",
        "conversations": convs,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default="bench/dialogues/longdialog-v1.json")
    ap.add_argument("--out", default="tests/data/formation_dialogues.json")
    args = ap.parse_args(argv)
    text = json.dumps(derive(load(args.data)), ensure_ascii=False, indent=1)
    Path(args.out).write_text(text + "\n", encoding="utf-8")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
