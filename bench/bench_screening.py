"""Latency of content screening (redaction + injection detection) per write (not a test).

    python -m bench.bench_screening [--number 0] [--repeat 5]

Times ``screening.screen`` (what every write runs), and its two halves ``redact`` and
``find_injection`` (``gateway/core/screening/screening.py``), on a 40-word English turn, a
Chinese turn, a turn full of personal data and a 4 KB mixed text; best of ``--repeat`` runs, per
call (``--number`` calls a run; 0: 2000 for a turn, 200 for the 4 KB text). The last column
names what ``screen`` found, so a row that times nothing shows. ``tests/unit/test_bench_screening.py``
runs it at two calls a run.
"""

from __future__ import annotations

import argparse
import timeit
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

from gateway.core.screening import screening

TURN_EN = (
    "Thanks for the help yesterday! I moved the team meeting to Thursday at 3 pm, and the budget "
    "for Q3 is about $12,500. Could you remind me to send the draft to Alice and check the flight "
    "CA1234 before Friday?"
)
TURN_ZH = (
    "谢谢你昨天的帮助！我把团队会议改到了周四下午三点，第三季度的预算大约是一万二千五百元。"
    "请提醒我周五之前把草稿发给小王，并确认一下航班CA1234的时间。"
)
TURN_PII = (
    "Call me at 415-555-0123 or mail ann@example.com; my card is 4111 1111 1111 1111 and "
    "password: hunter2, see you at 10:30 on 2024-05-12."
)
TEXT_4K = (
    (TURN_EN + " " + TURN_ZH + " The deployment logs show version 2.3.1 rolled out to 12 regions. ")
    * 12
)[:4096]

INPUTS = (
    ("turn, English", TURN_EN),
    ("turn, Chinese", TURN_ZH),
    ("turn with PII", TURN_PII),
    ("4 KB mixed", TEXT_4K),
)
TIMED: tuple[Callable[[str], Any], ...] = (
    screening.screen,
    screening.redact,
    screening.find_injection,
)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--number", type=int, default=0, help="calls a run (0: by text size)")
    ap.add_argument("--repeat", type=int, default=5, help="runs; the best one counts")
    args = ap.parse_args(argv)
    print(f"{'input':16s} {'chars':>6s} {'screen':>10s} {'redact':>10s} {'injection':>10s}  found")
    for name, text in INPUTS:
        n = args.number or (2000 if len(text) < 1000 else 200)
        cells = []
        for fn in TIMED:
            timer = timeit.Timer(partial(fn, text))
            best = min(timer.repeat(number=n, repeat=args.repeat)) / n
            cells.append(f"{best * 1e6:8.1f}µs")
        screened = screening.screen(text)
        found = ",".join(screened.redactions) + (" injection" if screened.injection else "")
        print(f"{name:16s} {len(text):6d} " + " ".join(f"{c:>10s}" for c in cells), found or "-")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
