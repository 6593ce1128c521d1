"""Ledger contract (gateway.core.ports.ports.Ledger): the gateway's control records, typed — audit,
aliases, proposals, the review queue, settings, pending facts and task steps — kept across a
restart."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from gateway.core.model.commands import MemoryWrite, TurnAppend
from gateway.core.model.control import ERASED_TEXT as ERASED
from gateway.core.model.control import AuditEntry, Proposal, ReviewItem
from gateway.core.model.models import Layer
from gateway.core.ports.ports import Ledger
from stores.sqlite_ledger import SqliteLedger

MakeLedger = Callable[[], Ledger]


@pytest.fixture(
    params=[
        "sqlite",
        pytest.param("redis", marks=pytest.mark.real),
        pytest.param("redis-cluster", marks=[pytest.mark.real, pytest.mark.slow]),
    ]
)
async def make_ledger(request, tmp_path: Path) -> AsyncIterator[MakeLedger]:  # type: ignore[no-untyped-def]
    """A factory of ledgers over one store: a second call is the same ledger reopened (a restart),
    or another replica's view of it (Redis)."""
    if request.param == "sqlite":
        yield lambda: SqliteLedger(tmp_path / "l.db")
        return
    from redis.asyncio import Redis

    from stores.redis_ledger import RedisLedger

    if request.param == "redis":
        url, cluster = request.getfixturevalue("redis_url"), False
    else:
        url, cluster = f"redis://127.0.0.1:{request.getfixturevalue('cluster')[0]}/0", True
    prefix = f"mgtest-{uuid.uuid4().hex[:10]}"
    yield lambda: RedisLedger(url, prefix=prefix, cluster=cluster)
    if not cluster:
        r = Redis.from_url(url)
        keys = [k async for k in r.scan_iter(match=f"{prefix}:*", count=1000)]
        if keys:
            await r.delete(*keys)
        await r.aclose()


@pytest.fixture
async def ledger(make_ledger: MakeLedger) -> AsyncIterator[Ledger]:
    store = make_ledger()
    await store.start()
    try:
        yield store
    finally:
        await store.close()


async def test_audit_filters_newest_first(ledger: Ledger) -> None:
    await ledger.audit(
        [
            AuditEntry("master", "write", "user/a", "w1", "semantic"),
            AuditEntry("researcher", "read", "user/a", "w1", "get"),
            AuditEntry("master", "recall", "user/b", "", "tea"),
        ]
    )
    everything = await ledger.query_audit("", "", 0.0, 10)
    assert [e.action for e in everything] == ["recall", "read", "write"]
    assert all(e.at > 0 for e in everything)
    assert [e.target for e in await ledger.query_audit("researcher", "", 0.0, 10)] == ["w1"]
    assert [e.action for e in await ledger.query_audit("", "user/b", 0.0, 10)] == ["recall"]
    assert await ledger.query_audit("", "", everything[0].at + 1, 10) == []
    assert len(await ledger.query_audit("", "", 0.0, 2)) == 2


async def test_audit_retention_drops_only_old_rows(ledger: Ledger) -> None:
    import time

    now = time.time()
    await ledger.audit(
        [
            AuditEntry("master", "write", "user/a", "old", "x", at=now - 3 * 86_400),
            AuditEntry("coder", "read", "user/b", "older", "y", at=now - 5 * 86_400),
            AuditEntry("master", "write", "user/a", "new", "z", at=now - 60),
        ]
    )
    assert await ledger.prune_audit(86_400) == 2
    assert [e.target for e in await ledger.query_audit("", "", 0.0, 10)] == ["new"]
    assert await ledger.query_audit("coder", "", 0.0, 10) == []
    assert [e.target for e in await ledger.query_audit("", "user/a", 0.0, 10)] == ["new"]
    assert await ledger.prune_audit(86_400) == 0


