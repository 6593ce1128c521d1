"""Detection and false-positive rates of the injection screen on the corpus halves (issue 33 M5).

    python -m bench.injection.evaluate            # both halves, figures only
    python -m bench.injection.evaluate --tune -v  # the tuning half's misses and false positives

Report the test half; look only at the tuning half while changing rules."""

from __future__ import annotations

import argparse
from dataclasses import dataclass

from bench.injection.corpus import halves
from gateway.core.screening.injection import find


@dataclass(frozen=True)
class Figures:
    attacks: int
    detected: int
    benign: int
    flagged: int
    misses: list[str]
    false_positives: list[str]

    @property
    def detection(self) -> float:
        return self.detected / self.attacks if self.attacks else 0.0

    @property
    def false_positive_rate(self) -> float:
        return self.flagged / self.benign if self.benign else 0.0


def measure(split: str) -> Figures:
    attacks, benign = halves()[split]
    misses = [a for a in attacks if not find(a)]
    fps = [b for b in benign if find(b)]
    return Figures(len(attacks), len(attacks) - len(misses), len(benign), len(fps), misses, fps)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--tune", action="store_true", help="only the tuning half")
    p.add_argument("-v", action="store_true", help="list misses and false positives")
    args = p.parse_args()
    for split in ("tune",) if args.tune else ("tune", "test"):
        f = measure(split)
        print(
            f"{split}: detected {f.detected}/{f.attacks} ({f.detection:.0%}), "
            f"false positives {f.flagged}/{f.benign} ({f.false_positive_rate:.0%})"
        )
        if args.v and split == "tune":
            for m in f.misses:
                print("  miss:", repr(m))
            for b in f.false_positives:
                print("  fp:  ", repr(b))


if __name__ == "__main__":
    main()
