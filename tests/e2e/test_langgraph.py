"""``MemgateStore`` (LangGraph ``BaseStore``) against a real gateway on both backends: a store
suite modelled on LangGraph's own store tests (LangGraph's own tests, ported and run side by side with
its InMemoryStore, are in test_langgraph_conformance.py), and a real compiled graph with a node that writes
and a node that recalls."""

from __future__ import annotations

import asyncio
import operator
import uuid
from collections.abc import Iterator
from typing import Annotated, Any, TypedDict

import pytest

pytest.importorskip("langgraph", reason="the LangGraph extra is not installed")

from langgraph.graph import END, START, StateGraph  # noqa: E402
from langgraph.runtime import Runtime  # noqa: E402
from langgraph.store.base import GetOp, InvalidNamespaceError, PutOp, SearchOp  # noqa: E402

from gateway import client as gc  # noqa: E402
from gateway.integrations.langgraph import (  # noqa: E402
    MAX_VALUE_CHARS,
    MemgateStore,
    MemgateStoreError,
)
from tests.e2e.conftest import RunningGateway  # noqa: E402
from tests.tags import fresh_tag


def _id() -> str:
    return fresh_tag(10)


@pytest.fixture
def task() -> str:
    """A fresh memgate task namespace id: the store's default namespace in these tests."""
    return f"lg-{_id()}"


@pytest.fixture
def store(gw: RunningGateway, task: str) -> Iterator[MemgateStore]:
    with gw.client() as client:
        yield MemgateStore(client, namespace=f"task/{task}")


# ------------------------------------------------------------------ put / get / delete


def test_put_get_overwrite_delete(gw: RunningGateway, store: MemgateStore, ns: str) -> None:
    uid = ns.split("/")[1]
    where = ("user", uid, "memories")
    assert store.get(where, "k1") is None
    store.put(where, "k1", {"text": "Alice is vegetarian", "n": 1, "tags": ["food"]})
    first = store.get(where, "k1")
    assert first is not None
    assert (first.namespace, first.key) == (where, "k1")
    assert first.value == {"text": "Alice is vegetarian", "n": 1, "tags": ["food"]}
    assert first.created_at == first.updated_at and first.created_at.tzinfo is not None

    store.put(where, "k1", {"text": "Alice is vegan", "n": 2})
    second = store.get(where, "k1")
    assert second is not None and second.value == {"text": "Alice is vegan", "n": 2}
    assert second.created_at == first.created_at and second.updated_at >= first.updated_at
    assert [i.key for i in store.search(where)] == ["k1"]  # one item, not two

    # stored in the memgate namespace the tuple names, as an episode per live item
    with gw.client() as c:
        events = c.timeline(ns)
    assert [e.summary for e in events] == ["Alice is vegan"]

    store.delete(where, "k1")
    assert store.get(where, "k1") is None
    assert store.search(where) == []


def test_same_text_under_two_keys_stays_two_items(store: MemgateStore) -> None:
    where = ("memories", "u1")
    store.put(where, "a", {"text": "The user likes pizza"})
    store.put(where, "b", {"text": "The user likes pizza"})
    a, b = store.get(where, "a"), store.get(where, "b")
    assert a is not None and b is not None and (a.key, b.key) == ("a", "b")
    store.delete(where, "a")
    assert store.get(where, "a") is None and store.get(where, "b") is not None


def test_default_namespace_and_value_encoding(
    gw: RunningGateway, store: MemgateStore, task: str
) -> None:
    big = {"text": "a long note", "blob": "x" * 5000, "nested": {"k": [1, 2.5, None, True]}}
    store.put(("notes",), "big", big)
    got = store.get(("notes",), "big")
    assert got is not None and got.value == big and got.namespace == ("notes",)
    with gw.client() as c:
        assert [e.summary for e in c.timeline(f"task/{task}")] == ["a long note"]
    with pytest.raises(ValueError, match="at most"):
        store.put(("notes",), "huge", {"blob": "x" * (MAX_VALUE_CHARS + 1)})
    assert store.get(("notes",), "huge") is None


def test_invalid_namespaces_are_refused(store: MemgateStore) -> None:
    for bad in [(), ("langgraph", "x"), ("a.b",), ("ok", "")]:
        with pytest.raises(InvalidNamespaceError):
            store.put(bad, "k", {"text": "x"})
    with pytest.raises(ValueError, match="at most 1000"):  # a key fits a metadata value
        store.put(("ok",), "k" * 1001, {"text": "x"})
    assert store.search(("ok",)) == []


# ------------------------------------------------------------------ search