async def test_a_row_of_several_namespaces_is_found_scrubbed_and_pruned_by_each(
    ledger: Ledger,
) -> None:
    """A recall over several namespaces is one row naming them all ("user/a,user/b"): asking
    the audit about any one of them shows it, erasing any one of them clears its text, and
    retention drops it from every one. A namespace that only starts the same is not it."""
    import time

    now = time.time()
    await ledger.audit(
        [
            AuditEntry("coder", "recall", "user/b,user/c", "", "old", at=now - 3 * 86_400),
            AuditEntry("coder", "recall", "user/a,user/b,global", "", "where alice lives"),
            AuditEntry("coder", "recall", "user/ab", "", "other"),
        ]
    )
    for ns in ("user/a", "global"):
        assert [e.detail for e in await ledger.query_audit("", ns, 0.0, 10)] == [
            "where alice lives"
        ]
    assert [e.detail for e in await ledger.query_audit("coder", "user/b", 0.0, 10)] == [
        "where alice lives",
        "old",
    ]
    await ledger.scrub_namespace("user/a")
    assert [e.detail for e in await ledger.query_audit("", "user/b", 0.0, 10)] == [ERASED, "old"]
    assert [e.detail for e in await ledger.query_audit("", "user/ab", 0.0, 10)] == ["other"]
    assert await ledger.prune_audit(86_400) == 1
    assert [e.namespace for e in await ledger.query_audit("", "user/c", 0.0, 10)] == []
    assert [e.namespace for e in await ledger.query_audit("", "user/b", 0.0, 10)] == [
        "user/a,user/b,global"
    ]


async def _as_before_per_namespace_index(ledger: Ledger) -> None:
    """Undo what this version adds for rows of several namespaces: as a ledger written by an
    older memgate, where such a row was indexed under the joined names only."""
    if isinstance(ledger, SqliteLedger):

        def run(c: Any) -> None:
            c.execute("DELETE FROM audit_names")
            c.execute("DELETE FROM settings_kv WHERE key = 'memgate.audit_names'")

        await ledger._db.write(run)
        return
    b = ledger._base("a")  # type: ignore[attr-defined]
    r = ledger._client()  # type: ignore[attr-defined]
    seqs = await r.zrange(b + "ns:user/a", 0, -1, withscores=True)
    for ns in ("user/a", "user/b"):
        await r.delete(b + "ns:" + ns)
    await r.zadd(b + "ns:user/a,user/b", dict(seqs))
    await r.delete(b + "names")


async def test_rows_of_several_namespaces_from_an_older_ledger_are_indexed_on_start(
    make_ledger: MakeLedger,
) -> None:
    ledger = make_ledger()
    await ledger.start()
    await ledger.audit([AuditEntry("coder", "recall", "user/a,user/b", "", "where alice lives")])
    await _as_before_per_namespace_index(ledger)
    assert await ledger.query_audit("", "user/b", 0.0, 10) == []  # what the old index missed
    await ledger.close()
    ledger = make_ledger()
    await ledger.start()
    for ns in ("user/a", "user/b"):
        assert [e.detail for e in await ledger.query_audit("", ns, 0.0, 10)] == [
            "where alice lives"
        ]
    await ledger.scrub_namespace("user/b")
    assert [e.detail for e in await ledger.query_audit("", "user/a", 0.0, 10)] == [ERASED]
    await ledger.close()


async def test_rows_queued_before_an_erasure_arrive_without_text(ledger: Ledger) -> None:
    """Another replica queues audit rows for a quarter of a second (longer while the ledger is
    down): a row stamped before an erasure of its namespace, its memory or a write merged into
    it may reach the ledger after the scrub (a recall that returned the memory too). It arrives
    with its text erased, as if it had been there;
    a row stamped later than ``ERASURE_SKEW_S`` after the erasure keeps its text, and so does
    the record of an erasure. Retention forgets the erasures with the rows."""
    import time

    from gateway.core.model.control import ERASURE_SKEW_S

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
    make_ledger: MakeLedger,
) -> None:
    """Issue 33 L2: a recall's row keeps the ids it returned; erasing one of them (``scrub``)
    turns the query text into ``ERASED_TEXT`` and keeps the row; recalls that returned other
    memories keep their text, also after a restart; retention drops the ids with the rows."""
    import time

    ledger = make_ledger()
    await ledger.start()
    old = time.time() - 3 * 86_400
    await ledger.audit(
        [
            AuditEntry("coder", "recall", "user/a", "", "alice's passport number", hits=("m1",)),
            AuditEntry("coder", "recall", "user/a,user/b", "", "both", hits=("m2", "m1", "m3")),
            AuditEntry("coder", "recall", "user/a", "", "alice's diet", hits=("m2",)),
            AuditEntry("coder", "recall", "user/a", "", "nothing found"),
            AuditEntry("coder", "recall", "user/a", "", "long ago", at=old, hits=("m4",)),
        ]
    )
    await ledger.close()
    ledger = make_ledger()
    await ledger.start()
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
    await ledger.close()


