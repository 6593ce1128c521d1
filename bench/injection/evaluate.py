"""Detection and false-positive rates of the injection screen on the corpus halves (issue 33 M5).

    python -m bench.injection.evaluate            # both halves, figures only
    python -m bench.injection.evaluate --tune -v  # the tuning half's misses and false positives
    python -m bench.injection.evaluate --screen use-multilingual  # rules + the embedder screen
    python -m bench.injection.evaluate --heldapart --screen use-multilingual  # the blind set

``--heldapart``: ``data/heldapart-v2.json``, 358 attacks and 352 benign look-alikes in English,
Chinese and both, written by someone who never read the screen (issue 49). Scored once per
round, never tuned on: figures by language and family, no texts printed. A split attack (two
writes) counts as caught when either write is.

Report the test half; look only at the tuning half while changing rules."""

from __future__ import annotations

import argparse
import asyncio
import json
from dataclasses import dataclass
from pathlib import Path

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


HELDAPART = Path(__file__).resolve().parent / "data" / "heldapart-v2.json"


def heldapart(screen: InjectionScreen = RULES_ONLY) -> dict[str, object]:
    """Detection and false positives on the held-apart set, per language and family."""
    data = json.loads(HELDAPART.read_text())

    def caught(items: list[dict[str, str]]) -> list[bool]:
        texts = [t for it in items for t in it.get("parts") or [it["text"]]]
        rules = [bool(find(t)) for t in texts]
        second = iter(
            asyncio.run(screen.find([t for t, h in zip(texts, rules, strict=True) if not h]))
        )
        flags = iter([h or bool(next(second)) for h in rules])
        return [any(next(flags) for _ in it.get("parts") or [it["text"]]) for it in items]

    out: dict[str, object] = {}
    for name in ("attacks", "benign"):
        items = data[name]
        hits = caught(items)
        groups: dict[str, list[bool]] = {}
        for it, hit in zip(items, hits, strict=True):
            for key in (f"lang:{it['lang']}", f"family:{it['family']}"):
                groups.setdefault(key, []).append(hit)
        out[name] = {"n": len(items), "flagged": sum(hits)} | {
            k: f"{sum(v)}/{len(v)}" for k, v in sorted(groups.items())
        }
    return out


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
    p.add_argument("--heldapart", action="store_true", help="the blind held-apart set")
    args = p.parse_args()
    screen = wired_screen(args.screen) if args.screen else RULES_ONLY
    if args.heldapart:
        figures = heldapart(screen)
        for name, row in figures.items():
            assert isinstance(row, dict)
            print(f"{name}: flagged {row['flagged']}/{row['n']} ({row['flagged'] / row['n']:.1%})")
            print("  " + "  ".join(f"{k} {v}" for k, v in row.items() if ":" in k))
        return
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
