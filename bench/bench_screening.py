"""Latency of content screening (redaction + injection detection) per write (not a test).

    python bench/bench_screening.py

Times screen(), redact() and find_injection() on a 40-word English turn, a Chinese turn, a turn
full of personal data and a 4 KB mixed text; best of 5 runs, per call.
"""

from __future__ import annotations

import sys
import timeit
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from gateway.core import screening  # noqa: E402

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


def main() -> None:
    print(f"{'input':16s} {'chars':>6s} {'screen':>10s} {'redact':>10s} {'injection':>10s}")
    for name, text in (
        ("turn, English", TURN_EN),
        ("turn, Chinese", TURN_ZH),
        ("turn with PII", TURN_PII),
        ("4 KB mixed", TEXT_4K),
    ):
        n = 2000 if len(text) < 1000 else 200
        cells = []
        for fn in (screening.screen, screening.redact, screening.find_injection):
            timer = timeit.Timer(partial(fn, text))
            best = min(timer.repeat(number=n, repeat=5)) / n
            cells.append(f"{best * 1e6:8.1f}µs")
        print(f"{name:16s} {len(text):6d} " + " ".join(f"{c:>10s}" for c in cells))


if __name__ == "__main__":
    main()
