"""The gateway's control records, kept locally beside the journal: the audit log, write-id
aliases (a write merged into an existing memory), proposals to shared namespaces, pending facts
awaiting their second confirmation, batch-task steps, and the turns waiting to be mined for facts
(``sqlite_formation``)."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from gateway.core.model import commands
from gateway.core.model.control import (
    ERASED_TEXT,
    ERASURE_SKEW_S,
    KEPT_AUDIT_ACTIONS,
    AuditEntry,
    PendingFact,
    Proposal,
    ReviewItem,
    TaskStep,
)
from stores.codec import dump_json, dump_json_ascii, parse_json
from stores.sqlite_base import SqliteBacked, SqliteDb, chunks, marks
from stores.sqlite_formation import FORMATION_SCHEMA, FormationRecords

T = TypeVar("T")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS audit (
    seq INTEGER PRIMARY KEY AUTOINCREMENT, at REAL NOT NULL, agent_id TEXT NOT NULL,
    action TEXT NOT NULL, namespace TEXT NOT NULL, target TEXT NOT NULL, detail TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS audit_agent ON audit(agent_id, at);
CREATE INDEX IF NOT EXISTS audit_ns ON audit(namespace, at);
-- each namespace of a row that names several (a recall over "user/a,user/b"), for the
-- namespace filter, erasure and retention (``_names``)
CREATE TABLE IF NOT EXISTS audit_names (
    namespace TEXT NOT NULL, at REAL NOT NULL, seq INTEGER NOT NULL,
    PRIMARY KEY (namespace, at, seq)) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS audit_names_at ON audit_names(at);
-- the memories a recall returned (``AuditEntry.hits``): erasing one scrubs the recall's text
CREATE TABLE IF NOT EXISTS audit_hits (
    memory_id TEXT NOT NULL, at REAL NOT NULL, seq INTEGER NOT NULL,
    PRIMARY KEY (memory_id, at, seq)) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS audit_hits_at ON audit_hits(at);
CREATE TABLE IF NOT EXISTS aliases (write_id TEXT PRIMARY KEY, memory_id TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS proposals (
    id TEXT PRIMARY KEY, proposer TEXT NOT NULL, item TEXT NOT NULL, state TEXT NOT NULL,
    decided_by TEXT NOT NULL DEFAULT '', reason TEXT NOT NULL DEFAULT '', created REAL NOT NULL,
    memory_id TEXT NOT NULL DEFAULT '');
CREATE INDEX IF NOT EXISTS proposals_state ON proposals(state, created);
CREATE TABLE IF NOT EXISTS pending_facts (
    id TEXT PRIMARY KEY, namespace TEXT NOT NULL, fact_key TEXT NOT NULL, fact TEXT NOT NULL,
    sessions TEXT NOT NULL, evidence TEXT NOT NULL, confidence REAL NOT NULL,
    promoted_to TEXT NOT NULL DEFAULT '', created REAL NOT NULL,
    UNIQUE(namespace, fact_key));
CREATE TABLE IF NOT EXISTS task_steps (
    task_id TEXT NOT NULL, idx INTEGER NOT NULL, name TEXT NOT NULL, state TEXT NOT NULL,
    output TEXT NOT NULL DEFAULT '', error TEXT NOT NULL DEFAULT '', attempts INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (task_id, idx));
CREATE TABLE IF NOT EXISTS review (
    memory_id TEXT PRIMARY KEY, namespace TEXT NOT NULL, reason TEXT NOT NULL, created REAL NOT NULL);
CREATE TABLE IF NOT EXISTS review_decisions (
    memory_id TEXT PRIMARY KEY, state TEXT NOT NULL, decided_by TEXT NOT NULL,
    reason TEXT NOT NULL, at REAL NOT NULL);
CREATE TABLE IF NOT EXISTS settings_kv (key TEXT PRIMARY KEY, value TEXT NOT NULL);
-- when a namespace ('n:<namespace>') or a memory or write id ('t:<id>') was last erased: an audit
-- row of it that arrives later but was stamped before (``ERASURE_SKEW_S``) is stored without text
CREATE TABLE IF NOT EXISTS audit_erased (key TEXT PRIMARY KEY, at REAL NOT NULL);
"""


_KEPT = ", ".join(f"'{a}'" for a in sorted(KEPT_AUDIT_ACTIONS))


def _erased_keys(e: AuditEntry) -> list[str]:
    """The ``audit_erased`` keys whose erasure takes the row's text: its namespaces, its target
    and the memories it returned."""
    keys = [f"n:{ns}" for ns in dict.fromkeys(e.namespace.split(",")) if ns]
    return keys + [f"t:{t}" for t in dict.fromkeys((e.target, *e.hits)) if t]


