"""The episodic graph in Neo4j: ``EpisodicGraph`` with the same semantics as
``SqliteEpisodicGraph``.

Graph model
-----------
* One label per ``NodeKind`` — ``:User :Agent :Session :Event :Entity :Task :Step`` — each with a
  unique ``id``. Events carry ``namespace, type, summary, at, importance, agent_id, user_id,
  session_id, task_id, entities`` (a JSON list of names); entities carry ``name`` (as first
  given). Entity and session ids are scoped to the event's namespace
  (``models.scoped_id(namespace, normalise_name(name))``, e.g. ``user/alice/kyoto``) and carry
  that ``namespace``; other nodes created by ``record`` keep the namespace of the event that
  created them. ``neighbourhood(visible_to=...)`` neither returns nor walks through events,
  entities or sessions of another agent's private namespace.
* ``record`` owns five links per event, replaced on every upsert and stamped with the event's
  time: ``-[:IN_SESSION]->(:Session)``, ``-[:BY]->(:Agent)``, ``-[:ABOUT]->(:User)``,
  ``-[:PART_OF]->(:Task)``, ``-[:MENTIONS]->(:Entity)``; a link whose id is empty is skipped.
* ``relate`` edges: the relationship type is the relation's type (validated against
  ``valid_relation_type`` before it is written into the statement); ``at`` and ``props`` (a JSON
  object) are overwritten when the same (src, type, dst) is related again.

Times are integer epoch microseconds; every write is one parameterised statement in one
transaction.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
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
from stores.codec import dump_json, load_json
from stores.neo4j_schema import (
    GRAPH_SCHEMA,
    Neo4jBacked,
    from_micros,
    to_micros,
)

#: NodeKind -> label; labels only ever come from this table.
LABELS: dict[NodeKind, str] = {
    NodeKind.USER: "User",
    NodeKind.AGENT: "Agent",
    NodeKind.SESSION: "Session",
    NodeKind.EVENT: "Event",
    NodeKind.ENTITY: "Entity",
    NodeKind.TASK: "Task",
    NodeKind.STEP: "Step",
}
_KINDS = {label: kind for kind, label in LABELS.items()}


def _link_clause(rel: str, label: str) -> str:
    """Create the event's ``rel`` links (the rows of ``e.links`` of that type)."""
    return f"""
FOREACH (l IN [x IN e.links WHERE x.rel = '{rel}'] |
  MERGE (n:{label} {{id: l.id}})
    ON CREATE SET n.namespace = e.namespace
  FOREACH (unnamed IN CASE WHEN l.name <> '' AND n.name IS NULL THEN [n] ELSE [] END |
    SET unnamed.name = l.name)
  CREATE (ev)-[:{rel} {{at: e.at}}]->(n))"""


# All of an event's record-owned links are deleted first, so re-creating them cannot duplicate.
# The links themselves come from ``gateway.core.model.models.event_links`` (the one event-link rule).
_RECORD = (
    f"""
UNWIND $events AS e
MERGE (ev:Event {{id: e.id}})
SET ev.namespace = e.namespace, ev.type = e.type, ev.summary = e.summary, ev.at = e.at,
    ev.importance = e.importance, ev.agent_id = e.agent_id, ev.user_id = e.user_id,
    ev.session_id = e.session_id, ev.task_id = e.task_id, ev.entities = e.entities_json
WITH ev, e
CALL (ev) {{
  MATCH (ev)-[old:{"|".join(rel for rel, _ in EVENT_LINK_TYPES)}]->()
  DELETE old
}}"""
    + "".join(_link_clause(rel, LABELS[kind]) for rel, kind in EVENT_LINK_TYPES)
    + "\n"
)

_RELATE_GROUP = """
CALL () {{
  UNWIND ${param} AS r
  MERGE (a:{src} {{id: r.src}})
    ON CREATE SET a.namespace = r.src_ns
  MERGE (b:{dst} {{id: r.dst}})
    ON CREATE SET b.namespace = r.dst_ns
  MERGE (a)-[x:{rel}]->(b)
  SET x.at = r.at, x.props = r.props
}}"""

# Distinct nodes other than the start, each at its shortest distance, reached by its newest
# last-hop edge at that distance; nearest first, then newest edge, then (kind, id).
_NEIGHBOURHOOD = """
MATCH (s:{label} {{id: $id}})
CALL (s) {{
  MATCH (s)-[r]-(n) WHERE n <> s AND {visible_n}
  RETURN n, r, 1 AS d{second_hop}
}}
WITH n, d, r ORDER BY d, r.at DESC, type(r)
WITH n, head(collect({{d: d, at: r.at, rel: type(r)}})) AS best
WITH n, best, toLower(head(labels(n))) AS kind
RETURN kind, n.id AS id, best.rel AS rel, best.at AS at, best.d AS distance,
       CASE WHEN n:Event THEN coalesce(n.summary, '')
            WHEN n:Entity THEN coalesce(n.name, '')
            ELSE '' END AS label
ORDER BY distance, at DESC, kind, id
LIMIT $limit
"""

