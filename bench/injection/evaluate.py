"""Detection and false-positive rates of the injection screen on the corpus halves (issue 33 M5).

    python -m bench.injection.evaluate            # both halves, figures only
    python -m bench.injection.evaluate --tune -v  # the tuning half's misses and false positives
    python -m bench.injection.evaluate --screen use-multilingual  # rules + the embedder screen

Report the test half; look only at the tuning half while changing rules."""

from __future__ import annotations

import argparse
import asyncio
from dataclasses import dataclass

from bench.injection.corpus import halves
from gateway.core.ports.injection_screen import RULES_ONLY, InjectionScreen
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


def measure(split: str, screen: InjectionScreen = RULES_ONLY) -> Figures:
    """The rules, then ``screen`` on what they let through, as the gateway screens a write."""
    attacks, benign = halves()[split]

    def flagged(texts: list[str]) -> list[bool]:
        rules = [bool(find(t)) for t in texts]
        second = asyncio.run(
            screen.find([t for t, hit in zip(texts, rules, strict=True) if not hit])
        )
        more = iter(second)
        return [hit or bool(next(more)) for hit in rules]

    misses = [a for a, hit in zip(attacks, flagged(attacks), strict=True) if not hit]
    fps = [b for b, hit in zip(benign, flagged(benign), strict=True) if hit]
    return Figures(len(attacks), len(attacks) - len(misses), len(benign), len(fps), misses, fps)


def wired_screen(kind: str) -> InjectionScreen:
    """The second screen as ``gateway/wiring.py`` builds it for ``injection_embedder = kind``."""
    from gateway.embedding.hashed import HashEmbedder
    from gateway.settings import Settings
    from gateway.wiring import build_injection_screen

    return build_injection_screen(
        Settings(embedder="hash", injection_embedder=kind), HashEmbedder()
    )


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--tune", action="store_true", help="only the tuning half")
    p.add_argument("-v", action="store_true", help="list misses and false positives")
    p.add_argument("--screen", default="", help="injection_embedder: use-multilingual | ''")
    args = p.parse_args()
    screen = wired_screen(args.screen) if args.screen else RULES_ONLY
    for split in ("tune",) if args.tune else ("tune", "test"):
        f = measure(split, screen)
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
