"""FormationTurnLedger contract: dialogue turns kept once each until mined, sessions due when
idle or busy, kept across a restart."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Protocol

from gateway.core.model.candidates import FORMED_IDS_KEPT
from gateway.core.model.models import Turn
from gateway.core.ports.control_ports import FormationTurnLedger
from tests.contract.ledger.opening import Opens, opened


class FormationTurnStore(FormationTurnLedger, Opens, Protocol):
    """A formation-transcript adapter as the suite opens it."""


async def test_turns_wait_to_be_mined_once(ledger: FormationTurnLedger) -> None:
    turns = [Turn(f"t{i}", "user", f"line {i}", metadata={"speaker": "Leo"}) for i in range(5)]
    await ledger.record_turns("user/a", "s1", turns[:3])
    await ledger.record_turns("user/a", "s1", turns)  # a replay: t0..t2 are not kept twice
    await ledger.record_turns("user/a", "s2", [Turn("x", "user", "other session")])
    got = await ledger.unformed_turns("user/a", "s1")
    assert [t.id for t in got.turns] == ["t0", "t1", "t2", "t3", "t4"]
    assert got.turns[0].metadata == {"speaker": "Leo"} and got.after == 0
    first = await ledger.unformed_turns("user/a", "s1", limit=2)
    assert [t.id for t in first.turns] == ["t0", "t1"]
    upto = await ledger.unformed_turns("user/a", "s1", first.upto)  # a job's range, all of it
    assert [t.id for t in upto.turns] == ["t0", "t1"] and upto.upto == first.upto
    await ledger.mark_formed("user/a", "s1", first.upto)
    rest = await ledger.unformed_turns("user/a", "s1")
    assert [t.id for t in rest.turns] == ["t2", "t3", "t4"] and rest.after == first.upto
    # up to a position: a job's range
    assert [t.id for t in (await ledger.unformed_turns("user/a", "s1", rest.upto)).turns][
        -1
    ] == "t4"
    await ledger.mark_formed("user/a", "s1", rest.upto)
    assert (await ledger.unformed_turns("user/a", "s1")).turns == []
    await ledger.mark_formed("user/a", "s1", first.upto)  # never goes back
    assert (await ledger.unformed_turns("user/a", "s1")).turns == []


async def test_a_turn_recorded_again_after_it_was_mined_is_kept_no_more(
    ledger: FormationTurnLedger,
) -> None:
    """A replay after mining (the journal re-applying a turn, a client retry) stores nothing:
    the mined rows are gone, their ids are not."""
    turns = [Turn(f"t{i}", "user", f"line {i}") for i in range(3)]
    await ledger.record_turns("user/a", "s1", turns)
    mined = await ledger.unformed_turns("user/a", "s1")
    await ledger.mark_formed("user/a", "s1", mined.upto)
    await ledger.record_turns("user/a", "s1", [*turns, Turn("t3", "user", "line 3")])
    again = await ledger.unformed_turns("user/a", "s1")
    assert [t.id for t in again.turns] == ["t3"] and again.after == mined.upto
    [due] = await ledger.due_sessions(time.time() + 1, 0, 10)
    assert (due.session_id, due.new_turns) == ("s1", 1)
    # per session: another session may hold a turn of the same id
    await ledger.record_turns("user/a", "s2", turns[:1])
    assert [t.id for t in (await ledger.unformed_turns("user/a", "s2")).turns] == ["t0"]


async def test_mined_turn_ids_are_remembered_up_to_a_bound(ledger: FormationTurnLedger) -> None:
    turns = [Turn(f"t{i}", "user", "x") for i in range(FORMED_IDS_KEPT + 1)]
    await ledger.record_turns("user/a", "s1", turns[:2])
    await ledger.mark_formed("user/a", "s1", (await ledger.unformed_turns("user/a", "s1")).upto)
    await ledger.record_turns("user/a", "s1", turns[2:])
    await ledger.mark_formed("user/a", "s1", (await ledger.unformed_turns("user/a", "s1")).upto)
    await ledger.record_turns("user/a", "s1", turns[:2])  # t0 is the oldest: forgotten
    assert [t.id for t in (await ledger.unformed_turns("user/a", "s1")).turns] == ["t0"]


async def test_due_sessions_idle_or_many_new_turns(ledger: FormationTurnLedger) -> None:
    await ledger.record_turns("user/a", "busy", [Turn(f"b{i}", "user", "x") for i in range(4)])
    await ledger.record_turns("user/a", "quiet", [Turn("q", "user", "x")])
    now = time.time()
    assert await ledger.due_sessions(now - 60, 0, 10) == []  # nobody idle, N off
    [busy] = await ledger.due_sessions(now - 60, 4, 10)
    assert (busy.session_id, busy.new_turns, busy.idle) == ("busy", 4, False)
    idle = {d.session_id: d for d in await ledger.due_sessions(now + 1, 0, 10)}
    assert set(idle) == {"busy", "quiet"} and idle["quiet"].idle
    await ledger.mark_formed("user/a", "quiet", idle["quiet"].upto)
    assert [d.session_id for d in await ledger.due_sessions(now + 1, 0, 10)] == ["busy"]


async def test_unmined_turns_survive_a_restart(
    make_ledger: Callable[[], FormationTurnStore],
) -> None:
    turns = [Turn(f"t{i}", "user", f"line {i}", metadata={"lang": "de"}) for i in range(3)]
    async with opened(make_ledger) as ledger:
        await ledger.record_turns("user/a", "s1", turns)
        first = await ledger.unformed_turns("user/a", "s1", limit=1)
        await ledger.mark_formed("user/a", "s1", first.upto)
    async with opened(make_ledger) as ledger:
        await ledger.record_turns("user/a", "s1", [*turns[1:], Turn("t3", "user", "line 3")])
        rest = await ledger.unformed_turns("user/a", "s1")
        assert [t.id for t in rest.turns] == ["t1", "t2", "t3"]  # t0 mined, t1, t2 kept once
        assert rest.after == first.upto and rest.turns[0].metadata == {"lang": "de"}
        [due] = await ledger.due_sessions(time.time() + 1, 0, 10)
        assert (due.session_id, due.new_turns, due.upto) == ("s1", 3, rest.upto)
