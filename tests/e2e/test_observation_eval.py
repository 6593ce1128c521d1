"""Observations on real conversations (bench/observation_eval.py), with floors: the rules on the
hand-annotated chats (dev and held-out test split), and the same chats replayed through the
gateway on both backends form what the rules form. Full figures: docs/BENCHMARKS-HISTORY.md."""

from __future__ import annotations

import pytest

from bench.observation_eval import run


def test_rules_on_real_chats_hold_their_floor() -> None:
    dev, test, test2 = run("dev"), run("test"), run("test2")
    assert dev["turns"] >= 420 and dev["annotated"] >= 350, dev
    # measured (round 3, 34 dev chats): dev 0.85 / 0.62, held-out 0.72 / 0.54, quiet 0.94 / 0.91
    assert dev["precision"] >= 0.82 and dev["recall"] >= 0.6, dev
    assert test["precision"] >= 0.68 and test["recall"] >= 0.5, test
    assert dev["quiet_turns_quiet"] >= 0.9 and test["quiet_turns_quiet"] >= 0.85, (dev, test)
    # the second held-out split (12 chats annotated after round 4's rules were written, scored
    # blind once: 0.80 / 0.55, quiet 0.90)
    assert test2["annotated"] >= 90 and test2["precision"] >= 0.76 and test2["recall"] >= 0.5, test2


def test_relative_dates_are_resolved_in_the_dev_chats() -> None:
    """Every dated annotation of the first 24 dev chats that an observation finds has its date
    (measured 12/12); the widened split too, 16/16 since a time of day said in another sentence
    dates a plan (was 15/16)."""
    old, dev = run("dev", limit=24), run("dev")
    right, dated = map(int, old["dates_right"].split("/"))
    assert right == dated >= 12, old
    right, dated = map(int, dev["dates_right"].split("/"))
    assert right == dated >= 16, dev


@pytest.mark.parametrize("backend", ["embedded", pytest.param("real", marks=pytest.mark.real)])
def test_the_gateway_forms_what_the_rules_form(
    backend: str, request: pytest.FixtureRequest
) -> None:
    if backend == "real":  # the real servers must be there (never skipped in CI)
        request.getfixturevalue("redis_url")
        request.getfixturevalue("neo4j_uri")
    rules, served = run("test", limit=3), run("test", backend=backend, limit=3)
    assert served["formed"] == rules["formed"] > 0, (served, rules)
    assert served["precision"] == rules["precision"] and served["recall"] == rules["recall"]
    assert served["dates_right"] == rules["dates_right"]
