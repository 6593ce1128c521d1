"""AuditLedger contract: who did what, when — filtered newest first, pruned by age, rows of
several namespaces found by each, kept across a restart."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, Protocol

from gateway.core.model.control import ERASED_TEXT as ERASED
from gateway.core.model.control import AuditEntry
from gateway.core.ports.control_ports import AuditLedger, ErasureLedger, Ledger
from stores.sqlite_ledger import SqliteLedger
from tests.contract.ledger.opening import MakeLedger, Opens, opened


class AuditStore(AuditLedger, Opens, Protocol):
    """An audit adapter as the suite opens it."""


async def test_audit_filters_newest_first(ledger: AuditLedger) -> None:
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


async def test_audit_retention_drops_only_old_rows(ledger: AuditLedger) -> None:
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


class ErasedAudit(AuditLedger, ErasureLedger, Protocol):
    """The audit rows and what an erasure does to them."""


async def test_a_row_of_several_namespaces_is_found_scrubbed_and_pruned_by_each(
    ledger: ErasedAudit,
) -> None:
    """A recall over several namespaces is one row naming them all ("user/a,user/b"): asking
    the audit about any one of them shows it, erasing any one of them clears its text, and
    retention drops it from every one. A namespace that only starts the same is not it."""
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
    make_stored_ledger: MakeLedger,
) -> None:
    """An upgrade of the adapter's own records (its tables, its keys)."""
    async with opened(make_stored_ledger) as ledger:
        await ledger.audit(
            [AuditEntry("coder", "recall", "user/a,user/b", "", "where alice lives")]
        )
        await _as_before_per_namespace_index(ledger)
        assert await ledger.query_audit("", "user/b", 0.0, 10) == []  # what the old index missed
    async with opened(make_stored_ledger) as ledger:
        for ns in ("user/a", "user/b"):
            assert [e.detail for e in await ledger.query_audit("", ns, 0.0, 10)] == [
                "where alice lives"
            ]
        await ledger.scrub_namespace("user/b")
        assert [e.detail for e in await ledger.query_audit("", "user/a", 0.0, 10)] == [ERASED]


async def test_audit_rows_survive_a_restart(make_ledger: Callable[[], AuditStore]) -> None:
    async with opened(make_ledger) as ledger:
        await ledger.audit([AuditEntry("master", "write", "global", "w", "")])
        await ledger.audit([AuditEntry("coder", "recall", "user/a,user/b", "", "tea")])
    async with opened(make_ledger) as ledger:
        rows = await ledger.query_audit("", "", 0.0, 10)
        assert [(e.action, e.target) for e in rows] == [("recall", ""), ("write", "w")]
        assert [e.detail for e in await ledger.query_audit("", "user/b", 0.0, 10)] == ["tea"]
        assert await ledger.prune_audit(0.0) == 2  # the restarted ledger knows their times