def _erasure_times(c: sqlite3.Connection, entries: Sequence[AuditEntry]) -> dict[str, float]:
    """When the namespaces and targets of ``entries`` were last erased (those ever erased)."""
    keys = list(dict.fromkeys(k for e in entries for k in _erased_keys(e)))
    times: dict[str, float] = {}
    for part in chunks(keys):
        q = f"SELECT key, at FROM audit_erased WHERE key IN ({marks(len(part))})"
        times.update(c.execute(q, part).fetchall())
    return times


def _text_erased(times: dict[str, float], e: AuditEntry, at: float) -> bool:
    """Whether an erasure of the row's namespace or target came after the row was stamped."""
    last = max((times[k] for k in _erased_keys(e) if k in times), default=None)
    return last is not None and at <= last + ERASURE_SKEW_S


#: settings_kv key: rows written before ``audit_names`` existed have been indexed in it
_NAMES_BACKFILLED = "memgate.audit_names"


def _names(seq: int, at: float, namespace: str) -> list[tuple[str, float, int]]:
    """``audit_names`` rows of an audit row: one per namespace, when it names several."""
    if "," not in namespace:
        return []
    return [(ns, at, seq) for ns in dict.fromkeys(namespace.split(",")) if ns]


def _backfill_names(c: sqlite3.Connection) -> None:
    if c.execute("SELECT 1 FROM settings_kv WHERE key = ?", (_NAMES_BACKFILLED,)).fetchone():
        return
    rows = c.execute("SELECT seq, at, namespace FROM audit WHERE instr(namespace, ',') > 0")
    c.executemany(
        "INSERT OR IGNORE INTO audit_names VALUES (?,?,?)",
        [name for row in rows.fetchall() for name in _names(*row)],
    )
    c.execute("INSERT INTO settings_kv VALUES (?, '1')", (_NAMES_BACKFILLED,))


#: the seqs of the audit rows naming a namespace (bound twice), alone or among others
_IN_NAMESPACE = (
    "SELECT seq FROM audit WHERE namespace = ?1"
    " UNION ALL SELECT seq FROM audit_names WHERE namespace = ?1"
)


