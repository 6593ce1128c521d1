"""Embedded episodic graph: ``EpisodicGraph`` over one SQLite file (WAL, synchronous=FULL).

Schema
------
* ``nodes(kind, id, label, namespace, props)`` — every node; an event's label is its summary, an
  entity's its name (as first given). Entity and session ids are scoped to the event's namespace
  (``models.scoped_id``: ``user/alice/kyoto``) and carry it, also when ``relate`` creates them;
  other nodes keep the namespace of the event that created them ('' when created by ``relate``).
* ``edges(src_kind, src_id, type, dst_kind, dst_id, at, props)`` — unique on
  (src, type, dst); ``relate`` of an existing edge overwrites its ``at`` and props.
* ``events`` — the event rows behind ``timeline``, indexed on (namespace, at).

``record`` upserts each event and replaces its links: event -[IN_SESSION]-> session,
-[BY]-> agent, -[ABOUT]-> user, -[PART_OF]-> task, -[MENTIONS]-> entity, each stamped with the
event's time — the links ``gateway.core.model.models.event_links`` names (the one event-link rule).

``neighbourhood`` walks edges in both directions, 1 or 2 hops (with ``visible_to``, never into or
through an event, entity or session of another agent's private namespace), and returns distinct
nodes other than the start: each at its shortest distance, reached by its newest edge at that distance (the
edge of the last hop), nearest first, then newest edge, then (kind, id).

Times are integer microseconds since the epoch (UTC) and come back timezone-aware UTC.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from gateway.core.model.errors import InvalidArgument
from gateway.core.model.models import (
    EVENT_LINK_TYPES,
    SCOPED_KINDS,
    Event,
    Neighbour,
    NodeKind,
    NodeRef,
    Relation,
    event_links,
    scope_of,
    scoped_id,
    valid_relation_type,
)
from stores.codec import dump_json, from_micros, parse_json, to_micros
from stores.sqlite_base import SqliteBacked, SqliteDb, chunks, marks

_SCHEMA = """
CREATE TABLE IF NOT EXISTS nodes (
    kind      TEXT NOT NULL,
    id        TEXT NOT NULL,
    label     TEXT NOT NULL DEFAULT '',
    namespace TEXT NOT NULL DEFAULT '',
    props     TEXT NOT NULL DEFAULT '{}',
    PRIMARY KEY (kind, id)
) WITHOUT ROWID;

