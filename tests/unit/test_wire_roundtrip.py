"""Every message across the wire, both ways: what the client builds, the server reads back the
same (``gateway.client.wire`` → proto → ``gateway.rpc.conversions``); what the server sends, the
client reads back the same (conversions → proto → wire). The two sides share no code."""

from __future__ import annotations

from datetime import UTC, datetime

import numpy as np
import pytest

from gateway.client import types as t
from gateway.client import wire
from gateway.core.formation.formation_jobs import EndSessionOutcome, JobResult
from gateway.core.model.commands import MemoryWrite, TurnAppend
from gateway.core.model.control import AuditEntry, Proposal, TaskStep
from gateway.core.model.errors import InvalidArgument
from gateway.core.model.models import (
    Event,
    Layer,
    Memory,
    Neighbour,
    NodeKind,
    NodeRef,
    Relation,
    Status,
    Turn,
)
from gateway.core.recall.recall import RecallResult
from gateway.core.recall.scoring import Scored
from gateway.core.usecases.erasure import Erased
from gateway.core.usecases.facts import FactOutcome
from gateway.core.usecases.skills import Skill
from gateway.core.usecases.tasks import Task
from gateway.core.usecases.transfer import Exported, ImportReport
from gateway.core.writing.writes import WriteOutcome
from gateway.rpc import conversions as cv
from memgate.v1 import memgate_pb2 as pb

AT = datetime(2026, 11, 30, 12, 0, 1, 123000, tzinfo=UTC)


def _wire(msg):  # type: ignore[no-untyped-def]
    """Through real bytes, as on the network."""
    return type(msg).FromString(msg.SerializeToString())


def test_write_item_client_to_server() -> None:
    msg = wire.write_item(
        "user/u",
        "semantic",
        "likes tea",
        type="preference",
        importance=0.7,
        confidence=0.9,
        session_id="s1",
        task_id="t1",
        event_time=AT,
        metadata={"k": "v"},
        evidence=["I like tea"],
        entities=["tea"],
        idempotency_key="key-1",
    )
    item = cv.write_item_from_pb(_wire(msg))
    assert (item.namespace, item.layer, item.content, item.type) == (
        "user/u",
        "semantic",
        "likes tea",
        "preference",
    )
    assert (item.importance, item.confidence, item.session_id, item.task_id) == (
        0.7,
        0.9,
        "s1",
        "t1",
    )
    assert item.event_time == AT and item.metadata == {"k": "v"}
    assert item.evidence == ["I like tea"] and item.entities == ["tea"]
    assert item.idempotency_key == "key-1"
    unset = cv.write_item_from_pb(_wire(wire.write_item("user/u", "", "x")))
    assert unset.importance is None and unset.confidence is None and unset.layer == ""
    assert unset.idempotency_key  # the client always sends one


def test_memory_server_to_client() -> None:
    m = Memory(
        id="m1",
        namespace="user/u",
        layer=Layer.EPISODIC,
        content="went to Kyoto",
        type="trip",
        importance=0.6,
        confidence=0.8,
        source_agent="master",
        source_session="s1",
        task_id="t1",
        created_at=AT,
        updated_at=AT,
        last_accessed_at=AT,
        access_count=3,
        version=2,
        metadata={"a": "b"},
        evidence=["e"],
        event_time=AT,
        status=Status.SUPERSEDED,
        entities=["kyoto"],
    )
    c = wire.memory(_wire(cv.memory_to_pb(m)))
    assert (c.id, c.namespace, c.layer, c.status, c.version) == (
        "m1",
        "user/u",
        "episodic",
        "superseded",
        2,
    )
    assert (c.content, c.type, c.importance, c.confidence) == ("went to Kyoto", "trip", 0.6, 0.8)
    assert (c.source_agent, c.source_session, c.task_id, c.access_count) == (
        "master",
        "s1",
        "t1",
        3,
    )
    assert c.created_at == AT and c.event_time == AT and c.last_accessed_at == AT
    assert c.metadata == {"a": "b"} and c.evidence == ["e"] and c.entities == ["kyoto"]


def test_write_result_and_recall_server_to_client() -> None:
    o = WriteOutcome("w1", True, True, 7, ["email"], True, "", "p1")
    r = wire.write_result(_wire(cv.write_result_to_pb(o)))
    assert (r.id, r.duplicate, r.applied, r.journal_seq, r.redactions) == (
        "w1",
        True,
        True,
        7,
        ["email"],
    )
    assert r.quarantined and r.proposal_id == "p1"
    mem = Memory(id="m", namespace="global", layer=Layer.SEMANTIC, content="c", event_time=AT)
    result = RecallResult(
        hits=[Scored(mem, 0.9, 0.8, 0.5, 0.1)],
        block="<memory>c</memory>",
        block_tokens=5,
        routed=(Layer.SEMANTIC, Layer.EPISODIC),
        degraded=["graph: down"],
    )
    got = wire.recall(_wire(cv.recall_result_to_pb(result)))
    assert [(h.id, h.layer, h.event_time) for h in got] == [("m", "semantic", AT)]
    assert got.hits[0].score == 0.9 and got.memory_block == "<memory>c</memory>"
    assert got.routed_layers == ["semantic", "episodic"] and got.degraded == ["graph: down"]