_SECOND_HOP = """
  UNION ALL
  MATCH (s)-[]-(m)-[r]-(n) WHERE n <> s AND m <> s AND {visible_m} AND {visible_n}
  RETURN n, r, 2 AS d"""


def _visible(var: str) -> str:
    """``var`` is not an event, entity or session of another agent's private namespace
    (``$me`` is ``agent/<caller>``; null: no filter)."""
    return (
        f"($me IS NULL OR NOT (({var}:Event OR {var}:Entity OR {var}:Session) "
        f"AND {var}.namespace STARTS WITH 'agent/' AND {var}.namespace <> $me))"
    )


# Events go with every edge; entity and session nodes they linked to and nothing else reaches
# any more go too (their names came from the erased events).
_DELETE_EVENTS = """
UNWIND $ids AS id
MATCH (e:Event {id: id})
OPTIONAL MATCH (e)-[]->(n) WHERE n:Entity OR n:Session
WITH collect(DISTINCT e) AS events, collect(DISTINCT n) AS linked
FOREACH (e IN events | DETACH DELETE e)
WITH linked
UNWIND linked AS n
WITH n WHERE NOT (n)--()
DELETE n
"""

_EVENT_FIELDS = (
    "e.id AS id, e.namespace AS namespace, e.type AS type, e.summary AS summary, e.at AS at, "
    "e.importance AS importance, e.agent_id AS agent_id, e.user_id AS user_id, "
    "e.session_id AS session_id, e.task_id AS task_id, e.entities AS entities"
)


def _event_row(e: Event) -> dict[str, Any]:
    return {
        "id": e.id,
        "namespace": e.namespace,
        "type": e.type,
        "summary": e.summary,
        "at": to_micros(e.at),
        "importance": float(e.importance),
        "agent_id": e.agent_id,
        "user_id": e.user_id,
        "session_id": e.session_id,
        "task_id": e.task_id,
        "entities_json": dump_json(list(e.entities)),
        "links": [
            {"rel": link.type, "id": link.node.id, "name": link.label} for link in event_links(e)
        ],
    }


def _event_of(row: Any) -> Event:
    at = from_micros(row["at"])
    assert at is not None
    return Event(
        id=row["id"],
        namespace=row["namespace"],
        type=row["type"],
        summary=row["summary"],
        at=at,
        importance=float(row["importance"]),
        agent_id=row["agent_id"],
        user_id=row["user_id"],
        session_id=row["session_id"],
        task_id=row["task_id"],
        entities=load_json(row["entities"], []),
    )


def _label(kind: NodeKind | str) -> str:
    return LABELS[NodeKind(kind)]


def _scope(node: NodeRef) -> str:
    """The namespace of an entity or session node named by ``relate`` (from its scoped id)."""
    return scope_of(node.id) if NodeKind(node.kind) in SCOPED_KINDS else ""