def test_search_by_query_filter_and_pages(store: MemgateStore) -> None:
    where = ("docs", "d")
    docs = {
        "tea": {"text": "The user drinks green tea every morning", "kind": "pref", "n": 1},
        "bike": {"text": "The user rides a red bicycle to work", "kind": "fact", "n": 2},
        "cat": {"text": "The user has a cat called Miso", "kind": "fact", "n": 3},
    }
    for key, value in docs.items():
        store.put(where, key, value)
    store.put(("other",), "tea2", {"text": "The user drinks green tea every morning"})

    hits = store.search(("docs",), query="what does the user drink in the morning?")
    assert hits[0].key == "tea" and hits[0].score is not None
    assert {h.key for h in hits} <= set(docs)  # the prefix keeps ("other",) out
    assert all(a.score >= b.score for a, b in zip(hits, hits[1:], strict=False))  # type: ignore[operator]

    facts = store.search(where, filter={"kind": "fact"})
    assert {h.key for h in facts} == {"bike", "cat"}
    assert [h.key for h in store.search(where, filter={"n": {"$gte": 2, "$lt": 3}})] == ["bike"]
    assert store.search(where, filter={"kind": {"$ne": "fact"}})[0].key == "tea"

    newest = [h.key for h in store.search(where)]
    assert newest == ["cat", "bike", "tea"]  # without a query: newest first
    assert [h.key for h in store.search(where, limit=2)] == ["cat", "bike"]
    assert [h.key for h in store.search(where, limit=2, offset=2)] == ["tea"]


# ------------------------------------------------------------------ list_namespaces


def test_list_namespaces(store: MemgateStore) -> None:
    namespaces = [
        ("a", "b", "c"),
        ("a", "b", "d", "e"),
        ("a", "b", "d", "i"),
        ("a", "b", "f"),
        ("a", "c", "f"),
        ("b", "a", "f"),
        ("users", "123"),
    ]
    store.batch([PutOp(ns, f"id_{i}", {"data": f"value {i}"}) for i, ns in enumerate(namespaces)])
    assert sorted(store.list_namespaces()) == sorted(namespaces)
    assert store.list_namespaces(prefix=("a", "b")) == [
        ("a", "b", "c"),
        ("a", "b", "d", "e"),
        ("a", "b", "d", "i"),
        ("a", "b", "f"),
    ]
    assert store.list_namespaces(suffix=("f",)) == [
        ("a", "b", "f"),
        ("a", "c", "f"),
        ("b", "a", "f"),
    ]
    assert store.list_namespaces(prefix=("a",), suffix=("f",)) == [("a", "b", "f"), ("a", "c", "f")]
    assert store.list_namespaces(prefix=("a", "b"), max_depth=3) == [
        ("a", "b", "c"),
        ("a", "b", "d"),
        ("a", "b", "f"),
    ]
    assert store.list_namespaces(prefix=("a", "b"), limit=2) == [
        ("a", "b", "c"),
        ("a", "b", "d", "e"),
    ]
    assert store.list_namespaces(prefix=("a", "b"), offset=2) == [
        ("a", "b", "d", "i"),
        ("a", "b", "f"),
    ]
    assert store.list_namespaces(prefix=("a", "*", "f")) == [("a", "b", "f"), ("a", "c", "f")]
    assert store.list_namespaces(prefix=("nonexistent",)) == []
    store.delete(("users", "123"), "id_6")
    assert ("users", "123") not in store.list_namespaces()


def test_list_namespaces_pinned_to_a_memgate_namespace(store: MemgateStore, ns: str) -> None:
    uid = ns.split("/")[1]
    store.put(("user", uid, "prefs"), "k", {"text": "likes jazz"})
    store.put(("user", uid, "facts"), "k", {"text": "lives in Lyon"})
    assert store.list_namespaces(prefix=("user", uid)) == [
        ("user", uid, "facts"),
        ("user", uid, "prefs"),
    ]


# ------------------------------------------------------------------ batch, async, authz


def test_batch_results_are_aligned(store: MemgateStore) -> None:
    where = ("b",)
    results = store.batch(
        [
            PutOp(where, "x", {"text": "first item"}),
            GetOp(where, "x"),
            GetOp(where, "missing"),
            SearchOp(where, limit=5),
        ]
    )
    assert results[0] is None
    assert results[1] is not None and results[1].value == {"text": "first item"}  # type: ignore[union-attr]
    assert results[2] is None
    assert [i.key for i in results[3]] == ["x"]  # type: ignore[union-attr]


