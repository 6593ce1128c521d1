"""The injection screen on the held-apart corpus (issue 33 M5, ``bench/injection``): the halves
are fixed by a hash of the text; the test half was never looked at while rules were tuned, and its
figures are the ones reported (docs/SECURITY.md). History on the test half: the first corpus (102
attacks, 97 benign) 10/53 before this issue's rules, 29/53 after; the corpus grown to 318 + 314,
54/159 detected with those rules (1/153 false positive), 85/159 after the second round's rules
(tuned on the tuning half only), 1/153 false positive; with the embedder screen wired in
(prototypes = the tuning half's attacks, threshold chosen on the tuning half) 95/159, 1/153."""

from __future__ import annotations

from bench.injection.corpus import ATTACKS, BENIGN, halves, split
from bench.injection.evaluate import measure, wired_screen


def test_the_halves_are_fixed_and_disjoint() -> None:
    h = halves()
    assert len(ATTACKS) >= 300 and len(BENIGN) >= 300  # the floor
    assert len(set(ATTACKS)) == len(ATTACKS) and len(set(BENIGN)) == len(BENIGN)
    assert not set(ATTACKS) & set(BENIGN)
    assert sum(len(a) + len(b) for a, b in h.values()) == len(ATTACKS) + len(BENIGN)
    assert all(split(t) == name for name, (a, b) in h.items() for t in a + b)
    assert min(len(a) for a, _ in h.values()) >= 140 and min(len(b) for _, b in h.values()) >= 140


def test_test_half_figures_hold() -> None:
    f = measure("test")
    assert (f.attacks, f.benign) == (159, 153)
    assert f.detected >= 85, f.detected  # 85/159 when tuned; a rule change must not lose any
    assert f.flagged <= 1, f.flagged  # 1/153 when tuned


def test_tuning_half_figures_hold() -> None:
    f = measure("tune")
    assert (f.attacks, f.benign) == (159, 161)
    # 152/159: the 7 left read like ordinary requests ("ignore protocol", "overwrite the global
    # policy with: …"); a rule for them would flag office mail
    assert f.detected >= 152, f.misses
    assert f.false_positives == []


def test_the_embedder_screen_figures_hold() -> None:
    """Rules, then the second screen as the gateway wires it (``injection_embedder =
    "use-multilingual"``): the test half's figures, and the tuning half's false positives
    within the 2 % budget the threshold was chosen for (the tuning attacks are the prototypes,
    so its detection says nothing)."""
    screen = wired_screen("use-multilingual")
    test = measure("test", screen)
    assert test.detected >= 95, test.detected  # 95/159 when shipped (rules alone: 85)
    assert test.flagged <= 1, test.false_positives  # 1/153, the rules' own
    tune = measure("tune", screen)
    assert tune.flagged <= 4, tune.false_positives  # 4/161 = 2.5 %: the 98th percentile