def test_turn_event_neighbour_server_to_client() -> None:
    turn = Turn("t1", "user", "hi", at=AT, metadata={"m": "1"})
    c = wire.turn(_wire(cv.turn_to_pb(turn)))
    assert (c.id, c.role, c.content, c.zone, c.at, c.metadata) == (
        "t1",
        "user",
        "hi",
        "dialogue",
        AT,
        {"m": "1"},
    )
    e = Event("e1", "user/u", "trip", "went", AT, 0.5, "a", "u", "s", "t", ["x"])
    ce = wire.event(_wire(cv.event_to_pb(e)))
    assert (ce.id, ce.namespace, ce.summary, ce.at, ce.entities) == (
        "e1",
        "user/u",
        "went",
        AT,
        ["x"],
    )
    assert (ce.agent_id, ce.user_id, ce.session_id, ce.task_id) == ("a", "u", "s", "t")
    n = Neighbour(NodeRef(NodeKind.ENTITY, "kyoto"), "MENTIONS", AT, 2, "Kyoto")
    cn = wire.neighbour(_wire(cv.neighbour_to_pb(n)))
    assert (cn.node.kind, cn.node.id, cn.relation, cn.at, cn.distance, cn.label) == (
        "entity",
        "kyoto",
        "MENTIONS",
        AT,
        2,
        "Kyoto",
    )


def test_arbitration_messages_server_to_client() -> None:
    memory_item = MemoryWrite(
        "user/u",
        Layer.SEMANTIC,
        "likes tea",
        type="preference",
        importance=0.6,
        confidence=0.7,
        evidence=("said so",),
        entities=("tea",),
    )
    p = Proposal("p1", "researcher", memory_item, "approved", "master", "ok", AT.timestamp(), "m1")
    cp = wire.proposal(_wire(cv.proposal_to_pb(p)))
    assert (cp.id, cp.proposer, cp.state, cp.decided_by, cp.reason, cp.memory_id) == (
        "p1",
        "researcher",
        "approved",
        "master",
        "ok",
        "m1",
    )
    assert cp.created_at == AT
    assert (cp.item.namespace, cp.item.layer, cp.item.content, cp.item.type) == (
        "user/u",
        "semantic",
        "likes tea",
        "preference",
    )
    assert cp.item.evidence == ["said so"] and cp.item.entities == ["tea"]
    turn_item = TurnAppend("user/u", "s1", "hello", role="assistant")
    ct = wire.proposal(_wire(cv.proposal_to_pb(Proposal("p2", "r", turn_item))))
    assert (ct.item.layer, ct.item.role, ct.item.zone, ct.item.session_id) == (
        "working",
        "assistant",
        "dialogue",
        "s1",
    )
    job = JobResult(12, "rules/1")
    job.outcomes.update({"pending": 3, "promoted": 1})
    e = wire.end_session(_wire(cv.end_session_to_pb(EndSessionOutcome("j1", 12, True, True, job))))
    assert (e.job_id, e.turns, e.duplicate, e.applied, e.extractor) == (
        "j1",
        12,
        True,
        True,
        "rules/1",
    )
    assert e.outcomes == {"pending": 3, "promoted": 1}
    f = wire.fact(_wire(cv.fact_outcome_to_pb(FactOutcome("pf", 2, True, "m2"))))
    assert (f.pending_id, f.sessions_seen, f.promoted, f.memory_id) == ("pf", 2, True, "m2")
    s = Skill("export", "save as csv", "export", "{}", "tools.export", "global", 3, "k1")
    cs = wire.skill(_wire(cv.skill_to_pb(s)))
    assert (cs.name, cs.description, cs.trigger, cs.parameter_schema, cs.entry_point) == (
        "export",
        "save as csv",
        "export",
        "{}",
        "tools.export",
    )
    assert (cs.namespace, cs.version, cs.id) == ("global", 3, "k1")
    assert cv.skill_from_pb(cv.skill_to_pb(s)) == s
    task = Task("t1", [TaskStep(0, "fetch", "done", "ok", "", 1)], 1, "done")
    ctask = wire.task(_wire(cv.task_to_pb(task)))
    assert (ctask.id, ctask.resume_at, ctask.state) == ("t1", 1, "done")
    assert [(x.index, x.name, x.state, x.output, x.attempts) for x in ctask.steps] == [
        (0, "fetch", "done", "ok", 1)
    ]
    a = AuditEntry("master", "write", "user/u", "w1", "semantic", AT.timestamp())
    ca = wire.audit_entry(_wire(cv.audit_entry_to_pb(a)))
    assert (ca.at, ca.agent_id, ca.action, ca.namespace, ca.target, ca.detail) == (
        AT,
        "master",
        "write",
        "user/u",
        "w1",
        "semantic",
    )


