"""EpisodicGraph contract (stores.contracts.EpisodicGraph), run against every adapter.

Every test uses its own uuid namespaces, event ids, session/agent/user/task ids and entity names,
so the suite can run against one shared real server without wiping it.

Pinned here beyond the docstrings of the contract:

* ``record`` links an event -[IN_SESSION]-> session, -[BY]-> agent, -[ABOUT]-> user,
  -[PART_OF]-> task, -[MENTIONS]-> entity, each edge ``at`` = the event's time; empty ids make no
  link. Entity and session nodes belong to the event's namespace: an entity's id is
  ``scoped_id(namespace, normalise_name(name))`` (case-folded), its label the name as given; a
  session's id is ``scoped_id(namespace, session_id)``; an event node's label is its summary;
  other nodes have label ''. Two namespaces' "Kyoto" are two nodes.
* ``neighbourhood(visible_to=agent)`` never returns, nor walks through, an event, entity or
  session of another agent's private namespace (``agent/<x>``).
* ``neighbourhood`` walks edges in both directions; distinct nodes, never the start node; a node's
  ``distance`` is the shortest; ``relation``/``at`` are those of the newest edge of the last hop;
  order: distance, then newest ``at``.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest

from gateway.core.model.errors import InvalidArgument
from gateway.core.model.models import Event, Neighbour, NodeKind, NodeRef, Relation, scoped_id
from gateway.core.ports.ports import EpisodicGraph
from stores.breaker import Breaker, BreakerPolicy, guard

T0 = datetime(2024, 5, 1, 12, 0, 0, tzinfo=UTC)
IST = timezone(timedelta(hours=5, minutes=30))


@pytest.fixture(params=["sqlite", "sqlite+breaker", pytest.param("neo4j", marks=pytest.mark.real)])
def make_graph(request: pytest.FixtureRequest, tmp_path: Path) -> Callable[[], EpisodicGraph]:
    if request.param == "sqlite":
        from stores.sqlite_graph import SqliteEpisodicGraph

        return lambda: SqliteEpisodicGraph(tmp_path / "graph.db")
    if request.param == "sqlite+breaker":  # the breaker keeps the contract
        from stores.sqlite_graph import SqliteEpisodicGraph

        def guarded() -> EpisodicGraph:
            store = SqliteEpisodicGraph(tmp_path / "graph.db")
            return guard(EpisodicGraph, store, Breaker("EpisodicGraph", store, BreakerPolicy()))

        return guarded
    uri = request.getfixturevalue("neo4j_uri")
    from stores.neo4j_graph import Neo4jEpisodicGraph

    return lambda: Neo4jEpisodicGraph(uri)


@pytest.fixture
async def graph(make_graph: Callable[[], EpisodicGraph]) -> AsyncIterator[EpisodicGraph]:
    g = make_graph()
    await g.start()
    try:
        yield g
    finally:
        await g.close()


def uid(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex}"


def event(ns: str, at: datetime, **fields: object) -> Event:
    values: dict[str, object] = {
        "id": uid("ev"),
        "namespace": ns,
        "type": "message",
        "summary": "something happened",
        "at": at,
    }
    values.update(fields)
    return Event(**values)  # type: ignore[arg-type]


def ref(kind: NodeKind, node_id: str) -> NodeRef:
    return NodeRef(kind, node_id)


def ent(ns: str, name: str) -> NodeRef:
    return NodeRef(NodeKind.ENTITY, scoped_id(ns, name.lower()))


def sess(ns: str, session_id: str) -> NodeRef:
    return NodeRef(NodeKind.SESSION, scoped_id(ns, session_id))


def ev(e: Event) -> NodeRef:
    return NodeRef(NodeKind.EVENT, e.id)


def by_node(ns: list[Neighbour]) -> dict[NodeRef, Neighbour]:
    out = {n.node: n for n in ns}
    assert len(out) == len(ns), "neighbours must be distinct"
    return out


async def test_is_an_episodic_graph(graph: EpisodicGraph) -> None:
    assert isinstance(graph, EpisodicGraph)
    await graph.ping()
    assert await graph.durability() == ""  # fsync per commit / forced transaction log


async def test_record_and_timeline(graph: EpisodicGraph) -> None:
    ns, other = uid("ns"), uid("ns")
    events = [
        event(
            ns,
            T0 + timedelta(minutes=i),
            type="tool" if i % 2 else "message",
            summary=f"event {i}",
            importance=0.1 * i,
            agent_id=uid("agent"),
            user_id=uid("user"),
            session_id=uid("session"),
            task_id=uid("task"),
            entities=[f"Entity {i}", "香菜"],
        )
        for i in range(5)
    ]
    foreign = event(other, T0)
    await graph.record([events[3], events[0], events[4], foreign, events[1], events[2]])

    got = await graph.timeline(ns, None, None, 100)
    assert got == events  # every field round-trips, oldest first, namespace isolated
    assert all(e.at.tzinfo is not None for e in got)
    # start inclusive, end exclusive
    got = await graph.timeline(ns, events[1].at, events[3].at, 100)
    assert [e.id for e in got] == [events[1].id, events[2].id]
    # limit keeps the newest, returned oldest first
    got = await graph.timeline(ns, None, None, 2)
    assert [e.id for e in got] == [events[3].id, events[4].id]
    got = await graph.timeline(ns, None, events[3].at, 2)
    assert [e.id for e in got] == [events[1].id, events[2].id]
    # types filter
    got = await graph.timeline(ns, None, None, 100, types=["tool"])
    assert [e.id for e in got] == [events[1].id, events[3].id]
    got = await graph.timeline(ns, None, None, 100, types=["tool", "message"])
    assert len(got) == 5
    assert await graph.timeline(ns, None, None, 100, types=["nothing"]) == []
    assert await graph.timeline(uid("ns"), None, None, 100) == []
    assert [e.id for e in await graph.timeline(other, None, None, 100)] == [foreign.id]


async def test_timeline_timezone_aware(graph: EpisodicGraph) -> None:
    ns = uid("ns")
    local = datetime(2024, 5, 1, 17, 30, 0, 250000, tzinfo=IST)  # == 12:00:00.25 UTC
    e = event(ns, local)
    await graph.record([e])

    got = await graph.timeline(ns, None, None, 10)
    assert len(got) == 1
    assert got[0].at == local and got[0].at.tzinfo is not None
    assert got[0].at.astimezone(UTC) == datetime(2024, 5, 1, 12, 0, 0, 250000, tzinfo=UTC)
    start_utc = datetime(2024, 5, 1, 12, 0, 0, 250000, tzinfo=UTC)
    assert len(await graph.timeline(ns, start_utc, start_utc + timedelta(microseconds=1), 10)) == 1
    assert await graph.timeline(ns, None, start_utc, 10) == []
    assert await graph.timeline(ns, start_utc + timedelta(microseconds=1), None, 10) == []


async def test_record_is_an_idempotent_upsert(graph: EpisodicGraph) -> None:
    ns = uid("ns")
    entity = uid("Entity")
    e = event(ns, T0, session_id=uid("session"), entities=[entity])
    await graph.record([e])
    await graph.record([e, e])
    assert await graph.timeline(ns, None, None, 10) == [e]
    around = await graph.neighbourhood(ev(e), 1, 50)
    assert len(by_node(around)) == 2  # session + entity, once each

    changed = Event(**{**{f: getattr(e, f) for f in Event.__slots__}, "summary": "edited"})
    await graph.record([changed])
    got = await graph.timeline(ns, None, None, 10)
    assert [(x.id, x.summary) for x in got] == [(e.id, "edited")]
    from_entity = await graph.neighbourhood(ent(ns, entity), 1, 10)
    assert [(n.node, n.label) for n in from_entity] == [(ev(e), "edited")]


async def test_record_links_and_skips_empty_ids(graph: EpisodicGraph) -> None:
    ns = uid("ns")
    ids = {k: uid(k) for k in ("agent", "user", "session", "task")}
    name = uid("Dark Mode")
    full = event(
        ns,
        T0,
        agent_id=ids["agent"],
        user_id=ids["user"],
        session_id=ids["session"],
        task_id=ids["task"],
        entities=[name],
    )
    only_agent = event(ns, T0 + timedelta(hours=1), agent_id=uid("agent"))
    await graph.record([full, only_agent])

    got = by_node(await graph.neighbourhood(ev(full), 1, 50))
    want = {
        ref(NodeKind.AGENT, ids["agent"]): ("BY", ""),
        ref(NodeKind.USER, ids["user"]): ("ABOUT", ""),
        sess(ns, ids["session"]): ("IN_SESSION", ""),
        ref(NodeKind.TASK, ids["task"]): ("PART_OF", ""),
        ent(ns, name): ("MENTIONS", name),
    }
    assert {k: (v.relation, v.label) for k, v in got.items()} == want
    assert all(n.distance == 1 and n.at == T0 for n in got.values())

    lone = await graph.neighbourhood(ev(only_agent), 2, 50)
    assert [(n.node, n.relation, n.distance) for n in lone] == [
        (ref(NodeKind.AGENT, only_agent.agent_id), "BY", 1)
    ]


async def test_neighbourhood_depth_order_and_limit(graph: EpisodicGraph) -> None:
    ns = uid("ns")
    coffee = uid("Coffee")
    coffee_ref = ent(ns, coffee)
    e1 = event(ns, T0, summary="first", session_id=uid("s"), entities=[coffee])
    e2 = event(
        ns, T0 + timedelta(hours=1), summary="second", session_id=uid("s"), entities=[coffee]
    )
    e3 = event(
        ns, T0 + timedelta(hours=2), summary="third", session_id=e1.session_id, entities=[coffee]
    )
    await graph.record([e1, e2, e3])

    # from the entity: the events mentioning it, newest edge first
    around = await graph.neighbourhood(coffee_ref, 1, 10)
    assert [(n.node, n.relation, n.at, n.distance, n.label) for n in around] == [
        (ev(e3), "MENTIONS", e3.at, 1, "third"),
        (ev(e2), "MENTIONS", e2.at, 1, "second"),
        (ev(e1), "MENTIONS", e1.at, 1, "first"),
    ]
    assert [n.node for n in await graph.neighbourhood(coffee_ref, 1, 2)] == [ev(e3), ev(e2)]

    # from e1, depth 1: its session and the entity; the other events are two hops away
    d1 = await graph.neighbourhood(ev(e1), 1, 10)
    assert {n.node for n in d1} == {sess(ns, e1.session_id), coffee_ref}
    assert all(n.distance == 1 for n in d1)
    assert by_node(d1)[coffee_ref].label == coffee

    d2 = await graph.neighbourhood(ev(e1), 2, 10)
    got = by_node(d2)
    assert ev(e1) not in got  # never the start node, though reachable in two hops
    assert {k for k, v in got.items() if v.distance == 1} == {n.node for n in d1}
    assert {k for k, v in got.items() if v.distance == 2} == {ev(e2), ev(e3)}
    assert [n.distance for n in d2] == sorted(n.distance for n in d2)  # nearest first
    second_ring = [n for n in d2 if n.distance == 2]
    assert [n.node for n in second_ring] == [ev(e3), ev(e2)]  # then newest edge first
    n2 = got[ev(e2)]
    assert (n2.relation, n2.at, n2.label) == ("MENTIONS", e2.at, "second")
    assert got[ev(e3)].at == e3.at and got[ev(e3)].relation in {"MENTIONS", "IN_SESSION"}

    limited = await graph.neighbourhood(ev(e1), 2, 3)
    assert len(limited) == 3
    assert {n.node for n in limited} == {n.node for n in d2[:3]}  # d2[:3]: both d1 nodes and e3
    assert await graph.neighbourhood(ref(NodeKind.ENTITY, uid("nobody")), 2, 10) == []


async def test_relate_is_idempotent_and_creates_nodes(graph: EpisodicGraph) -> None:
    ns = uid("ns")
    cause = event(ns, T0, summary="cause")
    await graph.record([cause])
    step = ref(NodeKind.STEP, uid("step"))  # does not exist yet
    later = T0 + timedelta(minutes=5)
    rel = Relation(ev(cause), "CAUSED", step, later, (("why", "test"),))
    await graph.relate([rel])
    await graph.relate([rel, rel])

    from_step = await graph.neighbourhood(step, 1, 10)
    assert [(n.node, n.relation, n.at, n.distance, n.label) for n in from_step] == [
        (ev(cause), "CAUSED", later, 1, "cause")
    ]
    from_cause = await graph.neighbourhood(ev(cause), 1, 10)
    assert [(n.node, n.relation) for n in from_cause] == [(step, "CAUSED")]

    # an edge between two nodes that exist nowhere else: both are created
    a, b = ref(NodeKind.USER, uid("user")), ref(NodeKind.AGENT, uid("agent"))
    await graph.relate([Relation(a, "TRUSTS", b, T0)])
    assert [n.node for n in await graph.neighbourhood(b, 1, 10)] == [a]
    await graph.relate([])


async def test_relate_rejects_a_bad_relation_type(graph: EpisodicGraph) -> None:
    a, b = ref(NodeKind.USER, uid("user")), ref(NodeKind.AGENT, uid("agent"))
    with pytest.raises(InvalidArgument):
        await graph.relate([Relation(a, "knows`]->() DETACH DELETE n //", b, T0)])
    assert await graph.neighbourhood(a, 1, 10) == []


async def test_delete_events(graph: EpisodicGraph) -> None:
    ns = uid("ns")
    topic = uid("Topic")
    topic_ref = ent(ns, topic)
    keep = event(ns, T0, entities=[topic], session_id=uid("s"))
    drop = event(ns, T0 + timedelta(hours=1), entities=[topic], session_id=keep.session_id)
    await graph.record([keep, drop])
    step = ref(NodeKind.STEP, uid("step"))
    await graph.relate([Relation(step, "LED_TO", ev(drop), T0)])

    await graph.delete_events([drop.id, uid("ev-missing")])
    assert await graph.timeline(ns, None, None, 10) == [keep]
    assert [n.node for n in await graph.neighbourhood(topic_ref, 2, 10)] == [
        ev(keep),
        sess(ns, keep.session_id),
    ]
    assert await graph.neighbourhood(step, 1, 10) == []
    assert await graph.neighbourhood(ev(drop), 1, 10) == []
    await graph.delete_events([])
    await graph.delete_events([drop.id])  # deleting again is a no-op


async def test_event_edges_lists_every_edge_of_the_events_once(graph: EpisodicGraph) -> None:
    ns = uid("ns")
    a = event(ns, T0, summary="a", session_id=uid("s"), entities=[uid("Topic")])
    b = event(ns, T0 + timedelta(minutes=1), summary="b")
    await graph.record([a, b])
    step = ref(NodeKind.STEP, uid("step"))
    later = T0 + timedelta(hours=1)
    await graph.relate(
        [
            Relation(ev(a), "CAUSED", ev(b), later, (("why", "test"),)),
            Relation(step, "LED_TO", ev(b), T0),
        ]
    )
    edges = await graph.event_edges([a.id, b.id, uid("ev-missing")])
    got = {(r.src, r.type, r.dst): r for r in edges}
    assert len(got) == len(edges) == 4  # the a->b edge once, though it touches both events
    assert got[(ev(a), "CAUSED", ev(b))].at == later
    assert got[(ev(a), "CAUSED", ev(b))].properties == (("why", "test"),)
    assert got[(step, "LED_TO", ev(b))].at == T0
    session = ref(NodeKind.SESSION, scoped_id(ns, a.session_id))
    assert (ev(a), "IN_SESSION", session) in got
    assert (ev(a), "MENTIONS", ref(NodeKind.ENTITY, scoped_id(ns, a.entities[0].lower()))) in got
    assert (ev(a), "BY", ref(NodeKind.AGENT, "")) not in got
    assert await graph.event_edges([]) == []


async def test_entities_and_sessions_are_per_namespace(graph: EpisodicGraph) -> None:
    """M7: the same name in two namespaces is two nodes; the event-link rule scopes them."""
    a, b = f"user/{uid('a')}", f"agent/{uid('b')}"
    name, session = uid("Kyoto"), uid("s")
    ea = event(a, T0, entities=[name], session_id=session)
    eb = event(b, T0 + timedelta(minutes=1), entities=[name.upper()], session_id=session)
    await graph.record([ea, eb])
    assert [n.node for n in await graph.neighbourhood(ent(a, name), 1, 10)] == [ev(ea)]
    assert [n.node for n in await graph.neighbourhood(ent(b, name), 1, 10)] == [ev(eb)]
    assert [n.node for n in await graph.neighbourhood(sess(b, session), 1, 10)] == [ev(eb)]
    # two hops from one event never reach the other namespace's event
    assert ev(eb) not in {n.node for n in await graph.neighbourhood(ev(ea), 2, 50)}


async def test_neighbourhood_hides_other_agents_private_nodes(graph: EpisodicGraph) -> None:
    """M7: a caller never sees, nor walks through, another agent's private events, entities and
    sessions; identities (agents, users) stay visible; the owner and the master see it all."""
    owner, other = uid("researcher"), uid("coder")
    private, shared = f"agent/{owner}", f"user/{uid('alice')}"
    secret, public = uid("Secret Project"), uid("Tea")
    hidden = event(
        private, T0, agent_id=owner, session_id=uid("s"), entities=[secret], user_id=uid("u")
    )
    seen = event(shared, T0 + timedelta(minutes=1), agent_id=owner, entities=[public])
    await graph.record([hidden, seen])
    agent_ref = ref(NodeKind.AGENT, owner)
    everything = {n.node for n in await graph.neighbourhood(agent_ref, 2, 50)}
    assert {ev(hidden), ent(private, secret), sess(private, hidden.session_id)} <= everything
    assert ref(NodeKind.USER, hidden.user_id) in everything

    as_other = await graph.neighbourhood(agent_ref, 2, 50, visible_to=other)
    got = {n.node for n in as_other}
    assert got == {ev(seen), ent(shared, public)}  # not the user behind the hidden event either
    assert all(private not in n.label and secret not in n.label for n in as_other)
    as_owner = {n.node for n in await graph.neighbourhood(agent_ref, 2, 50, visible_to=owner)}
    assert as_owner == everything
    # relate-created nodes take their namespace from the scoped id
    linked = ent(private, uid("Linked"))
    await graph.relate([Relation(ev(seen), "SEE_ALSO", linked, T0)])
    assert linked not in {n.node for n in await graph.neighbourhood(ev(seen), 1, 50, other)}
    assert linked in {n.node for n in await graph.neighbourhood(ev(seen), 1, 50, owner)}


# ------------------------------------------------------------------ erasure


async def test_delete_events_takes_orphaned_entities_and_sessions(graph: EpisodicGraph) -> None:
    ns = uid("ns")
    only, shared = uid("Secret Name"), uid("Shared")
    drop = event(ns, T0, entities=[only, shared], session_id=uid("s"))
    keep = event(ns, T0 + timedelta(hours=1), entities=[shared])
    await graph.record([drop, keep])
    await graph.delete_events([drop.id])
    assert await graph.neighbourhood(ent(ns, only), 1, 10) == []  # gone with its only event
    assert await graph.neighbourhood(sess(ns, drop.session_id), 1, 10) == []
    # a node that is gone cannot be linked back to by a neighbour walk
    assert {n.node for n in await graph.neighbourhood(ent(ns, shared), 2, 10)} == {ev(keep)}


async def test_erase_namespace_and_events_about(graph: EpisodicGraph) -> None:
    doomed, other = f"user/{uid('alice')}", f"agent/{uid('coder')}"
    user = uid("alice")
    name = uid("Kyoto")
    mine = [
        event(doomed, T0 + timedelta(minutes=i), entities=[name], session_id="s1", user_id=user)
        for i in range(3)
    ]
    about = event(other, T0, entities=[name], user_id=user, agent_id=uid("coder"))
    unrelated = event(other, T0 + timedelta(hours=1), entities=[name])
    await graph.record([*mine, about, unrelated])
    found = await graph.events_about(user, 10)
    assert sorted(found) == sorted([(e.id, doomed) for e in mine] + [(about.id, other)])
    assert len(await graph.events_about(user, 2)) == 2
    assert await graph.events_about(uid("nobody"), 10) == []

    assert await graph.erase_namespace(doomed) == 3
    assert await graph.timeline(doomed, None, None, 10) == []
    assert await graph.neighbourhood(ent(doomed, name), 1, 10) == []
    assert await graph.neighbourhood(sess(doomed, "s1"), 1, 10) == []
    assert await graph.events_about(user, 10) == [(about.id, other)]
    assert [e.id for e in await graph.timeline(other, None, None, 10)] == [about.id, unrelated.id]
    assert {n.node for n in await graph.neighbourhood(ent(other, name), 1, 10)} == {
        ev(about),
        ev(unrelated),
    }
    assert await graph.erase_namespace(doomed) == 0  # again: nothing left

    # the user's node goes with every edge (relations too)
    await graph.relate([Relation(ref(NodeKind.USER, user), "KNOWS", ref(NodeKind.AGENT, "x"), T0)])
    await graph.delete_nodes([ref(NodeKind.USER, user)])
    assert await graph.neighbourhood(ref(NodeKind.USER, user), 1, 10) == []
    assert ref(NodeKind.USER, user) not in {
        n.node for n in await graph.neighbourhood(ev(about), 1, 10)
    }
    await graph.delete_nodes([])