CREATE TABLE IF NOT EXISTS edges (
    src_kind TEXT    NOT NULL,
    src_id   TEXT    NOT NULL,
    type     TEXT    NOT NULL,
    dst_kind TEXT    NOT NULL,
    dst_id   TEXT    NOT NULL,
    at       INTEGER NOT NULL,          -- unix microseconds, UTC
    props    TEXT    NOT NULL DEFAULT '{}',
    PRIMARY KEY (src_kind, src_id, type, dst_kind, dst_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS edges_dst ON edges (dst_kind, dst_id);

CREATE TABLE IF NOT EXISTS events (
    id         TEXT    NOT NULL PRIMARY KEY,
    namespace  TEXT    NOT NULL,
    type       TEXT    NOT NULL,
    summary    TEXT    NOT NULL,
    at         INTEGER NOT NULL,        -- unix microseconds, UTC
    importance REAL    NOT NULL,
    agent_id   TEXT    NOT NULL,
    user_id    TEXT    NOT NULL,
    session_id TEXT    NOT NULL,
    task_id    TEXT    NOT NULL,
    entities   TEXT    NOT NULL         -- JSON list of names
);
CREATE INDEX IF NOT EXISTS events_timeline ON events (namespace, at);

PRAGMA user_version = 1;
"""

#: Links ``record`` owns (replaced on every upsert of the event).
_EVENT_LINKS = tuple(rel for rel, _ in EVENT_LINK_TYPES)
_EVENT = NodeKind.EVENT.value

_UPSERT_NODE = (
    "INSERT INTO nodes (kind, id, label, namespace) VALUES (?, ?, ?, ?) "
    "ON CONFLICT (kind, id) DO UPDATE SET "
    "label = CASE WHEN nodes.label = '' THEN excluded.label ELSE nodes.label END, "
    "namespace = CASE WHEN nodes.namespace = '' THEN excluded.namespace ELSE nodes.namespace END"
)
_UPSERT_EDGE = (
    "INSERT INTO edges (src_kind, src_id, type, dst_kind, dst_id, at, props) "
    "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (src_kind, src_id, type, dst_kind, dst_id) "
    "DO UPDATE SET at = excluded.at, props = excluded.props"
)

# Distance-1 then distance-2 neighbours of (:k, :i). A bare column next to MAX() takes its value
# from the row holding the maximum (SQLite), so ``type`` is that of the newest edge.
_NEIGHBOURHOOD = """
WITH
d1e AS (
    SELECT dst_kind AS k, dst_id AS i, type, at FROM edges WHERE src_kind = :k AND src_id = :i
    UNION ALL
    SELECT src_kind, src_id, type, at FROM edges WHERE dst_kind = :k AND dst_id = :i
),
d1 AS (
    SELECT k, i, type, MAX(at) AS at FROM d1e
    WHERE NOT (k = :k AND i = :i) AND NOT EXISTS (
        SELECT 1 FROM nodes h WHERE h.kind = d1e.k AND h.id = d1e.i AND {hidden})
    GROUP BY k, i
),
d2e AS (
    SELECT e.dst_kind AS k, e.dst_id AS i, e.type, e.at
    FROM d1 JOIN edges e ON e.src_kind = d1.k AND e.src_id = d1.i WHERE :depth >= 2
    UNION ALL
    SELECT e.src_kind, e.src_id, e.type, e.at
    FROM d1 JOIN edges e ON e.dst_kind = d1.k AND e.dst_id = d1.i WHERE :depth >= 2
),
d2 AS (
    SELECT k, i, type, MAX(at) AS at FROM d2e
    WHERE NOT (k = :k AND i = :i)
      AND NOT EXISTS (SELECT 1 FROM d1 WHERE d1.k = d2e.k AND d1.i = d2e.i)
      AND NOT EXISTS (
        SELECT 1 FROM nodes h WHERE h.kind = d2e.k AND h.id = d2e.i AND {hidden})
    GROUP BY k, i
),
hits AS (
    SELECT k, i, type, at, 1 AS distance FROM d1
    UNION ALL
    SELECT k, i, type, at, 2 FROM d2
)
SELECT h.k, h.i, h.type, h.at, h.distance, COALESCE(n.label, '')
FROM hits h LEFT JOIN nodes n ON n.kind = h.k AND n.id = h.i
ORDER BY h.distance, h.at DESC, h.k, h.i
LIMIT :limit
"""
#: a node another agent's private namespace owns (``:me`` is ``agent/<caller>``, NULL: no filter)
_HIDDEN = (
    ":me IS NOT NULL AND h.kind IN ('event', 'entity', 'session') "
    "AND substr(h.namespace, 1, 6) = 'agent/' AND h.namespace <> :me"
)
_NEIGHBOURHOOD = _NEIGHBOURHOOD.replace("{hidden}", _HIDDEN)


def _scope(kind: str, node_id: str) -> str:
    """The namespace of an entity or session node named by ``relate`` (from its scoped id)."""
    return scope_of(node_id) if NodeKind(kind) in SCOPED_KINDS else ""


def _json(value: Any) -> str:
    return dump_json(value, sort_keys=True)


def _event_of(row: Sequence[Any]) -> Event:
    eid, ns, type_, summary, at, importance, agent, user, session, task, entities = row
    return Event(
        id=eid,
        namespace=ns,
        type=type_,
        summary=summary,
        at=from_micros(at),
        importance=importance,
        agent_id=agent,
        user_id=user,
        session_id=session,
        task_id=task,
        entities=parse_json(entities),
    )


class SqliteEpisodicGraph(SqliteBacked):
    """``EpisodicGraph`` over an embedded SQLite database at ``path`` (``:memory:`` works too)."""

    def __init__(self, path: Path) -> None:
        self._db = SqliteDb(path, _SCHEMA, "episodic graph")

    # ------------------------------------------------------------------ writes

    async def record(self, events: Sequence[Event]) -> None:
        if not events:
            return
        if any(not e.id for e in events):
            raise InvalidArgument("every event needs an id", field="events")
        await self._db.write(lambda c: self._record(c, list(events)))

    @staticmethod
    def _record(conn: sqlite3.Connection, events: list[Event]) -> None:
        for e in events:
            at = to_micros(e.at)
            conn.execute(
                "INSERT OR REPLACE INTO events (id, namespace, type, summary, at, importance, "
                "agent_id, user_id, session_id, task_id, entities) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    e.id, e.namespace, e.type, e.summary, at, float(e.importance), e.agent_id,
                    e.user_id, e.session_id, e.task_id, dump_json(list(e.entities)),
                ),
            )  # fmt: skip
            conn.execute(
                "INSERT INTO nodes (kind, id, label, namespace) VALUES (?, ?, ?, ?) "
                "ON CONFLICT (kind, id) DO UPDATE SET label = excluded.label, "
                "namespace = excluded.namespace",
                (_EVENT, e.id, e.summary, e.namespace),
            )
            conn.execute(
                f"DELETE FROM edges WHERE src_kind = ? AND src_id = ? "
                f"AND type IN ({marks(len(_EVENT_LINKS))})",
                (_EVENT, e.id, *_EVENT_LINKS),
            )
            for link in event_links(e):
                kind, node_id = link.node.kind.value, link.node.id
                conn.execute(_UPSERT_NODE, (kind, node_id, link.label, e.namespace))
                conn.execute(_UPSERT_EDGE, (_EVENT, e.id, link.type, kind, node_id, at, "{}"))

    async def relate(self, relations: Sequence[Relation]) -> None:
        if not relations:
            return
        rows = []
        for r in relations:
            if not valid_relation_type(r.type):
                raise InvalidArgument(
                    f"relation type {r.type!r} must be upper snake case", field="type"
                )
            if not r.src.id or not r.dst.id:
                raise InvalidArgument("both ends of a relation need an id", field="relations")
            src, dst = NodeKind(r.src.kind).value, NodeKind(r.dst.kind).value
            rows.append(
                (src, r.src.id, r.type, dst, r.dst.id, to_micros(r.at), _json(dict(r.properties)))
            )

        def run(conn: sqlite3.Connection) -> None:
            for row in rows:
                conn.execute(_UPSERT_NODE, (row[0], row[1], "", _scope(row[0], row[1])))
                conn.execute(_UPSERT_NODE, (row[3], row[4], "", _scope(row[3], row[4])))
                conn.execute(_UPSERT_EDGE, row)

        await self._db.write(run)

    async def delete_events(self, ids: Sequence[str]) -> None:
        unique = list(dict.fromkeys(ids))
        if not unique:
            return
        await self._db.write(lambda c: self._delete_events(c, unique))
        await self._db.checkpoint()

    @staticmethod
    def _delete_events(conn: sqlite3.Connection, ids: Sequence[str]) -> None:
        """Events, their nodes and edges; then entity and session nodes they linked to that no
        edge reaches any more."""
        linked: set[tuple[str, str]] = set()
        for part in chunks(ids):
            q = marks(len(part))
            linked.update(
                conn.execute(
                    f"SELECT dst_kind, dst_id FROM edges WHERE src_kind = ? AND src_id IN ({q}) "
                    "AND dst_kind IN ('entity', 'session')",
                    (_EVENT, *part),
                ).fetchall()
            )
            conn.execute(f"DELETE FROM events WHERE id IN ({q})", part)
            conn.execute(f"DELETE FROM nodes WHERE kind = ? AND id IN ({q})", (_EVENT, *part))
            conn.execute(
                f"DELETE FROM edges WHERE src_kind = ? AND src_id IN ({q})", (_EVENT, *part)
            )
            conn.execute(
                f"DELETE FROM edges WHERE dst_kind = ? AND dst_id IN ({q})", (_EVENT, *part)
            )
        for kind, node_id in linked:
            conn.execute(
                "DELETE FROM nodes WHERE kind = ? AND id = ? AND NOT EXISTS "
                "(SELECT 1 FROM edges WHERE src_kind = ? AND src_id = ?) AND NOT EXISTS "
                "(SELECT 1 FROM edges WHERE dst_kind = ? AND dst_id = ?)",
                (kind, node_id, kind, node_id, kind, node_id),
            )

    @staticmethod
    def _delete_nodes(conn: sqlite3.Connection, nodes: Sequence[tuple[str, str]]) -> None:
        for kind, node_id in nodes:
            if kind == _EVENT:
                conn.execute("DELETE FROM events WHERE id = ?", (node_id,))
            conn.execute("DELETE FROM nodes WHERE kind = ? AND id = ?", (kind, node_id))
            conn.execute("DELETE FROM edges WHERE src_kind = ? AND src_id = ?", (kind, node_id))
            conn.execute("DELETE FROM edges WHERE dst_kind = ? AND dst_id = ?", (kind, node_id))

    async def delete_nodes(self, nodes: Sequence[NodeRef]) -> None:
        rows = list(dict.fromkeys((NodeKind(n.kind).value, n.id) for n in nodes))
        if not rows:
            return
        await self._db.write(lambda c: self._delete_nodes(c, rows))
        await self._db.checkpoint()

    async def erase_namespace(self, namespace: str) -> int:
        prefix = scoped_id(namespace, "")

        def run(conn: sqlite3.Connection) -> int:
            ids = [
                r[0]
                for r in conn.execute("SELECT id FROM events WHERE namespace = ?", (namespace,))
            ]
            self._delete_events(conn, ids)
            # ids in [ "<ns>/", "<ns>0" ): every id that starts with "<ns>/" (an index range)
            scoped = conn.execute(
                "SELECT kind, id FROM nodes WHERE kind IN ('entity', 'session') "
                "AND id >= ? AND id < ?",
                (prefix, prefix[:-1] + "0"),
            ).fetchall()
            self._delete_nodes(conn, scoped)
            return len(ids)

        count = await self._db.write(run)
        await self._db.checkpoint()
        return count

    # ------------------------------------------------------------------ reads

    async def timeline(
        self,
        namespace: str,
        start: datetime | None,
        end: datetime | None,
        limit: int,
        types: Sequence[str] = (),
    ) -> list[Event]:
        if limit <= 0:
            return []
        where = ["namespace = ?"]
        params: list[Any] = [namespace]
        if start is not None:
            where.append("at >= ?")
            params.append(to_micros(start))
        if end is not None:
            where.append("at < ?")
            params.append(to_micros(end))
        if types:
            where.append(f"type IN ({marks(len(types))})")
            params.extend(types)
        params.append(int(limit))
        sql = (
            "SELECT id, namespace, type, summary, at, importance, agent_id, user_id, session_id, "
            f"task_id, entities FROM events WHERE {' AND '.join(where)} "
            "ORDER BY at DESC, id DESC LIMIT ?"
        )
        rows = await self._db.read(lambda c: c.execute(sql, params).fetchall())
        return [_event_of(r) for r in reversed(rows)]

    async def event_edges(self, event_ids: Sequence[str]) -> list[Relation]:
        unique = list(dict.fromkeys(event_ids))
        if not unique:
            return []

        def run(conn: sqlite3.Connection) -> list[Any]:
            found: dict[tuple[str, ...], Any] = {}
            for part in chunks(unique):
                q = marks(len(part))
                for end in ("src", "dst"):
                    for row in conn.execute(
                        "SELECT src_kind, src_id, type, dst_kind, dst_id, at, props FROM edges "
                        f"WHERE {end}_kind = ? AND {end}_id IN ({q})",
                        (_EVENT, *part),
                    ):
                        found[tuple(row[:5])] = row
            return [found[k] for k in sorted(found)]

        rows = await self._db.read(run)
        return [
            Relation(
                NodeRef(NodeKind(sk), si),
                type_,
                NodeRef(NodeKind(dk), di),
                from_micros(at),
                tuple(sorted(parse_json(props).items())),
            )
            for sk, si, type_, dk, di, at, props in rows
        ]

    async def events_about(self, user_id: str, limit: int) -> list[tuple[str, str]]:
        if limit <= 0 or not user_id:
            return []
        rows = await self._db.read(
            lambda c: c.execute(
                "SELECT e.id, e.namespace FROM edges x JOIN events e ON e.id = x.src_id "
                "WHERE x.dst_kind = 'user' AND x.dst_id = ? AND x.type = 'ABOUT' "
                "AND x.src_kind = 'event' ORDER BY e.id LIMIT ?",
                (user_id, int(limit)),
            ).fetchall()
        )
        return [(r[0], r[1]) for r in rows]

    async def neighbourhood(
        self, node: NodeRef, depth: int, limit: int, visible_to: str | None = None
    ) -> list[Neighbour]:
        if depth not in (1, 2):
            raise InvalidArgument("depth must be 1 or 2", field="depth")
        if limit <= 0:
            return []
        params = {
            "k": NodeKind(node.kind).value,
            "i": node.id,
            "depth": depth,
            "limit": limit,
            "me": None if visible_to is None else f"agent/{visible_to}",
        }
        rows = await self._db.read(lambda c: c.execute(_NEIGHBOURHOOD, params).fetchall())
        return [
            Neighbour(
                node=NodeRef(NodeKind(kind), nid),
                relation=type_,
                at=from_micros(at),
                distance=distance,
                label=label,
            )
            for kind, nid, type_, at, distance, label in rows
        ]
