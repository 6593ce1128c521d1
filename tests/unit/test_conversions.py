"""Proto <-> domain round trips for every converted message type."""

from __future__ import annotations

from datetime import UTC, datetime

from gateway.core.model.models import (
    Event,
    Layer,
    Memory,
    Neighbour,
    NodeKind,
    NodeRef,
    Status,
    Turn,
    Zone,
)
from gateway.core.writing.inputs import WriteInput
from gateway.core.writing.writes import WriteOutcome
from gateway.rpc import conversions as cv
from memgate.v1 import memgate_pb2 as pb

T = datetime(2026, 11, 30, 8, 15, 30, 123456, tzinfo=UTC)


def test_memory_roundtrip() -> None:
    m = Memory(
        id="m1",
        namespace="user/u",
        layer=Layer.PROCEDURAL,
        content="导出 markdown",
        type="skill",
        importance=0.4,
        confidence=0.7,
        source_agent="a",
        source_session="s",
        task_id="t",
        created_at=T,
        updated_at=T,
        last_accessed_at=T,
        access_count=3,
        version=2,
        metadata={"k": "v"},
        evidence=["e"],
        event_time=T,
        status=Status.ARCHIVED,
        entities=["x"],
    )
    assert cv.memory_from_pb(cv.memory_to_pb(m)) == m


def test_memory_hides_internal_metadata() -> None:
    m = Memory(
        id="m",
        namespace="global",
        layer=Layer.SEMANTIC,
        content="c",
        metadata={"memgate.write_id": "w", "k": "v"},
    )
    assert dict(cv.memory_to_pb(m).metadata) == {"k": "v"}


def test_write_item_roundtrip() -> None:
    w = WriteInput(
        namespace="task/t",
        layer="working",
        content="c",
        type="turn",
        importance=0.2,
        confidence=None,
        session_id="s",
        task_id="t",
        event_time=T,
        metadata={"a": "b"},
        evidence=["e"],
        entities=["n"],
        idempotency_key="k",
        role="tool",
        zone="scratch",
    )
    assert cv.write_item_from_pb(cv.write_item_to_pb(w)) == w


def test_write_item_unset_optionals_and_unknown_layer() -> None:
    w = cv.write_item_from_pb(pb.WriteItem(namespace="global", content="c"))
    assert w.importance is None and w.confidence is None and w.layer == "" and w.event_time is None
    assert cv.write_item_from_pb(pb.WriteItem(layer=42)).layer == "#42"  # type: ignore[arg-type]


def test_write_result_roundtrip() -> None:
    o = WriteOutcome(
        id="w",
        duplicate=True,
        applied=True,
        journal_seq=9,
        redactions=["phone"],
        quarantined=True,
        skipped="",
        proposal_id="p",
    )
    assert cv.write_result_from_pb(cv.write_result_to_pb(o)) == o


def test_turn_event_neighbour_roundtrip() -> None:
    t = Turn(id="t", role="user", content="hi", zone=Zone.TASK, at=T, metadata={"a": "b"})
    assert cv.turn_from_pb(cv.turn_to_pb(t)) == t
    e = Event(
        id="e",
        namespace="user/u",
        type="x",
        summary="s",
        at=T,
        importance=0.3,
        agent_id="a",
        user_id="u",
        session_id="s",
        task_id="t",
        entities=["n"],
    )
    assert cv.event_from_pb(cv.event_to_pb(e)) == e
    n = Neighbour(
        node=NodeRef(NodeKind.ENTITY, "n"), relation="MENTIONS", at=T, distance=2, label="N"
    )
    assert cv.neighbour_from_pb(cv.neighbour_to_pb(n)) == n


def test_recall_query_defaults() -> None:
    q = cv.recall_query_from_pb(
        pb.RecallRequest(query="q", namespaces=["global", "global"], layers=[pb.SEMANTIC])
    )
    assert q.namespaces == ("global",) and q.layers == (Layer.SEMANTIC,) and q.top_k == 10
    assert q.start is None and q.end is None


def test_response_shapes() -> None:
    from gateway.core.ports.ports import BreakerStatus
    from gateway.core.usecases.facts import FactOutcome

    f = cv.fact_outcome_to_pb(FactOutcome("p1", 2, True, "m1"))
    assert (f.pending_id, f.sessions_seen, f.promoted, f.memory_id) == ("p1", 2, True, "m1")
    b = cv.layer_stats_to_pb(BreakerStatus("graph", "open", 1, "", 1.5, 9.0, 7, 2))
    assert (b.layer, b.latency_p99_ms, b.breaker, b.calls, b.failures) == (
        "graph",
        9.0,
        "open",
        7,
        2,
    )
    r = cv.recall_stats_to_pb({"layer": Layer.EPISODIC, "recalls": 4, "hits": 3, "hit_rate": 0.75})
    assert (r.layer, r.recalls, r.hits, r.hit_rate) == (pb.EPISODIC, 4, 3, 0.75)


def test_timestamps_are_what_protobuf_computes() -> None:
    """``cv.ts`` skips ``Timestamp.FromDatetime``'s Python arithmetic; it must give the same
    instant for any aware time (other zones, before 1970, microseconds) and read naive as UTC."""
    from datetime import timedelta, timezone

    from google.protobuf.timestamp_pb2 import Timestamp

    cst = timezone(timedelta(hours=8))
    times = [
        datetime(2024, 5, 1, 12, 0, 0, 123456, tzinfo=UTC),
        datetime(2023, 12, 31, 23, 59, 59, 999999, tzinfo=cst),
        datetime(1969, 7, 20, 20, 17, 40, 500000, tzinfo=UTC),
        datetime(1970, 1, 1, tzinfo=UTC),
        datetime(9999, 12, 31, 23, 59, 59, 999999, tzinfo=UTC),
    ]
    for when in times:
        want = Timestamp()
        want.FromDatetime(when.astimezone(UTC))
        assert cv.ts(when) == want, when
    naive = datetime(2024, 5, 1, 12, 0, 0)
    assert cv.ts(naive) == cv.ts(naive.replace(tzinfo=UTC))
    assert cv.ts(None) is None