class SqliteLedger(FormationRecords, SqliteBacked):
    def __init__(self, path: Path) -> None:
        self._db = SqliteDb(path, _SCHEMA + FORMATION_SCHEMA, "ledger", synchronous="FULL")

    async def start(self) -> None:
        await super().start()
        await self._db.write(_backfill_names)

    async def _run(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        return await self._db.write(fn)

    # ---- audit
    async def audit(self, entries: Sequence[AuditEntry]) -> None:
        now = time.time()

        def run(c: sqlite3.Connection) -> None:
            erased = _erasure_times(c, entries)
            for e in entries:
                at = e.at or now
                detail = e.detail
                if detail and e.action not in KEPT_AUDIT_ACTIONS and _text_erased(erased, e, at):
                    detail = ERASED_TEXT  # queued before an erasure that has run since
                seq = c.execute(
                    "INSERT INTO audit(at, agent_id, action, namespace, target, detail)"
                    " VALUES (?,?,?,?,?,?)",
                    (at, e.agent_id, e.action, e.namespace, e.target, detail),
                ).lastrowid
                if "," in e.namespace:
                    c.executemany(
                        "INSERT INTO audit_names VALUES (?,?,?)", _names(seq or 0, at, e.namespace)
                    )
                if e.hits:
                    c.executemany(
                        "INSERT OR IGNORE INTO audit_hits VALUES (?,?,?)",
                        [(mid, at, seq or 0) for mid in dict.fromkeys(e.hits)],
                    )

        await self._run(run)

    async def scrub(self, memory_ids: Sequence[str]) -> None:
        ids = list(dict.fromkeys(memory_ids))
        if not ids:
            return

        now = time.time()

        def run(c: sqlite3.Connection) -> None:
            for part in chunks(ids):
                q = marks(len(part))
                c.executemany(
                    "INSERT OR REPLACE INTO audit_erased VALUES (?, ?)",
                    [(f"t:{mid}", now) for mid in part],
                )
                c.execute(
                    "INSERT OR REPLACE INTO audit_erased SELECT 't:' || write_id, ? FROM aliases"
                    f" WHERE memory_id IN ({q})",
                    (now, *part),
                )
                # rows naming the memory or a write merged into it, and recalls that returned it
                c.execute(
                    f"UPDATE audit SET detail = ?1 WHERE detail NOT IN ('', ?1)"
                    f" AND action NOT IN ({_KEPT}) AND (target IN ({q}) OR target IN"
                    f" (SELECT write_id FROM aliases WHERE memory_id IN ({q}))"
                    f" OR seq IN (SELECT seq FROM audit_hits WHERE memory_id IN ({q})))",
                    (ERASED_TEXT, *part, *part, *part),
                )
                c.execute(f"DELETE FROM proposals WHERE memory_id IN ({q})", part)
                c.execute(f"DELETE FROM pending_facts WHERE promoted_to IN ({q})", part)
                c.execute(f"UPDATE review_decisions SET reason = '' WHERE memory_id IN ({q})", part)
                c.execute(f"DELETE FROM review WHERE memory_id IN ({q})", part)
                c.execute(f"DELETE FROM transcript WHERE turn_id IN ({q})", part)
                c.execute(f"DELETE FROM formed_turn WHERE turn_id IN ({q})", part)

        await self._db.write(run)
        await self._db.checkpoint()

    async def scrub_namespace(self, namespace: str) -> None:
        now = time.time()

        def run(c: sqlite3.Connection) -> None:
            c.execute("INSERT OR REPLACE INTO audit_erased VALUES (?, ?)", (f"n:{namespace}", now))
            c.execute(
                f"UPDATE audit SET detail = ?2 WHERE seq IN ({_IN_NAMESPACE})"
                f" AND detail NOT IN ('', ?2) AND action NOT IN ({_KEPT})",
                (namespace, ERASED_TEXT),
            )
            c.execute(
                "DELETE FROM proposals WHERE json_extract(item, '$.namespace') = ?", (namespace,)
            )
            c.execute("DELETE FROM pending_facts WHERE namespace = ?", (namespace,))
            c.execute(
                "UPDATE review_decisions SET reason = '' WHERE memory_id IN"
                " (SELECT memory_id FROM review WHERE namespace = ?)",
                (namespace,),
            )
            c.execute("DELETE FROM review WHERE namespace = ?", (namespace,))
            # dialogue kept for memory formation until mined
            c.execute("DELETE FROM transcript WHERE namespace = ?", (namespace,))
            c.execute("DELETE FROM formed_turn WHERE namespace = ?", (namespace,))
            c.execute("DELETE FROM formation WHERE namespace = ?", (namespace,))
            if namespace.startswith("task/"):
                c.execute("DELETE FROM task_steps WHERE task_id = ?", (namespace[5:],))

        await self._db.write(run)
        await self._db.checkpoint()

    async def query_audit(
        self, agent_id: str, namespace: str, since: float, limit: int
    ) -> list[AuditEntry]:
        sql = "SELECT at, agent_id, action, namespace, target, detail FROM audit WHERE at >= ?2"
        args: list[Any] = [namespace, since]
        if agent_id:
            sql += " AND agent_id = ?3"
            args.append(agent_id)
        if namespace:
            sql += f" AND seq IN ({_IN_NAMESPACE})"
        sql += f" ORDER BY seq DESC LIMIT ?{len(args) + 1}"
        args.append(limit)
        rows = await self._db.read(lambda c: c.execute(sql, args).fetchall())
        return [
            AuditEntry(
                agent_id=r[1], action=r[2], namespace=r[3], target=r[4], detail=r[5], at=r[0]
            )
            for r in rows
        ]

    async def prune_audit(self, older_than_s: float) -> int:
        cutoff = time.time() - older_than_s

        def run(c: sqlite3.Connection) -> int:
            c.execute("DELETE FROM audit_names WHERE at < ?", (cutoff,))
            c.execute("DELETE FROM audit_hits WHERE at < ?", (cutoff,))
            # a row stamped before these erasures is older than the retention: dropped anyway
            c.execute("DELETE FROM audit_erased WHERE at < ?", (cutoff,))
            return int(c.execute("DELETE FROM audit WHERE at < ?", (cutoff,)).rowcount)

        return await self._run(run)

    # ---- aliases
    async def set_aliases(self, pairs: Sequence[tuple[str, str]]) -> None:
        await self._run(
            lambda c: c.executemany("INSERT OR REPLACE INTO aliases VALUES (?,?)", list(pairs))
        )

    async def resolve(self, write_id: str) -> str:
        row = await self._db.read(
            lambda c: c.execute(
                "SELECT memory_id FROM aliases WHERE write_id=?", (write_id,)
            ).fetchone()
        )
        return row[0] if row else write_id

    async def resolve_many(self, write_ids: Sequence[str]) -> dict[str, str]:
        unique = list(dict.fromkeys(write_ids))

        def run(c: sqlite3.Connection) -> dict[str, str]:
            out = {w: w for w in unique}
            for part in chunks(unique):
                out.update(
                    c.execute(
                        f"SELECT write_id, memory_id FROM aliases WHERE write_id IN "
                        f"({marks(len(part))})",
                        part,
                    ).fetchall()
                )
            return out

        return await self._db.read(run) if unique else {}

    # ---- proposals
    async def add_proposal(self, proposal: Proposal) -> Proposal:
        p = proposal
        await self._run(
            lambda c: c.execute(
                "INSERT OR IGNORE INTO proposals(id, proposer, item, state, created)"
                " VALUES (?,?,?,?,?)",
                (p.id, p.proposer, commands.dumps(p.item), "pending", p.created or time.time()),
            )
        )
        stored = await self.get_proposal(p.id)
        assert stored is not None
        return stored

    async def get_proposal(self, pid: str) -> Proposal | None:
        rows = await self._proposals("WHERE id=?", (pid,))
        return rows[0] if rows else None

    async def list_proposals(self, state: str, limit: int) -> list[Proposal]:
        if state:
            return await self._proposals("WHERE state=? ORDER BY created LIMIT ?", (state, limit))
        return await self._proposals("ORDER BY created LIMIT ?", (limit,))

    async def proposal_backlog(self) -> tuple[int, float]:
        row = await self._db.read(
            lambda c: c.execute(
                "SELECT COUNT(*), COALESCE(MIN(created), 0) FROM proposals WHERE state='pending'"
            ).fetchone()
        )
        return int(row[0]), float(row[1])

    async def _proposals(self, where: str, args: tuple[Any, ...]) -> list[Proposal]:
        cols = "id, proposer, item, state, decided_by, reason, created, memory_id"
        rows = await self._db.read(
            lambda c: c.execute(f"SELECT {cols} FROM proposals {where}", args).fetchall()
        )
        out = []
        for r in rows:
            data = parse_json(r[2])
            kind = "turn" if data.get("layer") == "working" else "memory"
            item = commands.decode(kind, data)
            assert isinstance(item, commands.MemoryWrite | commands.TurnAppend)
            out.append(Proposal(r[0], r[1], item, r[3], r[4], r[5], r[6], r[7]))
        return out

    async def decide_proposal(
        self, pid: str, state: str, decided_by: str, reason: str, memory_id: str = ""
    ) -> bool:
        """Moves a pending proposal to ``state``; False when it was not pending."""

        def run(c: sqlite3.Connection) -> bool:
            cur = c.execute(
                "UPDATE proposals SET state=?, decided_by=?, reason=?, memory_id=?"
                " WHERE id=? AND state='pending'",
                (state, decided_by, reason, memory_id, pid),
            )
            return cur.rowcount == 1

        return await self._run(run)

    # ---- review queue (quarantined and low-confidence high-impact memories)
    async def add_review(self, items: Sequence[ReviewItem]) -> None:
        now = time.time()
        await self._run(
            lambda c: c.executemany(
                "INSERT OR IGNORE INTO review VALUES (?,?,?,?)",
                [(i.memory_id, i.namespace, i.reason, now) for i in items],
            )
        )

    async def list_review(self, limit: int) -> list[ReviewItem]:
        rows = await self._db.read(
            lambda c: c.execute(
                "SELECT memory_id, namespace, reason FROM review WHERE memory_id NOT IN "
                "(SELECT memory_id FROM review_decisions) ORDER BY created LIMIT ?",
                (limit,),
            ).fetchall()
        )
        return [ReviewItem(*r) for r in rows]

    async def resolve_review(
        self, memory_id: str, state: str, decided_by: str, reason: str
    ) -> bool:
        def run(c: sqlite3.Connection) -> bool:
            queued = c.execute("SELECT 1 FROM review WHERE memory_id=?", (memory_id,)).fetchone()
            if queued is None:
                return False
            cur = c.execute(
                "INSERT OR IGNORE INTO review_decisions VALUES (?,?,?,?,?)",
                (memory_id, state, decided_by, reason, time.time()),
            )
            return cur.rowcount == 1

        return await self._run(run)

    # ---- small persistent settings (e.g. the shared-write policy)
    async def put_setting(self, key: str, value: dict[str, Any]) -> None:
        await self._run(
            lambda c: c.execute(
                "INSERT OR REPLACE INTO settings_kv VALUES (?,?)", (key, dump_json_ascii(value))
            )
        )

    async def get_setting(self, key: str) -> dict[str, Any] | None:
        row = await self._db.read(
            lambda c: c.execute("SELECT value FROM settings_kv WHERE key=?", (key,)).fetchone()
        )
        return parse_json(row[0]) if row else None

    # ---- pending facts (two-confirmation promotion)
    async def see_fact(
        self,
        pid: str,
        namespace: str,
        fact_key: str,
        fact: str,
        session_id: str,
        evidence: Sequence[str],
        confidence: float,
    ) -> PendingFact:
        """Record one sighting of a fact; returns the pending row."""

        def run(c: sqlite3.Connection) -> PendingFact:
            row = c.execute(
                "SELECT id, sessions, evidence, confidence, promoted_to FROM pending_facts"
                " WHERE namespace=? AND fact_key=?",
                (namespace, fact_key),
            ).fetchone()
            if row is None:
                sessions, ev, conf, promoted, rid = (
                    [session_id],
                    list(evidence),
                    confidence,
                    "",
                    pid,
                )
                c.execute(
                    "INSERT INTO pending_facts VALUES (?,?,?,?,?,?,?,?,?)",
                    (
                        rid,
                        namespace,
                        fact_key,
                        fact,
                        dump_json_ascii(sessions),
                        dump_json(ev),
                        conf,
                        "",
                        time.time(),
                    ),
                )
            else:
                rid, promoted = row[0], row[4]
                sessions = parse_json(row[1])
                if session_id and session_id not in sessions:
                    sessions.append(session_id)
                seen = parse_json(row[2])
                ev = seen + [e for e in evidence if e not in seen]
                conf = max(row[3], confidence)
                c.execute(
                    "UPDATE pending_facts SET sessions=?, evidence=?, confidence=? WHERE id=?",
                    (dump_json_ascii(sessions), dump_json(ev), conf, rid),
                )
            return PendingFact(rid, namespace, fact_key, fact, sessions, ev, conf, promoted)

        return await self._run(run)

    async def get_pending_fact(self, pid: str) -> PendingFact | None:
        row = await self._db.read(
            lambda c: c.execute(
                "SELECT id, namespace, fact_key, fact, sessions, evidence, confidence, promoted_to"
                " FROM pending_facts WHERE id=?",
                (pid,),
            ).fetchone()
        )
        if not row:
            return None
        return PendingFact(
            row[0], row[1], row[2], row[3], parse_json(row[4]), parse_json(row[5]), row[6], row[7]
        )

    async def pending_facts(self, namespace: str, limit: int) -> list[PendingFact]:
        rows = await self._db.read(
            lambda c: c.execute(
                "SELECT id, namespace, fact_key, fact, sessions, evidence, confidence, promoted_to"
                " FROM pending_facts WHERE namespace=? AND promoted_to='' ORDER BY created, id"
                " LIMIT ?",
                (namespace, limit),
            ).fetchall()
        )
        return [
            PendingFact(r[0], r[1], r[2], r[3], parse_json(r[4]), parse_json(r[5]), r[6], r[7])
            for r in rows
        ]

    async def mark_promoted(self, pid: str, memory_id: str) -> None:
        await self._run(
            lambda c: c.execute(
                "UPDATE pending_facts SET promoted_to=? WHERE id=?", (memory_id, pid)
            )
        )

    # ---- batch tasks
    async def start_task(self, task_id: str, steps: Sequence[str]) -> None:
        def run(c: sqlite3.Connection) -> None:
            c.executemany(
                "INSERT OR IGNORE INTO task_steps(task_id, idx, name, state) VALUES (?,?,?,?)",
                [(task_id, i, name, "pending") for i, name in enumerate(steps)],
            )

        await self._run(run)

    async def task_steps(self, task_id: str) -> list[TaskStep]:
        rows = await self._db.read(
            lambda c: c.execute(
                "SELECT idx, name, state, output, error, attempts FROM task_steps"
                " WHERE task_id=? ORDER BY idx",
                (task_id,),
            ).fetchall()
        )
        return [TaskStep(*r) for r in rows]

    async def update_step(
        self, task_id: str, index: int, state: str, output: str, error: str
    ) -> bool:
        """Sets a step's state; a done step never changes again. False when it is missing."""

        def run(c: sqlite3.Connection) -> bool:
            row = c.execute(
                "SELECT state FROM task_steps WHERE task_id=? AND idx=?", (task_id, index)
            ).fetchone()
            if row is None:
                return False
            if row[0] == "done":
                return True
            bump = 1 if state == "running" else 0
            c.execute(
                "UPDATE task_steps SET state=?, output=?, error=?, attempts=attempts+?"
                " WHERE task_id=? AND idx=?",
                (state, output, error, bump, task_id, index),
            )
            return True

        return await self._run(run)
