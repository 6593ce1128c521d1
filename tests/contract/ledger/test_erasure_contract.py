"""ErasureLedger contract: what an erasure removes from the other areas' records — the text of
audit rows (also of rows that arrive after it), proposals, review reasons, pending facts, task
steps, formation turns — leaving who, when and what, and no copy in the adapter's files."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from gateway.core.model.commands import MemoryWrite
from gateway.core.model.control import ERASED_TEXT as ERASED
from gateway.core.model.control import ERASURE_SKEW_S, AuditEntry, Proposal, ReviewItem
from gateway.core.model.models import Layer, Turn
from gateway.core.ports.control_ports import (
    AliasLedger,
    AuditLedger,
    ErasureLedger,
    FormationTurnLedger,
    Ledger,
)
from stores.redis_ledger import RedisLedger
from tests.contract.ledger.opening import Opens, opened


class ErasedAudit(ErasureLedger, AuditLedger, AliasLedger, Protocol):
    """Erasure as the audit log sees it: rows naming a namespace, a memory or a write merged
    into it."""


class ErasedAuditStore(ErasedAudit, Opens, Protocol):
    """``ErasedAudit`` as the suite opens it."""


async def test_rows_queued_before_an_erasure_arrive_without_text(ledger: ErasedAudit) -> None:
    """Another replica queues audit rows for a quarter of a second (longer while the ledger is
    down): a row stamped before an erasure of its namespace, its memory or a write merged into
    it may reach the ledger after the scrub (a recall that returned the memory too). It arrives
    with its text erased, as if it had been there;
    a row stamped later than ``ERASURE_SKEW_S`` after the erasure keeps its text, and so does
    the record of an erasure. Retention forgets the erasures with the rows."""
    before = time.time() - 1
    await ledger.set_aliases([("w-merged", "m1")])
    await ledger.scrub_namespace("user/a")
    await ledger.scrub(["m1"])
    later = time.time() + ERASURE_SKEW_S + 5
    await ledger.audit(
        [
            AuditEntry("coder", "recall", "user/a", "", "where alice lives", at=before),
            AuditEntry("coder", "recall", "user/b,user/a", "", "alice and bob", at=before),
            AuditEntry("coder", "read", "user/c", "m1", "get m1", at=before),
            AuditEntry("coder", "read", "user/c", "w-merged", "get by write", at=before),
            AuditEntry("coder", "recall", "user/c", "", "found m1", at=before, hits=("m2", "m1")),
            AuditEntry("coder", "recall", "user/b", "", "about bob", at=before),
            AuditEntry("master", "forget_namespace", "user/a", "", "asked by alice", at=before),
            AuditEntry("coder", "recall", "user/a", "", "the new alice", at=later),
        ]
    )
    details = {e.detail for e in await ledger.query_audit("", "", 0.0, 20)}
    assert details == {ERASED, "about bob", "asked by alice", "the new alice"}
    assert len(await ledger.query_audit("coder", "", 0.0, 20)) == 7  # who and when stay

    assert await ledger.prune_audit(0.0) == 7  # all but the row stamped in the future
    await ledger.audit([AuditEntry("coder", "read", "user/c", "m1", "once more", at=before)])
    assert [e.detail for e in await ledger.query_audit("", "user/c", 0.0, 10)] == ["once more"]


async def test_erasing_a_memory_scrubs_the_recalls_that_returned_it(
    make_ledger: Callable[[], ErasedAuditStore],
) -> None:
    """Issue 33 L2: a recall's row keeps the ids it returned; erasing one of them (``scrub``)
    turns the query text into ``ERASED_TEXT`` and keeps the row; recalls that returned other
    memories keep their text, also after a restart; retention drops the ids with the rows."""
    old = time.time() - 3 * 86_400
    async with opened(make_ledger) as ledger:
        await ledger.audit(
            [
                AuditEntry("coder", "recall", "user/a", "", "alice's passport", hits=("m1",)),
                AuditEntry("coder", "recall", "user/a,user/b", "", "both", hits=("m2", "m1", "m3")),
                AuditEntry("coder", "recall", "user/a", "", "alice's diet", hits=("m2",)),
                AuditEntry("coder", "recall", "user/a", "", "nothing found"),
                AuditEntry("coder", "recall", "user/a", "", "long ago", at=old, hits=("m4",)),
            ]
        )
    async with opened(make_ledger) as ledger:
        await ledger.scrub(["m1"])

        async def texts() -> list[str]:
            rows = await ledger.query_audit("", "user/a", 0.0, 10)
            assert {(r.agent_id, r.action) for r in rows} == {("coder", "recall")}  # rows stay
            return sorted(r.detail for r in rows)

        scrubbed = await texts()
        assert scrubbed == sorted([ERASED, ERASED, "alice's diet", "nothing found", "long ago"])
        await ledger.scrub(["m1", "m3"])  # again: nothing changes
        assert await texts() == scrubbed
        assert await ledger.prune_audit(86_400) == 1
        await ledger.scrub(["m4"])  # its row went with retention
        assert [r.detail for r in await ledger.query_audit("", "user/b", 0.0, 10)] == [ERASED]


async def test_erasure_times_survive_a_restart(
    make_ledger: Callable[[], ErasedAuditStore],
) -> None:
    """A row queued before an erasure may arrive after the ledger restarted: it still loses
    its text."""
    before = time.time() - 1
    async with opened(make_ledger) as ledger:
        await ledger.set_aliases([("w-merged", "m1")])
        await ledger.scrub_namespace("user/a")
        await ledger.scrub(["m1"])
    async with opened(make_ledger) as ledger:
        await ledger.audit(
            [
                AuditEntry("coder", "recall", "user/a", "", "where alice lives", at=before),
                AuditEntry("coder", "read", "user/c", "w-merged", "get by write", at=before),
                AuditEntry("coder", "recall", "user/b", "", "about bob", at=before),
            ]
        )
        rows = await ledger.query_audit("", "", 0.0, 10)
        assert [e.detail for e in rows] == ["about bob", ERASED, ERASED]


class ErasedTurns(ErasureLedger, FormationTurnLedger, Protocol):
    """Erasure as the formation transcript sees it."""


async def test_erasure_drops_turns_waiting_to_be_mined(ledger: ErasedTurns) -> None:
    await ledger.record_turns(
        "user/a", "s1", [Turn("t1", "user", "pin 4711"), Turn("t2", "user", "hi")]
    )
    await ledger.record_turns("user/a", "s2", [Turn("t4", "user", "again")])
    await ledger.record_turns("user/b", "s1", [Turn("t3", "user", "bob here")])
    await ledger.scrub(["t1"])
    assert [t.id for t in (await ledger.unformed_turns("user/a", "s1")).turns] == ["t2"]
    await ledger.scrub_namespace("user/a")
    for session in ("s1", "s2"):
        assert (await ledger.unformed_turns("user/a", session)).turns == []
    due = await ledger.due_sessions(time.time() + 1, 0, 10)
    assert [(d.namespace, d.session_id) for d in due] == [("user/b", "s1")]


async def test_erasure_drops_the_ids_of_mined_turns(ledger: ErasedTurns) -> None:
    """The ids kept of mined turns go with the turns: a turn of an erased id, or in an erased
    namespace, is a new one."""
    for session, ids in (("s1", ["t1", "t2"]), ("s2", ["t4"])):
        await ledger.record_turns("user/a", session, [Turn(i, "user", "x") for i in ids])
        mined = await ledger.unformed_turns("user/a", session)
        await ledger.mark_formed("user/a", session, mined.upto)
    await ledger.scrub(["t1"])
    await ledger.record_turns("user/a", "s1", [Turn("t1", "user", "x"), Turn("t2", "user", "x")])
    assert [t.id for t in (await ledger.unformed_turns("user/a", "s1")).turns] == ["t1"]
    await ledger.scrub_namespace("user/a")
    await ledger.record_turns("user/a", "s2", [Turn("t4", "user", "x")])
    assert [t.id for t in (await ledger.unformed_turns("user/a", "s2")).turns] == ["t4"]


async def test_scrub_keeps_who_when_what_but_no_text(ledger: Ledger, tmp_path: Path) -> None:
    """Every area at once: an erasure reaches all of them."""
    secret = "zebra-ledger-9c1d"
    await ledger.set_aliases([("w-merged", "m1")])
    await ledger.audit(
        [
            AuditEntry("coder", "write", "user/a", "m1", f"wrote {secret}"),
            AuditEntry("coder", "write", "user/a", "w-merged", f"merged {secret}"),
            AuditEntry("master", "forget", "user/a", "f1", "m1: the user asked"),
            AuditEntry("coder", "write", "user/a", "m2", "another memory"),
        ]
    )
    await ledger.add_review([ReviewItem("m1", "user/a", f"suspect {secret}")])
    await ledger.resolve_review("m1", "released", "master", f"fine: {secret}")
    await ledger.add_review([ReviewItem("m3", "user/b", "suspect")])
    await ledger.resolve_review("m3", "released", "master", f"ns {secret}")
    item = MemoryWrite("user/a", Layer.SEMANTIC, f"proposed {secret}")
    await ledger.add_proposal(Proposal("p1", "coder", item))
    await ledger.decide_proposal("p1", "approved", "master", "", "m1")
    await ledger.scrub(["m1"])
    rows = {(r.target, r.action): r for r in await ledger.query_audit("", "user/a", 0, 10)}
    assert rows["m1", "write"].detail == ERASED and rows["m1", "write"].agent_id == "coder"
    assert rows["w-merged", "write"].detail == ERASED
    assert rows["f1", "forget"].detail == "m1: the user asked"  # the erasure's own record
    assert rows["m2", "write"].detail == "another memory"
    assert await ledger.list_review(10) == []
    assert await ledger.get_proposal("p1") is None

    await ledger.add_proposal(
        Proposal("p2", "coder", MemoryWrite("user/b", Layer.SEMANTIC, secret))
    )
    await ledger.add_proposal(Proposal("p3", "coder", MemoryWrite("user/c", Layer.SEMANTIC, "c")))
    await ledger.audit([AuditEntry("coder", "recall", "user/b", "", f"query {secret}")])
    await ledger.see_fact("pf", "user/b", "k", f"fact {secret}", "s1", [], 0.5)
    await ledger.start_task("t9", ["step"])
    await ledger.update_step("t9", 0, "done", f"output {secret}", "")
    await ledger.scrub_namespace("user/b")
    await ledger.scrub_namespace("task/t9")
    assert [r.detail for r in await ledger.query_audit("", "user/b", 0, 10)] == [ERASED]
    assert [p.id for p in await ledger.list_proposals("", 10)] == ["p3"]
    assert await ledger.get_pending_fact("pf") is None
    assert await ledger.task_steps("t9") == []
    if isinstance(ledger, RedisLedger):  # the reviewers' words, on Redis
        decisions = await ledger._client().hgetall(ledger._base("r") + "dec")
        assert len(decisions) == 2 and not [d for d in decisions.values() if secret.encode() in d]
    await ledger.close()
    for f in tmp_path.iterdir():
        if f.is_file():
            assert secret.encode() not in f.read_bytes(), f.name
    await ledger.start()
