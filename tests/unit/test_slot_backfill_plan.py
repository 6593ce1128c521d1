"""Slotting facts that have none (``truth/backfill.py``): the newest statement of a single-valued
slot ends up current whatever order the facts come in, the older values stay in the history of
one memory, restatements merge, look-alikes and facts without a slot stay as they are, a weaker
contradiction waits for review, and slotting what was slotted changes nothing."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from gateway.core.model.models import Layer, Memory, Status
from gateway.core.truth import backfill
from gateway.core.truth import validity as vd

NS = "user/alice"
T0 = datetime(2026, 1, 1, tzinfo=UTC)
NOW = datetime(2026, 6, 1, tzinfo=UTC)


def fact(i: int, text: str, days: int, confidence: float = 1.0) -> Memory:
    at = T0 + timedelta(days=days)
    return Memory(
        id=f"m{i}",
        namespace=NS,
        layer=Layer.SEMANTIC,
        content=text,
        confidence=confidence,
        created_at=at,
        updated_at=at,
        metadata={vd.VALID_FROM_KEY: at.isoformat()},
    )


def current(plan: backfill.Plan) -> dict[str, Memory]:
    """The last version of each memory the plan stores."""
    return {m.id: m for m in plan.puts}


def test_a_chain_of_updates_leaves_the_newest_current_in_one_memory() -> None:
    facts = [
        fact(3, "Alice moved to Munich.", 60),
        fact(1, "Alice lives in Berlin.", 0),
        fact(2, "Alice now lives in Hamburg.", 30),
    ]
    plan = backfill.plan(facts, {}, NOW)
    last = current(plan)
    assert last["m1"].status is Status.ACTIVE and vd.value_of(last["m1"]) == "munich"
    assert [vd.value_of(m) for m in plan.puts if m.id == "m1"] == ["berlin", "hamburg", "munich"]
    for later in ("m2", "m3"):
        assert last[later].status is Status.SUPERSEDED
        assert (later, "m1") in plan.aliases
    assert set(plan.indexed) == {"m1"} and set(plan.dropped) == {"m2", "m3"}
    assert plan.slotted == 3


def test_a_stored_holder_is_superseded_by_a_newer_fact_and_outlives_an_older_one() -> None:
    holder = fact(9, "Alice lives in Paris.", 30).with_changes(
        fact_key="slot:user:residence",
        metadata={vd.SLOT_KEY: "user:residence", vd.VALUE_KEY: "paris"},
    )
    older = fact(1, "Alice lives in Berlin.", 0)
    newer = fact(2, "Alice lives in Rome.", 90)
    plan = backfill.plan([newer, older], {"slot:user:residence": holder}, NOW)
    last = current(plan)
    assert last["m1"].status is Status.SUPERSEDED  # older than the holder: history only
    assert last["m9"].content == "Alice lives in Rome." and last["m9"].version == 2
    assert last["m2"].status is Status.SUPERSEDED and ("m2", "m9") in plan.aliases


def test_restatements_merge_and_look_alikes_and_notes_stay() -> None:
    facts = [
        fact(1, "用户不吃香菜", 0),
        fact(2, "Alice does not eat cilantro.", 5),
        fact(3, "Bob has two kids.", 0),
        fact(4, "Bob has two dogs.", 0),
        fact(5, "Kickoff notes are in the shared drive", 0),
    ]
    plan = backfill.plan(facts, {}, NOW)
    last = current(plan)
    assert last["m1"].status is Status.ACTIVE and vd.value_of(last["m1"]) == "no"
    assert last["m2"].status is Status.SUPERSEDED and ("m2", "m1") in plan.aliases
    assert last["m3"].status is last["m4"].status is Status.ACTIVE
    assert last["m3"].fact_key != last["m4"].fact_key
    assert "m5" not in last  # no slot the rules can tell: untouched


def test_a_weaker_contradiction_is_held_for_review() -> None:
    facts = [fact(1, "Alice works at Siemens.", 0), fact(2, "Alice works at Bosch.", 1, 0.4)]
    plan = backfill.plan(facts, {}, NOW)
    last = current(plan)
    assert last["m1"].status is Status.ACTIVE
    assert last["m2"].status is Status.QUARANTINED and "m2" in plan.dropped
    assert [item.memory_id for item in plan.conflicts] == ["m2"]


def test_slotting_twice_changes_nothing() -> None:
    facts = [fact(1, "Alice lives in Berlin.", 0), fact(2, "Alice now lives in Hamburg.", 30)]
    first = backfill.plan(facts, {}, NOW)
    again = backfill.plan(list(current(first).values()), {}, NOW)
    assert again.puts == [] and again.slotted == 0
