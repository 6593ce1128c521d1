"""The slot rules on hand-written phrasings the truth benchmark's templates never use
(``bench/slot_phrasings.py``): the floor under today's figures, and the wrong slots the held-out
set revealed (a team move read as a new home, a bought laptop as a car)."""

from __future__ import annotations

import json

import pytest

from bench import slot_phrasings as sp
from gateway.core.truth import slots


@pytest.mark.parametrize(("name", "recall"), [("dev", 0.75), ("heldout", 0.95)])
def test_phrasings_supersede_without_false_supersedes(name: str, recall: float) -> None:
    data = json.loads(sp.SETS[name].read_text(encoding="utf-8"))
    s = sp.score([sp.rules(c, data["namespace"]) for c in data["cases"]])
    assert s["false_supersede"] == 0.0
    assert s["supersede_recall"] >= recall, s
    assert s["wrong_value"] == 0.0


@pytest.mark.parametrize(
    ("text", "attribute", "value"),
    [
        ("Maria moved to the Risk team.", "team", "risk"),
        ("Maria bought a new laptop.", None, None),
        ("Maria bought a Volvo last month.", "vehicle", "volvo"),
        ("Alice got a new number: 555-0199.", "phone", "555-0199"),
        ("Reach Alice at alice@new.example from now on.", "email", "alice@new.example"),
        ("用户的丈夫在腾讯工作。", None, None),  # where he works, not who he is
        ("I graduated and I'm a data scientist now.", "role", "data scientist"),
        ("Alice's brother moved to Paris, he lives there now.", None, None),  # not Alice
    ],
)
def test_phrasing_slots(text: str, attribute: str | None, value: str | None) -> None:
    slot = slots.parse(text, "user/alice")
    if attribute is None:
        assert slot is None or slot.subject != "user", slot
    else:
        assert slot is not None and (slot.attribute, slot.value) == (attribute, value), slot
