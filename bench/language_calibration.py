"""Fit the ``e5-multilingual`` embedder's calibration (``gateway/embedding/language_calibration.py``)
on the dev people of ``bench/multilingual/bilingual-v1.json`` and write it to
``gateway/embedding/e5_calibration.json``.

Stored texts: each dev person's 30 facts and 30 chat turns, in English and in Chinese.
Queries: their 30 questions in each language, names masked as recall masks them
(``query_text.dense_text``). The mean is taken over all of them; the language shift over the
unrelated (question, text) pairs of one person. The held-out people are never read.

    python -m bench.language_calibration [--check]   # --check: fit and compare, write nothing
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

from bench.multilingual_eval import SPLITS, load
from gateway.core.recall.query_text import dense_text
from gateway.embedding.e5_multilingual import CALIBRATION, E5MultilingualEmbedder
from gateway.embedding.language_calibration import Calibration, fit

VERSION = "lang-v1"


def fitted(embedder: E5MultilingualEmbedder) -> Calibration:
    docs: list[tuple[str, str, str]] = []  # text, language, person
    answers: dict[tuple[str, str], set[int]] = {}
    for person in load()[SPLITS["dev"]]:
        for fact in person["facts"]:
            for form in ("", "turn_"):
                for lang in ("en", "zh"):
                    answers.setdefault((person["id"], fact["id"]), set()).add(len(docs))
                    docs.append((fact[f"{form}{lang}"], lang, person["id"]))
    asked = [
        (dense_text(q[lang]), lang, person["id"], answers[(person["id"], q["fact"])])
        for person in load()[SPLITS["dev"]]
        for q in person["questions"]
        for lang in ("en", "zh")
    ]
    dv = embedder.raw([t for t, _, _ in docs])
    qv = embedder.raw([t for t, _, _, _ in asked], query=True)
    return fit(
        [(dv[i], lang, who) for i, (_, lang, who) in enumerate(docs)],
        [(qv[i], lang, who, ans) for i, (_, lang, who, ans) in enumerate(asked)],
        VERSION,
    )


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--check", action="store_true", help="fit and compare with the shipped file")
    args = ap.parse_args(argv)
    print("embedding the dev people's texts with multilingual-e5-small ...", file=sys.stderr)
    embedder = E5MultilingualEmbedder(calibration=_placeholder())
    new = fitted(embedder)
    print(f"shift: {new.shift}")
    if args.check:
        old = Calibration.load(CALIBRATION)
        print(f"shipped: {old.shift}; mean max |diff| {np.abs(old.mean - new.mean).max():.2e}")
        return
    new.save(CALIBRATION)
    print(f"wrote {CALIBRATION}")


def _placeholder() -> Calibration:
    """A no-op calibration to reach the model's raw vectors before any file exists."""
    zero = {q: {d: 0.0 for d in ("en", "zh")} for q in ("en", "zh")}
    return Calibration(np.zeros(384, dtype=np.float32), zero, "none")


if __name__ == "__main__":
    main()
