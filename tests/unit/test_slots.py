"""Slots (``gateway/core/truth/slots.py``), validity (``truth/validity.py``) and the supersede rule
(``reconcile.prevails``): English and Chinese, updates, look-alikes, the namespace's own user."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from gateway.core.model.models import Layer, Memory, Status
from gateway.core.truth import reconcile
from gateway.core.truth import validity as vd
from gateway.core.truth.slots import parse

NS = "user/alice"


@pytest.mark.parametrize(
    ("text", "subject", "attribute", "value"),
    [
        ("Alice lives in Berlin.", "user", "residence", "berlin"),
        ("Alice moved to Hamburg last month; she lives there now.", "user", "residence", "hamburg"),
        ("用户已经搬到深圳了，现在住在深圳。", "user", "residence", "shenzhen"),
        ("I live in Lisbon now.", "user", "residence", "lisbon"),
        ("Bob has two kids.", "bob", "count:child", "2"),
        ("Bob now has three kids since the baby arrived.", "bob", "count:child", "3"),
        ("Frank现在有四个孩子了。", "frank", "count:child", "4"),
        ("Bob has two dogs.", "bob", "count:dog", "2"),
        ("用户不吃香菜", "user", "eats:cilantro", "no"),
        ("Alice does not eat cilantro (不吃香菜)", "user", "eats:cilantro", "no"),
        ("Alice's manager is now Priya.", "user", "manager", "priya"),
        ("用户的经理是王强。", "user", "manager", "王强"),
        ("用户对花生过敏", "user", "allergic:peanut", "yes"),
        ("Alice is no longer vegetarian.", "user", "diet", "not vegetarian"),
        ("Alice doesn't like jazz anymore.", "user", "likes:jazz", "no"),
        ("Dan不再喜欢爵士乐了。", "dan", "likes:jazz", "no"),
        ("用户最喜欢的颜色是绿色", "user", "favourite:colour", "green"),
        ("用户在一家医院做护士", "user", "role", "nurse"),
        ("Sorry, I meant Carol lives in Paris, not Rome.", "carol", "residence", "paris"),
        ("更正：小王住在北京，不是上海。", "小王", "residence", "beijing"),
    ],
)
def test_parse(text: str, subject: str, attribute: str, value: str) -> None:
    slot = parse(text, NS)
    assert slot is not None, text
    assert (slot.subject, slot.attribute, slot.value) == (subject, attribute, value)


@pytest.mark.parametrize(
    "text",
    [
        "Alice lives in Berlin and works at SAP.",  # two slots: no single one
        "Alice's company uses Salesforce",
        "What does Alice like?",
        "The meeting went well.",
    ],
)
def test_no_slot(text: str) -> None:
    assert parse(text, NS) is None


def test_keys_single_and_multi_valued() -> None:
    assert parse("Alice lives in Berlin.", NS).key == parse("用户住在上海。", NS).key  # type: ignore[union-attr]
    a, b = parse("Alice speaks French.", NS), parse("Alice speaks German.", NS)
    assert a and b and a.key != b.key  # each language its own fact
    kids, dogs = parse("Bob has two kids.", NS), parse("Bob has two dogs.", NS)
    assert kids and dogs and kids.key != dogs.key
    assert parse("Carol lives in Paris.", NS).key != parse("Dan lives in Paris.", NS).key  # type: ignore[union-attr]
    assert parse("Alice moved to Munich.", NS).cue and not parse("Alice lives in Munich.", NS).cue  # type: ignore[union-attr]


T0 = datetime(2026, 1, 1, tzinfo=UTC)


def _fact(
    value: str, day: int, version: int = 1, confidence: float = 1.0, cue: bool = False
) -> Memory:
    md = {
        vd.SLOT_KEY: "user:residence",
        vd.VALUE_KEY: value,
        vd.VALID_FROM_KEY: (T0 + timedelta(days=day)).isoformat(),
    }
    if cue:
        md[vd.UPDATE_CUE_KEY] = "1"
    return Memory(
        f"m{version}" if version > 1 else "m",
        "user/a",
        Layer.SEMANTIC,
        value,
        confidence=confidence,
        version=version,
        metadata=md,
        fact_key="slot:user:residence",
    )


def test_prevails() -> None:
    old = _fact("berlin", 0)
    assert reconcile.prevails(_fact("hamburg", 30), old)  # later, as sure
    assert not reconcile.prevails(_fact("hamburg", 30, confidence=0.5), old)
    assert reconcile.prevails(_fact("hamburg", 30, confidence=0.85, cue=True), old)
    assert not reconcile.prevails(_fact("hamburg", 30, confidence=0.5, cue=True), old)
    decided = _fact("hamburg", 30, confidence=0.1)
    decided.metadata[vd.DECIDED_KEY] = "master"
    assert reconcile.prevails(decided, old)


def test_decide_merges_same_value_and_holds_weaker_conflicts() -> None:
    old = _fact("berlin", 0)
    same = reconcile.decide(_fact("berlin", 10).with_changes(id="w2"), old, None)
    assert same.merged_into == "m" and same.version is not None
    assert same.version.metadata[vd.VALID_FROM_KEY] == T0.isoformat()  # began to hold at day 0
    weak = reconcile.decide(_fact("paris", 10, confidence=0.3).with_changes(id="w3"), old, None)
    assert weak.conflict is old and weak.version is not None
    assert weak.version.status is Status.QUARANTINED
    assert weak.version.metadata[vd.CONFLICTS_WITH_KEY] == "m"


def test_validity_timeline_and_as_of() -> None:
    v1 = _fact("berlin", 0)
    v2 = _fact("berlin", 0, version=2)  # restated: the same value holds on
    v3 = _fact("hamburg", 30, version=3)
    spans = vd.timeline([v1, v2, v3])
    assert spans[0].valid_to == T0 + timedelta(days=30) and spans[2].valid_to is None
    assert vd.at([v1, v2, v3], T0 + timedelta(days=5)) is v2
    assert vd.at([v1, v2, v3], T0 + timedelta(days=31)) is v3
    assert vd.at([v1, v2, v3], T0 - timedelta(days=1)) is None
    shown = vd.as_of([v1, v2, v3], T0 + timedelta(days=5))
    assert (
        shown is not None
        and shown.metadata[vd.VALID_TO_KEY] == (T0 + timedelta(days=30)).isoformat()
    )


def test_a_past_version_in_the_memory_block_says_until_when() -> None:
    from gateway.core.recall.scoring import line_for

    v1, v3 = _fact("berlin", 0), _fact("hamburg", 30, version=3)
    then = vd.as_of([v1, v3], T0 + timedelta(days=5))
    assert then is not None and line_for(then).endswith("· true until 2026-01-31] berlin")
    assert "until" not in line_for(v3)
