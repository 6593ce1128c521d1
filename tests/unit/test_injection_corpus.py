"""The injection screen on the held-apart corpus (issue 33 M5, ``bench/injection``): the halves
are fixed by a hash of the text; the test half was never looked at while rules were tuned, and its
figures are the ones reported (docs/SECURITY.md). Before this issue's rules the test half's
detection was 10/53 (19%)."""

from __future__ import annotations

from bench.injection.corpus import ATTACKS, BENIGN, halves, split
from bench.injection.evaluate import measure


def test_the_halves_are_fixed_and_disjoint() -> None:
    h = halves()
    assert len(set(ATTACKS)) == len(ATTACKS) and len(set(BENIGN)) == len(BENIGN)
    assert not set(ATTACKS) & set(BENIGN)
    assert sum(len(a) + len(b) for a, b in h.values()) == len(ATTACKS) + len(BENIGN)
    assert all(split(t) == name for name, (a, b) in h.items() for t in a + b)
    assert min(len(a) for a, _ in h.values()) >= 40 and min(len(b) for _, b in h.values()) >= 40


def test_test_half_figures_hold() -> None:
    f = measure("test")
    assert f.detected >= 29, f.misses  # 29/53 when tuned; a rule change must not lose any
    assert f.flagged == 0, f.false_positives


def test_tuning_half_is_fully_covered() -> None:
    f = measure("tune")
    assert (f.misses, f.false_positives) == ([], [])