async def test_aliases_resolve_merged_writes(ledger: Ledger) -> None:
    assert await ledger.resolve("w1") == "w1"
    await ledger.set_aliases([("w1", "m1"), ("w2", "m1")])
    assert (await ledger.resolve("w1"), await ledger.resolve("w2")) == ("m1", "m1")
    many = await ledger.resolve_many(["w1", "w3", "w2", "w1"])
    assert many == {"w1": "m1", "w2": "m1", "w3": "w3"}
    assert await ledger.resolve_many([]) == {}


async def test_proposals_add_once_list_and_decide_once(ledger: Ledger) -> None:
    item = MemoryWrite("user/a", Layer.SEMANTIC, "likes tea", confidence=0.6)
    stored = await ledger.add_proposal(Proposal("p1", "researcher", item))
    assert (stored.state, stored.item, stored.proposer) == ("pending", item, "researcher")
    assert stored.created > 0
    other = MemoryWrite("user/a", Layer.SEMANTIC, "something else")
    again = await ledger.add_proposal(Proposal("p1", "researcher", other))
    assert again.item == item  # an existing id keeps what it first stored
    turn = TurnAppend("user/a", "s1", "hello")
    await ledger.add_proposal(Proposal("p2", "coder", turn))
    assert [p.id for p in await ledger.list_proposals("pending", 10)] == ["p1", "p2"]
    assert (await ledger.get_proposal("p2")).item == turn  # type: ignore[union-attr]
    assert await ledger.decide_proposal("p1", "approved", "master", "fine", "m9")
    assert not await ledger.decide_proposal("p1", "rejected", "master", "late")
    decided = await ledger.get_proposal("p1")
    assert decided is not None
    assert (decided.state, decided.decided_by, decided.reason, decided.memory_id) == (
        "approved",
        "master",
        "fine",
        "m9",
    )
    assert [p.id for p in await ledger.list_proposals("", 10)] == ["p1", "p2"]
    assert await ledger.get_proposal("nope") is None


async def test_review_queue_keeps_one_entry_per_memory(ledger: Ledger) -> None:
    await ledger.add_review([ReviewItem("m1", "user/a", "quarantined")])
    await ledger.add_review([ReviewItem("m1", "user/a", "again"), ReviewItem("m2", "global", "x")])
    assert await ledger.list_review(10) == [
        ReviewItem("m1", "user/a", "quarantined"),
        ReviewItem("m2", "global", "x"),
    ]


async def test_resolved_review_items_leave_the_queue_once(ledger: Ledger) -> None:
    await ledger.add_review([ReviewItem("m1", "user/a", "quarantined"), ReviewItem("m2", "g", "x")])
    assert await ledger.resolve_review("m1", "approved", "master", "looks fine")
    assert not await ledger.resolve_review("m1", "rejected", "master", "late")
    assert not await ledger.resolve_review("nope", "approved", "master", "")
    assert [i.memory_id for i in await ledger.list_review(10)] == ["m2"]
    await ledger.add_review([ReviewItem("m1", "user/a", "again")])  # stays resolved
    assert [i.memory_id for i in await ledger.list_review(10)] == ["m2"]


async def test_proposal_backlog_counts_pending_and_the_oldest(ledger: Ledger) -> None:
    assert await ledger.proposal_backlog() == (0, 0.0)
    item = MemoryWrite("user/a", Layer.SEMANTIC, "likes tea")
    await ledger.add_proposal(Proposal("p1", "r", item, created=1000.0))
    await ledger.add_proposal(Proposal("p2", "r", item, created=2000.0))
    assert await ledger.proposal_backlog() == (2, 1000.0)
    await ledger.decide_proposal("p1", "rejected", "master", "no")
    assert await ledger.proposal_backlog() == (1, 2000.0)


async def test_settings_round_trip(ledger: Ledger) -> None:
    assert await ledger.get_setting("policy") is None
    await ledger.put_setting("policy", {"auto_approve": ["user/*"], "min_confidence": 0.5})
    await ledger.put_setting("policy", {"auto_approve": [], "min_confidence": 0.9})
    assert await ledger.get_setting("policy") == {"auto_approve": [], "min_confidence": 0.9}


