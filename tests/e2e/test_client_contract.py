"""One scenario suite, two clients: every scenario runs through the blocking ``GatewayClient`` and
the asyncio ``gateway.client.aio.GatewayClient`` against a real gateway (embedded and Redis + Neo4j), so
both give the same answers, the same types and the same typed errors."""

from __future__ import annotations

import asyncio
import inspect
import threading
import uuid
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from datetime import UTC, datetime, timedelta
from typing import Any

import grpc
import pytest

from gateway import client as gc
from gateway.client import aio
from gateway.client import types as t
from tests.e2e.conftest import RunningGateway, gateway_settings, running_gateway
from tests.tags import fresh_tag

MakeClient = Callable[..., AbstractContextManager[Any]]


class _LoopThread:
    """An event loop in a thread, so a blocking test can drive the asyncio client."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()

    def run(self, coro: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(60)

    def stop(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)
        self.loop.close()


class _Awaiting:
    """The asyncio client seen through blocking calls: each method call is awaited on the
    loop the client was made on. Only the calling convention differs; the client is real."""

    def __init__(self, client: aio.GatewayClient, loop: _LoopThread) -> None:
        self._client = client
        self._loop = loop

    def __getattr__(self, name: str) -> Any:
        method = getattr(self._client, name)

        def call(*args: Any, **kwargs: Any) -> Any:
            result = method(*args, **kwargs)
            assert inspect.isawaitable(result), f"aio {name}() did not return an awaitable"
            return self._loop.run(result)

        return call


@pytest.fixture(scope="module")
def loop_thread() -> Iterator[_LoopThread]:
    lt = _LoopThread()
    yield lt
    lt.stop()


@pytest.fixture(params=["sync", "aio"])
def make_client(request: pytest.FixtureRequest, loop_thread: _LoopThread) -> MakeClient:
    """``make_client(address, agent_id, **kw)`` → a context manager yielding a client."""

    @contextmanager
    def make(address: str, agent_id: str = "master", **kw: Any) -> Iterator[Any]:
        if request.param == "sync":
            with gc.GatewayClient(address, agent_id=agent_id, **kw) as c:
                yield c
            return

        async def open_() -> aio.GatewayClient:
            return aio.GatewayClient(address, agent_id=agent_id, **kw)

        client = loop_thread.run(open_())
        try:
            yield _Awaiting(client, loop_thread)
        finally:
            loop_thread.run(client.close())

    return make


def _sub() -> str:
    return f"sub-{fresh_tag(8)}"


# ------------------------------------------------------------------ the surface


async def test_both_clients_offer_the_same_methods_with_the_same_signatures() -> None:
    def public(cls: type) -> dict[str, inspect.Signature]:
        client = cls(address, agent_id="x")  # the asyncio channel needs a running loop
        return {
            # the same parameters; the result differs only as Iterator vs AsyncIterator
            name: inspect.signature(getattr(client, name)).replace(
                return_annotation=inspect.Signature.empty
            )
            for name in dir(client)
            if not name.startswith("_") and callable(getattr(client, name))
        }

    address = "127.0.0.1:1"  # never dialled: channels connect lazily
    blocking, asynchronous = public(gc.GatewayClient), public(aio.GatewayClient)
    assert blocking.keys() == asynchronous.keys()
    assert {"write", "recall", "forget", "append_turn", "submit_result", "approve"} <= set(blocking)
    assert blocking == asynchronous


# ------------------------------------------------------------------ scenarios


def test_write_get_history_forget(gw: RunningGateway, ns: str, make_client: MakeClient) -> None:
    when = datetime(2026, 11, 1, 12, 30, tzinfo=UTC)
    with make_client(gw.address) as c:
        mid = c.write(
            ns,
            "semantic",
            "The user prefers green tea",
            type="preference",
            importance=0.7,
            confidence=0.8,
            session_id="s1",
            event_time=when,
            metadata={"source": "chat"},
            entities=["green tea"],
            wait=True,
        )
        m = c.get(mid)
        assert isinstance(m, t.Memory)
        assert (m.id, m.namespace, m.layer, m.content) == (
            mid,
            ns,
            "semantic",
            "The user prefers green tea",
        )
        assert m.importance == pytest.approx(0.7) and m.event_time == when
        assert m.metadata == {"source": "chat"} and m.entities == ["green tea"]
        assert [v.version for v in c.history(mid)] == [1]
        assert c.forget(mid, reason="asked to").status == "forgotten"
        assert c.recall("green tea", namespaces=[ns]).hits == []
        with pytest.raises(gc.NotFound):
            c.get("no-such-id")


def test_idempotent_writes(gw: RunningGateway, ns: str, make_client: MakeClient) -> None:
    key = uuid.uuid4().hex  # keys are the agent's, across namespaces
    with make_client(gw.address) as c:
        first = c.write_result(
            ns, "episodic", "booked flight LH123", idempotency_key=key, wait=True
        )
        again = c.write_result(
            ns, "episodic", "booked flight LH123", idempotency_key=key, wait=True
        )
        assert isinstance(first, t.WriteResult)
        assert again.id == first.id and again.duplicate and not first.duplicate
        assert [e.id for e in c.timeline(ns)] == [first.id]
        with pytest.raises(gc.Conflict, match="idempotency_key"):
            c.write(ns, "episodic", "other content", idempotency_key=key)


def test_batch_write_recall_and_bad_input(
    gw: RunningGateway, ns: str, make_client: MakeClient
) -> None:
    with make_client(gw.address) as c:
        ids = c.batch_write(
            [
                dict(namespace=ns, layer="semantic", content="The user is allergic to peanuts"),
                dict(namespace=ns, layer="semantic", content="The user's favourite colour is blue"),
            ],
            wait=True,
        )
        assert len(set(ids)) == 2
        r = c.recall("is the user allergic to peanuts", namespaces=[ns], top_k=2)
        assert isinstance(r, t.Recall) and isinstance(r.hits[0], t.Hit)
        assert r.hits[0].id == ids[0] and "allergic to peanuts" in r.memory_block
        with pytest.raises(gc.InvalidArgument, match=r"items\[1\]\.content"):
            c.batch_write_results(
                [
                    dict(namespace=ns, layer="semantic", content="good"),
                    dict(namespace=ns, layer="semantic", content=""),
                ]
            )
        with pytest.raises(gc.InvalidArgument, match="top_k"):
            c.recall("q", namespaces=[ns], top_k=1000)
        with pytest.raises(gc.InvalidArgument, match="layer"):
            c.write(ns, "dream", "x")


def test_working_memory(gw: RunningGateway, ns: str, make_client: MakeClient) -> None:
    key = uuid.uuid4().hex
    with make_client(gw.address) as c:
        a = c.append_turn(ns, "s1", role="user", content="hello there", idempotency_key=key)
        b = c.append_turn(ns, "s1", role="user", content="hello there", idempotency_key=key)
        assert a.id == b.id and b.duplicate
        c.append_turn(ns, "s1", role="tool", content="search results", zone="scratch")
        window = c.window(ns, "s1")
        assert isinstance(window, t.Window) and not window.degraded
        assert [(x.zone, x.content) for x in window] == [
            ("dialogue", "hello there"),
            ("scratch", "search results"),
        ]
        c.clear_scratch(ns, "s1")
        assert [x.zone for x in c.window(ns, "s1")] == ["dialogue"]
        assert c.update_session_state(ns, "s1", set={"step": "2"}) == {"step": "2"}
        assert c.session_state(ns, "s1") == {"step": "2"}
        for i in range(3):
            c.append_turn(ns, "s1", role="user", content=f"message {i}")
        assert c.compact(ns, "s1").summarised == 2
        with pytest.raises(gc.InvalidArgument, match="zone"):
            c.append_turn(ns, "s1", role="user", content="x", zone="attic")


def test_episodes(gw: RunningGateway, make_client: MakeClient) -> None:
    agent = f"a-{fresh_tag(8)}"
    ns, t0 = f"agent/{agent}", datetime(2026, 10, 1, 9, tzinfo=UTC)
    with make_client(gw.address, agent) as c:
        e1 = c.record_event(ns, "Chose the data sources", event_time=t0, wait=True)
        e2 = c.record_event(
            ns,
            "Agreed on the framework",
            event_time=t0 + timedelta(hours=2),
            links=[("FOLLOWS", "event", e1)],
            wait=True,
        )
        c.relate(("event", e2), "CONTINUES", ("event", e1))
        events = c.timeline(ns)
        assert [e.id for e in events] == [e1, e2] and isinstance(events[0], t.Event)
        assert events[0].at == t0
        assert e2 in {n.node.id for n in c.neighbourhood("event", e1)}
        with pytest.raises(gc.InvalidArgument, match="depth"):
            c.neighbourhood("event", e1, depth=3)
    # another agent's private event is answered like a missing one (no existence leak)
    with make_client(gw.address, _sub()) as other, pytest.raises(gc.NotFound):
        other.neighbourhood("event", e1)


def test_arbitration(gw: RunningGateway, ns: str, make_client: MakeClient) -> None:
    sub, task = _sub(), f"t-{fresh_tag(8)}"
    with make_client(gw.address, sub) as cs, make_client(gw.address) as cm:
        submission: dict[str, Any] = dict(
            status="done",
            summary="Compared vendors",
            memory_updates=[
                dict(namespace=ns, layer="semantic", content="The user's company uses Salesforce")
            ],
            idempotency_key=uuid.uuid4().hex,
        )
        r = cs.submit_result(task, **submission)
        assert r.event_id and len(r.proposals) == 1 and isinstance(r.proposals[0], t.Proposal)
        assert cs.submit_result(task, **submission).event_id == r.event_id
        no = cs.write_result(ns, "semantic", "The user hates all meetings")
        with pytest.raises(gc.PermissionDenied):
            cs.approve(r.proposals[0].id)
        pending = {p.id for p in cm.proposals() if p.item.namespace == ns}
        assert pending == {r.proposals[0].id, no.proposal_id}
        approved = cm.approve(r.proposals[0].id, reason="confirmed")
        assert approved.state == "approved" and cm.get(approved.memory_id).source_agent == sub
        assert cm.reject(no.proposal_id).state == "rejected"
        with pytest.raises(gc.FailedPrecondition, match="already"):
            cm.approve(no.proposal_id)


def test_facts_skills_and_tasks(gw: RunningGateway, ns: str, make_client: MakeClient) -> None:
    skills_ns = f"task/skills-{fresh_tag(8)}"
    with make_client(gw.address) as c:
        first = c.propose_fact(ns, "Prefers replies in English", session_id="s1")
        assert isinstance(first, t.FactResult) and not first.promoted
        second = c.propose_fact(ns, "Prefers replies in English", session_id="s2")
        assert second.promoted and c.get(second.memory_id).content == "Prefers replies in English"
        pending = c.propose_fact(ns, "Likes chess", session_id="s4")
        assert c.confirm_fact(pending.pending_id).promoted
        reg = c.register_skill("save-md", "Save a web page as Markdown", namespace=skills_ns)
        assert reg.skill.version == 1 and not reg.duplicate
        matches = c.match_skill("save this page as markdown", namespaces=[skills_ns])
        assert matches[0].skill.name == "save-md" and isinstance(matches[0], t.SkillMatch)
        task = f"batch-{fresh_tag(8)}"
        assert [s.name for s in c.start_task(task, ["fetch", "clean"]).steps] == ["fetch", "clean"]
        assert c.update_step(task, 0, "done", output="ok").resume_at == 1
        assert c.get_task(task).steps[0].output == "ok"


def test_operations(gw: RunningGateway, ns: str, make_client: MakeClient) -> None:
    with make_client(gw.address) as c:
        mid = c.write(ns, "semantic", "The user reads on Sundays", wait=True)
        assert c.health() == "SERVING"
        s = c.stats()
        assert isinstance(s, t.Stats) and s.embedder == "hash-384" and s.vectors >= 1
        assert ("write", mid) in {(e.action, e.target) for e in c.audit(namespace=ns)}
        assert {b.state for b in c.breakers()} == {"closed"}
        assert isinstance(c.review_queue(), list)
        assert c.maintain([ns], dry_run=True).namespaces == 1
        policy = c.set_shared_write_policy([], min_confidence=0.0)
        assert policy.auto_approve == []
    with make_client(gw.address, _sub()) as sub, pytest.raises(gc.PermissionDenied):
        sub.audit()


def test_api_key(tmp_path: Any, make_client: MakeClient) -> None:
    with running_gateway(gateway_settings(tmp_path, api_keys={"master": "s3cret"})) as running:
        with make_client(running.address, "master", api_key="s3cret") as ok:
            assert ok.stats().shards == 8
        with (
            make_client(running.address, "master", api_key="wrong") as bad,
            pytest.raises(gc.Unauthenticated) as err,
        ):
            bad.stats()
    assert err.value.code == grpc.StatusCode.UNAUTHENTICATED


def test_unreachable_gateway_is_unavailable_after_retries(make_client: MakeClient) -> None:
    with make_client("127.0.0.1:1", retries=1, timeout=2.0) as c, pytest.raises(gc.Unavailable):
        c.stats()