async def test_async_methods(store: MemgateStore) -> None:
    where = ("async", "s")
    await asyncio.gather(
        store.aput(where, "one", {"text": "the first async item"}),
        store.aput(where, "two", {"text": "the second async item"}),
    )
    one, two, none = await asyncio.gather(
        store.aget(where, "one"), store.aget(where, "two"), store.aget(where, "nope")
    )
    assert one is not None and two is not None and none is None
    assert one.value["text"] == "the first async item"
    assert {i.key for i in await store.asearch(where)} == {"one", "two"}
    assert await store.alist_namespaces(prefix=("async",)) == [where]
    await store.adelete(where, "one")
    assert await store.aget(where, "one") is None


def test_gateway_rules_apply(gw: RunningGateway, ns: str) -> None:
    uid = ns.split("/")[1]
    sub, other = f"sub-{_id()}", f"sub-{_id()}"
    with gw.client(sub) as cs, gw.client(other) as co:
        mine = MemgateStore(cs)  # default namespace: agent/<sub>
        mine.put(("notes",), "k", {"text": "private note"})
        assert mine.get(("notes",), "k") is not None
        with pytest.raises(MemgateStoreError, match="proposal"):
            mine.put(("user", uid), "k", {"text": "The user likes jazz"})
        theirs = MemgateStore(co, namespace=f"agent/{sub}")
        with pytest.raises(gc.PermissionDenied):
            theirs.get(("notes",), "k")
    with gw.client() as cm:
        assert cm.recall("jazz", namespaces=[ns]).hits == []


def test_a_short_prefix_finds_what_another_store_put(gw: RunningGateway, ns: str) -> None:
    """``search(("user",))`` and ``list_namespaces(prefix=("user",))`` reach a user namespace only
    another store (another home) put into: the gateway lists the namespaces the agent may read."""
    # the gateway lists the first MAX_LISTED user namespaces in order: on a shared test server
    # with hundreds of them, an id that sorts first is among those read
    uid = f"000-{ns.split('/')[1]}"
    with gw.client() as c:
        MemgateStore(c, namespace=f"task/w-{_id()}").put(("user", uid), "k", {"text": "oolong"})
        reader = MemgateStore(c, namespace=f"task/r-{_id()}")
        found = [(i.namespace, i.key) for i in reader.search(("user",), limit=1000)]
        assert (("user", uid), "k") in found
        assert ("user", uid) in reader.list_namespaces(prefix=("user",), limit=1000)


# ------------------------------------------------------------------ a real graph


class State(TypedDict):
    user: str
    said: str
    recalled: Annotated[list[str], operator.add]


def _graph(store: MemgateStore) -> Any:
    def remember(state: State, runtime: Runtime[None]) -> dict[str, Any]:
        assert runtime.store is not None
        where = ("user", state["user"], "memories")
        runtime.store.put(where, uuid.uuid4().hex, {"text": state["said"]})
        return {}

    def recall(state: State, runtime: Runtime[None]) -> dict[str, Any]:
        assert runtime.store is not None
        hits = runtime.store.search(("user", state["user"]), query="what food?", limit=3)
        return {"recalled": [h.value["text"] for h in hits]}

    builder = StateGraph(State)
    builder.add_node("remember", remember)
    builder.add_node("recall", recall)
    builder.add_edge(START, "remember")
    builder.add_edge("remember", "recall")
    builder.add_edge("recall", END)
    return builder.compile(store=store)


def test_graph_persists_and_recalls(gw: RunningGateway, ns: str) -> None:
    uid = ns.split("/")[1]
    with gw.client() as client:
        first = _graph(MemgateStore(client)).invoke(
            {"user": uid, "said": "Alice does not eat cilantro", "recalled": []}
        )
    assert first["recalled"] == ["Alice does not eat cilantro"]
    # a new process's store (a new client) sees what the first run stored
    with gw.client() as client:
        second = _graph(MemgateStore(client)).invoke(
            {"user": uid, "said": "Alice booked a flight to Kyoto", "recalled": []}
        )
    assert set(second["recalled"]) == {
        "Alice does not eat cilantro",
        "Alice booked a flight to Kyoto",
    }
    assert second["recalled"][0] == "Alice does not eat cilantro"  # "what food?" ranks it first
    with gw.client() as c:
        assert len(c.timeline(ns)) == 2


async def test_graph_runs_async(gw: RunningGateway, ns: str) -> None:
    uid = ns.split("/")[1]
    with gw.client() as client:
        out = await _graph(MemgateStore(client)).ainvoke(
            {"user": uid, "said": "Bob is allergic to peanuts", "recalled": []}
        )
    assert out["recalled"] == ["Bob is allergic to peanuts"]