async def test_pending_fact_counts_distinct_sessions(ledger: Ledger) -> None:
    first = await ledger.see_fact("p1", "user/a", "likes tea", "Likes tea", "s1", ["e1"], 0.6)
    assert (first.id, first.sessions, first.evidence, first.promoted_to) == (
        "p1",
        ["s1"],
        ["e1"],
        "",
    )
    same = await ledger.see_fact("p9", "user/a", "likes tea", "Likes tea", "s1", ["e1"], 0.5)
    assert same.id == "p1" and same.sessions == ["s1"]  # the same session counts once
    second = await ledger.see_fact("p9", "user/a", "likes tea", "Likes tea", "s2", ["e2"], 0.8)
    assert second.sessions == ["s1", "s2"] and second.evidence == ["e1", "e2"]
    assert second.confidence == 0.8
    await ledger.mark_promoted("p1", "m1")
    got = await ledger.get_pending_fact("p1")
    assert got is not None and got.promoted_to == "m1" and got.sessions == ["s1", "s2"]
    assert await ledger.get_pending_fact("nope") is None


async def test_task_steps_never_undo_a_done_step(ledger: Ledger) -> None:
    await ledger.start_task("t1", ["fetch", "parse"])
    await ledger.start_task("t1", ["fetch", "parse"])  # idempotent
    assert [(s.index, s.name, s.state) for s in await ledger.task_steps("t1")] == [
        (0, "fetch", "pending"),
        (1, "parse", "pending"),
    ]
    assert await ledger.update_step("t1", 0, "running", "", "")
    assert await ledger.update_step("t1", 0, "done", "ok", "")
    assert await ledger.update_step("t1", 0, "failed", "", "late")  # ignored: done stays done
    step = (await ledger.task_steps("t1"))[0]
    assert (step.state, step.output, step.attempts) == ("done", "ok", 1)
    assert not await ledger.update_step("t1", 5, "done", "", "")
    assert await ledger.task_steps("nope") == []


async def test_records_survive_a_restart(make_ledger: MakeLedger) -> None:
    first = make_ledger()
    await first.start()
    await first.add_proposal(Proposal("p1", "r", MemoryWrite("global", Layer.SEMANTIC, "rule")))
    await first.audit([AuditEntry("master", "write", "global", "w", "")])
    await first.close()
    again = make_ledger()
    await again.start()
    assert (await again.get_proposal("p1")) is not None
    assert len(await again.query_audit("", "", 0.0, 10)) == 1
    await again.close()


async def test_turns_wait_to_be_mined_once(ledger: Ledger) -> None:
    from gateway.core.model.models import Turn

    turns = [Turn(f"t{i}", "user", f"line {i}", metadata={"speaker": "Leo"}) for i in range(5)]
    await ledger.record_turns("user/a", "s1", turns[:3])
    await ledger.record_turns("user/a", "s1", turns)  # a replay: t0..t2 are not kept twice
    await ledger.record_turns("user/a", "s2", [Turn("x", "user", "other session")])
    got = await ledger.unformed_turns("user/a", "s1")
    assert [t.id for t in got.turns] == ["t0", "t1", "t2", "t3", "t4"]
    assert got.turns[0].metadata == {"speaker": "Leo"} and got.after == 0
    first = await ledger.unformed_turns("user/a", "s1", limit=2)
    assert [t.id for t in first.turns] == ["t0", "t1"]
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


async def test_due_sessions_idle_or_many_new_turns(ledger: Ledger) -> None:
    import time

    from gateway.core.model.models import Turn

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


async def test_scrub_keeps_who_when_what_but_no_text(ledger: Ledger, tmp_path: Path) -> None:
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
    if not isinstance(ledger, SqliteLedger):  # the reviewers' words, on Redis
        decisions = await ledger._client().hgetall(ledger._base("r") + "dec")  # type: ignore[attr-defined]
        assert len(decisions) == 2 and not [d for d in decisions.values() if secret.encode() in d]
    await ledger.close()
    for f in tmp_path.iterdir():
        if f.is_file():
            assert secret.encode() not in f.read_bytes(), f.name
    await ledger.start()