class Neo4jEpisodicGraph(Neo4jBacked):
    """``EpisodicGraph`` over a Neo4j 5 database (Community edition is enough)."""

    _schema = GRAPH_SCHEMA

    # ------------------------------------------------------------------ writes

    async def record(self, events: Sequence[Event]) -> None:
        if not events:
            return
        if any(not e.id for e in events):
            raise InvalidArgument("every event needs an id", field="events")
        latest = {e.id: e for e in events}  # a later copy of an event in the batch wins
        rows = [_event_row(latest[i]) for i in sorted(latest)]
        await self._db.write(_RECORD, {"events": rows})

    async def relate(self, relations: Sequence[Relation]) -> None:
        if not relations:
            return
        groups: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
        for r in relations:
            if not valid_relation_type(r.type):
                raise InvalidArgument(
                    f"relation type {r.type!r} must be upper snake case (at most 40 characters)",
                    field="type",
                )
            if not r.src.id or not r.dst.id:
                raise InvalidArgument("both ends of a relation need an id", field="relations")
            key = (_label(r.src.kind), r.type, _label(r.dst.kind))
            groups.setdefault(key, []).append(
                {
                    "src": r.src.id,
                    "dst": r.dst.id,
                    "src_ns": _scope(r.src),
                    "dst_ns": _scope(r.dst),
                    "at": to_micros(r.at),
                    "props": dump_json(dict(sorted(r.properties))),
                }
            )
        statement: list[str] = []
        params: dict[str, Any] = {}
        for n, ((src, rel, dst), rows) in enumerate(groups.items()):
            param = f"g{n}"
            statement.append(_RELATE_GROUP.format(param=param, src=src, dst=dst, rel=rel))
            params[param] = rows
        await self._db.write("\n".join(statement), params)

    async def delete_events(self, ids: Sequence[str]) -> None:
        unique = list(dict.fromkeys(ids))
        if unique:
            await self._db.write(_DELETE_EVENTS, {"ids": unique})

    async def delete_nodes(self, nodes: Sequence[NodeRef]) -> None:
        groups: dict[str, list[str]] = {}
        for n in nodes:
            groups.setdefault(_label(n.kind), []).append(n.id)
        for label, ids in groups.items():
            await self._db.write(
                f"UNWIND $ids AS id MATCH (n:{label} {{id: id}}) DETACH DELETE n", {"ids": ids}
            )

    async def erase_namespace(self, namespace: str) -> int:
        rows = await self._db.read(
            "MATCH (e:Event) WHERE e.namespace = $ns RETURN e.id AS id", {"ns": namespace}
        )
        ids = [r["id"] for r in rows]
        for start in range(0, len(ids), 1000):
            await self._db.write(_DELETE_EVENTS, {"ids": ids[start : start + 1000]})
        prefix = scoped_id(namespace, "")
        for label in (LABELS[NodeKind.ENTITY], LABELS[NodeKind.SESSION]):
            await self._db.write(
                f"MATCH (n:{label}) WHERE n.id STARTS WITH $prefix DETACH DELETE n",
                {"prefix": prefix},
            )
        return len(ids)

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
        where = ["e.namespace = $namespace"]
        params: dict[str, Any] = {"namespace": namespace, "limit": int(limit)}
        if start is not None:
            where.append("e.at >= $start")
            params["start"] = to_micros(start)
        else:  # a predicate on ``at`` too, or the planner scans every :Event (55k: ~80 ms)
            where.append("e.at IS NOT NULL")
        if end is not None:
            where.append("e.at < $end")
            params["end"] = to_micros(end)
        if types:
            where.append("e.type IN $types")
            params["types"] = list(types)
        rows = await self._db.read(
            f"MATCH (e:Event) USING INDEX e:Event(namespace, at) WHERE {' AND '.join(where)} "
            f"RETURN {_EVENT_FIELDS} ORDER BY e.at DESC, e.id DESC LIMIT $limit",
            params,
        )
        return [_event_of(r) for r in reversed(rows)]

    async def event_edges(self, event_ids: Sequence[str]) -> list[Relation]:
        unique = list(dict.fromkeys(event_ids))
        if not unique:
            return []
        rows = await self._db.read(
            "UNWIND $ids AS id MATCH (e:Event {id: id})-[r]-() "
            "WITH DISTINCT r, startNode(r) AS a, endNode(r) AS b "
            "RETURN head(labels(a)) AS src_label, a.id AS src, type(r) AS type, "
            "head(labels(b)) AS dst_label, b.id AS dst, r.at AS at, r.props AS props",
            {"ids": unique},
        )
        out = []
        for row in rows:
            at = from_micros(row["at"])
            if at is None or row["src_label"] not in _KINDS or row["dst_label"] not in _KINDS:
                continue  # not one of ours
            props: dict[str, str] = load_json(row["props"], {}) if row["props"] else {}
            out.append(
                Relation(
                    NodeRef(_KINDS[row["src_label"]], row["src"]),
                    row["type"],
                    NodeRef(_KINDS[row["dst_label"]], row["dst"]),
                    at,
                    tuple(sorted(props.items())),
                )
            )
        out.sort(key=lambda r: (r.src.kind, r.src.id, r.type, r.dst.kind, r.dst.id))
        return out

    async def events_about(self, user_id: str, limit: int) -> list[tuple[str, str]]:
        if limit <= 0 or not user_id:
            return []
        rows = await self._db.read(
            "MATCH (:User {id: $user})<-[:ABOUT]-(e:Event) "
            "RETURN e.id AS id, e.namespace AS namespace ORDER BY id LIMIT $limit",
            {"user": user_id, "limit": int(limit)},
        )
        return [(r["id"], r["namespace"]) for r in rows]

    async def neighbourhood(
        self, node: NodeRef, depth: int, limit: int, visible_to: str | None = None
    ) -> list[Neighbour]:
        if depth not in (1, 2):
            raise InvalidArgument("depth must be 1 or 2", field="depth")
        if limit <= 0:
            return []
        second = _SECOND_HOP.format(visible_m=_visible("m"), visible_n=_visible("n"))
        rows = await self._db.read(
            _NEIGHBOURHOOD.format(
                label=_label(node.kind),
                second_hop=second if depth == 2 else "",
                visible_n=_visible("n"),
            ),
            {
                "id": node.id,
                "limit": int(limit),
                "me": None if visible_to is None else f"agent/{visible_to}",
            },
        )
        out: list[Neighbour] = []
        for row in rows:
            at = from_micros(row["at"])
            if at is None or row["kind"] not in {k.value for k in NodeKind}:
                continue  # not one of ours (no time stamp, or a foreign label)
            out.append(
                Neighbour(
                    node=NodeRef(NodeKind(row["kind"]), row["id"]),
                    relation=row["rel"],
                    at=at,
                    distance=int(row["distance"]),
                    label=row["label"],
                )
            )
        return out