def test_recall_request_client_to_server() -> None:
    req = pb.RecallRequest(
        query="tea",
        namespaces=["user/u"],
        layers=[wire.layer_number("semantic")],  # type: ignore[list-item]
        top_k=4,
        token_budget=100,
        session_id="s1",
        start=wire.ts(AT),
        end=wire.ts(AT.replace(year=2027)),
        types=["preference"],
    )
    q = cv.recall_query_from_pb(_wire(req))
    assert (q.query, q.namespaces, q.layers, q.top_k, q.token_budget, q.session_id) == (
        "tea",
        ("user/u",),
        (Layer.SEMANTIC,),
        4,
        100,
        "s1",
    )
    assert q.start == AT and q.end == AT.replace(year=2027) and q.types == ("preference",)


def _exported() -> Exported:
    def version(n: int, content: str, status: Status) -> Memory:
        return Memory(
            id="m1",
            namespace="user/u",
            layer=Layer.EPISODIC,
            content=content,
            type="trip",
            importance=0.6,
            confidence=0.8,
            source_agent="master",
            source_session="s1",
            task_id="t1",
            created_at=AT,
            updated_at=AT,
            last_accessed_at=AT if n == 2 else None,
            access_count=n,
            version=n,
            metadata={"a": "b", "memgate.write_id": "w1"},  # internal keys travel too
            evidence=["e"],
            event_time=AT,
            status=status,
            fact_key="city" if n == 1 else "",
            entities=["kyoto"],
        )

    head = version(2, "went to Kyoto again", Status.ACTIVE)
    head.embedding = np.array([0.25, -0.5, 0.125], dtype=np.float32)
    link = Relation(
        NodeRef(NodeKind.EVENT, "m1"), "FOLLOWS", NodeRef(NodeKind.STEP, "s9"), AT, (("k", "v"),)
    )
    return Exported([version(1, "went to Kyoto", Status.SUPERSEDED), head], [link], "hash-384")


def _same_exported(got: Exported, want: Exported) -> None:
    assert got.embedder == want.embedder and got.links == want.links
    assert len(got.versions) == len(want.versions)
    for g, w in zip(got.versions, want.versions, strict=True):
        for name in Memory.__slots__:
            if name == "embedding":
                assert (g.embedding is None) == (w.embedding is None)
                if w.embedding is not None:
                    np.testing.assert_array_equal(g.embedding, w.embedding)
            else:
                assert getattr(g, name) == getattr(w, name), name


def test_exported_memory_server_to_client_to_server_and_through_a_jsonl_line() -> None:
    want = _exported()
    client_side = wire.exported(_wire(cv.exported_to_pb(want)))
    assert [v.version for v in client_side.versions] == [1, 2]
    assert client_side.fact_keys == ["city", ""] and client_side.embedder == "hash-384"
    assert client_side.embedding == [0.25, -0.5, 0.125]
    assert client_side.versions[0].metadata["memgate.write_id"] == "w1"
    assert client_side.links == [
        t.GraphLink(t.NodeRef("event", "m1"), "FOLLOWS", t.NodeRef("step", "s9"), AT, {"k": "v"})
    ]
    line = wire.exported_to_json(client_side)
    assert "\n" not in line
    assert wire.exported_from_json(line) == client_side
    _same_exported(cv.exported_from_pb(_wire(wire.exported_to_pb(client_side))), want)


def test_exported_memory_without_vector_and_bad_kinds() -> None:
    want = _exported()
    want.embedder = ""
    msg = cv.exported_to_pb(want)
    assert list(msg.embedding) == []  # no vector without its model's name
    back = cv.exported_from_pb(_wire(msg))
    assert back.versions[-1].embedding is None and back.embedder == ""
    msg.links[0].dst.kind = "planet"
    with pytest.raises(InvalidArgument) as err:
        cv.exported_from_pb(msg, "memories[3]")
    assert err.value.field == "memories[3].links"
    msg = cv.exported_to_pb(want)
    msg.versions[0].layer = pb.LAYER_UNSPECIFIED
    with pytest.raises(InvalidArgument):
        cv.exported_from_pb(msg)


def test_import_result_server_to_client() -> None:
    report = ImportReport(imported=3, unchanged=2, reembedded=1, links=4, conflicts=["m9"])
    got = wire.import_result(_wire(cv.import_report_to_pb(report)))
    assert got == t.ImportResult(3, 2, 1, 4, ["m9"])


def test_erase_requests_and_response() -> None:
    req = _wire(pb.ForgetNamespaceRequest(namespace="user/u", reason="asked", wait=True))
    assert (req.namespace, req.reason, req.wait) == ("user/u", "asked", True)
    sub = _wire(pb.ForgetSubjectRequest(user_id="u", reason="gdpr", wait=False))
    assert (sub.user_id, sub.reason, sub.wait) == ("u", "gdpr", False)
    got = wire.erased(_wire(cv.erased_to_pb(Erased("e1", True))))
    assert (got.erase_id, got.applied) == ("e1", True)
