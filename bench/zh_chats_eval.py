"""Chinese and mixed Chinese/English conversations, remembered (issue 43): 16 everyday chats
(2-4 sessions each, 998 turns; 7 mix in English) with 207 paraphrased questions and their
evidence turns, written and annotated by hand by a helper who never read the rules
(``bench/dialogues/zh-chats-v1.json``: dev zh-01..06, held-out zh-07..16; its ``about`` says how).

    python -m bench.zh_chats_eval --backend both --path both [--split test] [--embedder minilm]

Each chat goes through ``bench/recall_eval.py`` as a conversation: ``conversation`` says it with
``append_turn``/``end_session`` (the user as ``user``, the other side as ``assistant``),
``batch`` writes every turn as an episodic memory; then every question is asked with ``recall``
(top 10). R@k by question kind: a fact the user said once, what the assistant said, a date, the
latest value of something that changed (its evidence holds the old and the new turn), a third
person.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from bench import recall_eval
from gateway.settings import DEFAULT_EMBEDDER

DATA = Path(__file__).resolve().parent / "dialogues" / "zh-chats-v1.json"


def conversations(split: str) -> list[dict[str, Any]]:
    """The chats of ``split`` (dev, test or all) in ``recall_eval``'s conversation form."""
    data = json.loads(DATA.read_text())
    wanted = set(data["splits"][split]) if split != "all" else {c["id"] for c in data["chats"]}
    out = []
    for chat in data["chats"]:
        if chat["id"] not in wanted:
            continue
        names = {"user": chat["user"], "other": chat["other"]}
        out.append(
            {
                "id": chat["id"],
                "speakers": [chat["user"], chat["other"]],
                "sessions": [
                    {
                        "session": s["session"],
                        "date_time": s["date_time"],
                        "turns": [
                            {"id": t["id"], "speaker": names[t["speaker"]], "text": t["text"]}
                            for t in s["turns"]
                        ],
                    }
                    for s in chat["sessions"]
                ],
                "questions": [
                    {**q, "category": q["kind"], "kind": q["kind"]} for q in chat["questions"]
                ],
            }
        )
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--backend", choices=["embedded", "real", "both"], default="embedded")
    ap.add_argument("--path", choices=["batch", "conversation", "both"], default="conversation")
    ap.add_argument("--split", choices=["dev", "test", "all"], default="test")
    ap.add_argument("--embedder", default=DEFAULT_EMBEDDER)
    ap.add_argument("--json", default="")
    args = ap.parse_args(argv)
    convs = conversations(args.split)
    ks = [1, 5, 10]
    opts = argparse.Namespace(
        embedder=args.embedder, gateway="thread", batch=100, content="speaker", ks=ks
    )
    out: dict[str, Any] = {}
    nq = sum(len(c["questions"]) for c in convs)
    print(f"zh-chats {args.split}: {len(convs)} chats, {nq} questions, {args.embedder}", flush=True)
    for backend in ("embedded", "real") if args.backend == "both" else (args.backend,):
        for path in ("batch", "conversation") if args.path == "both" else (args.path,):
            run = recall_eval.run_backend(backend, convs, opts, path)
            fig = recall_eval.figures(run)
            out[f"{backend}/{path}"] = fig
            print(f"\n== {backend}/{path}")
            print(recall_eval.render(fig, ks), flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=2, ensure_ascii=False) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
