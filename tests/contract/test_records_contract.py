"""RecordStore contract (stores.contracts.RecordStore), run against every adapter.

Every test works in its own uuid namespaces and ids, so the suite can run against one shared real
server without wiping it: assertions about whole-store results (iter_vectors, count) only look at
this test's ids or at deltas.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import numpy as np
import pytest

from gateway.core.model.errors import Conflict
from gateway.core.model.models import Layer, Memory, MemoryFilter, Status, VectorItem
from gateway.core.ports.ports import RecordStore
from stores.breaker import Breaker, BreakerPolicy, guard

T0 = datetime(2024, 5, 1, 12, 0, 0, tzinfo=UTC)
CST = timezone(timedelta(hours=8))
DAY = timedelta(days=1)


@pytest.fixture(params=["sqlite", "sqlite+breaker", pytest.param("neo4j", marks=pytest.mark.real)])
def make_record_store(request: pytest.FixtureRequest, tmp_path: Path) -> Callable[[], RecordStore]:
    if request.param == "sqlite":
        from stores.sqlite_records import SqliteRecordStore

        return lambda: SqliteRecordStore(tmp_path / "records.db")
    if request.param == "sqlite+breaker":  # as the gateway has it: breaker and row cache
        from stores.sqlite_records import SqliteRecordStore

        def guarded() -> RecordStore:
            store = SqliteRecordStore(tmp_path / "records.db", row_cache=64)
            return guard(RecordStore, store, Breaker("RecordStore", store, BreakerPolicy()))

        return guarded
    uri = request.getfixturevalue("neo4j_uri")
    from stores.neo4j_records import Neo4jRecordStore

    return lambda: Neo4jRecordStore(uri)


@pytest.fixture
async def record_store(make_record_store: Callable[[], RecordStore]) -> AsyncIterator[RecordStore]:
    store = make_record_store()
    await store.start()
    try:
        yield store
    finally:
        await store.close()


def uid(prefix: str = "m") -> str:
    return f"{prefix}-{uuid.uuid4().hex}"


def vec(seed: int, dim: int = 8) -> np.ndarray:
    v = np.random.default_rng(seed).standard_normal(dim).astype(np.float32)
    return v / np.linalg.norm(v)


def mem(ns: str, content: str = "a note", **changes: object) -> Memory:
    base = Memory(
        id=uid(), namespace=ns, layer=Layer.SEMANTIC, content=content, created_at=T0, updated_at=T0
    )
    return base.with_changes(**changes)


def assert_same(got: Memory, want: Memory) -> None:
    """Every field equal; datetimes compared as instants and required to be tz-aware."""
    for name in Memory.__slots__:
        g, w = getattr(got, name), getattr(want, name)
        if name == "embedding":
            if w is None:
                assert g is None
            else:
                assert g is not None and g.dtype == np.float32
                np.testing.assert_array_equal(g, w)
        elif isinstance(w, datetime):
            assert isinstance(g, datetime) and g.tzinfo is not None, name
            assert g == w, name
        else:
            assert g == w, name


async def test_acknowledged_writes_survive_an_os_crash(record_store: RecordStore) -> None:
    assert await record_store.durability() == ""  # fsync per commit / forced transaction log


async def test_is_a_record_store(record_store: RecordStore) -> None:
    assert isinstance(record_store, RecordStore)
    await record_store.ping()


async def test_put_get_round_trips_every_field(record_store: RecordStore) -> None:
    ns = uid("ns")
    full = Memory(
        id=uid(),
        namespace=ns,
        layer=Layer.EPISODIC,
        content="用户不吃香菜 — the user avoids coriander",
        type="preference",
        importance=0.75,
        confidence=0.875,
        source_agent="agent-1",
        source_session="session-1",
        task_id="task-1",
        created_at=datetime(2024, 5, 1, 9, 30, 15, 123456, tzinfo=CST),
        updated_at=datetime(2024, 5, 2, 1, 2, 3, 456789, tzinfo=UTC),
        last_accessed_at=datetime(2024, 5, 3, 4, 5, 6, 7, tzinfo=timezone(timedelta(hours=-5))),
        access_count=3,
        version=1,
        metadata={"lang": "zh", "来源": "对话"},
        evidence=["turn-1", "turn-2"],
        event_time=datetime(2024, 4, 30, 18, 0, tzinfo=CST),
        status=Status.ACTIVE,
        fact_key="user:diet:coriander",
        entities=["香菜", "coriander"],
        embedding=vec(1, dim=384),
        context="4 May 2024\nAgent: what should I avoid cooking?",
    )
    bare = mem(ns, "plain")  # defaults: no embedding, event time or last access
    await record_store.put([full, bare])

    got = await record_store.get([full.id, bare.id, uid("missing")])
    assert set(got) == {full.id, bare.id}
    assert_same(got[full.id], full)
    assert_same(got[bare.id], bare)
    assert isinstance(got[full.id].layer, Layer) and isinstance(got[full.id].status, Status)
    assert await record_store.get([]) == {}
    # without embeddings: nothing decoded, every other field the same
    light = await record_store.get([full.id, bare.id], embeddings=False)
    assert light[full.id].embedding is None
    assert_same(light[full.id], full.with_changes(embedding=None))
    # field for field what a full read decodes (the embedded store answers this one from the
    # rows it kept when it wrote them)
    for m in (full, bare):
        assert light[m.id] == got[m.id].with_changes(embedding=None)


async def test_put_is_idempotent_by_id_and_version(record_store: RecordStore) -> None:
    m = mem(uid("ns"), "prefers dark mode", embedding=vec(2))
    await record_store.put([m])
    await record_store.put([m])
    await record_store.put([m, m])
    history = await record_store.history(m.id)
    assert len(history) == 1
    assert_same(history[0], m)
    assert_same((await record_store.get([m.id]))[m.id], m)


async def test_versions_current_and_history(record_store: RecordStore) -> None:
    v1 = mem(uid("ns"), "likes tea")
    v2 = v1.with_changes(content="likes green tea", version=2, updated_at=T0 + timedelta(days=1))
    await record_store.put([v1])
    await record_store.put([v2])
    await record_store.put([v1])  # a late replay of the old version does not roll it back

    assert (await record_store.get([v1.id]))[v1.id].content == "likes green tea"
    history = await record_store.history(v1.id)
    assert [h.version for h in history] == [1, 2]
    assert_same(history[0], v1)
    assert_same(history[1], v2)
    assert await record_store.history(uid("missing")) == []


async def test_versions_put_out_of_order(record_store: RecordStore) -> None:
    v1 = mem(uid("ns"), "v1")
    v2 = v1.with_changes(content="v2", version=2)
    await record_store.put([v2, v1])
    assert (await record_store.get([v1.id]))[v1.id].version == 2
    assert [h.content for h in await record_store.history(v1.id)] == ["v1", "v2"]


async def test_query_filters_and_order(record_store: RecordStore) -> None:
    ns, other = uid("ns"), uid("ns")
    t = [T0 + timedelta(hours=h) for h in range(6)]
    a = mem(ns, "a", created_at=t[0])
    b = mem(ns, "b", created_at=t[5], event_time=t[1])  # when = event_time (t1)
    c = mem(ns, "c", created_at=t[2], layer=Layer.EPISODIC, type="event")
    d = mem(ns, "d", created_at=t[3], layer=Layer.PROCEDURAL, type="skill")
    e = mem(ns, "e", created_at=t[4], status=Status.ARCHIVED)
    x = mem(other, "x", created_at=t[2])
    await record_store.put([a, b, c, d, e, x])

    async def ids(**kw: object) -> list[str]:
        flt = MemoryFilter(**{"namespaces": (ns,), **kw})  # type: ignore[arg-type]
        return [m.id for m in await record_store.query(flt)]

    # defaults: long-term layers, active only, newest `when` first
    assert await ids() == [d.id, c.id, b.id, a.id]
    assert await ids(layers=(Layer.SEMANTIC,)) == [b.id, a.id]
    assert await ids(types=("event", "skill")) == [d.id, c.id]
    assert await ids(statuses=(Status.ARCHIVED,)) == [e.id]
    assert await ids(statuses=(Status.ACTIVE, Status.ARCHIVED)) == [e.id, d.id, c.id, b.id, a.id]
    # start inclusive, end exclusive, on event_time-or-created_at
    assert await ids(start=t[1], end=t[3]) == [c.id, b.id]
    assert await ids(start=t[1].astimezone(CST), end=t[3].astimezone(CST)) == [c.id, b.id]
    assert await ids(limit=2) == [d.id, c.id]
    # namespace isolation, and several namespaces at once
    assert await ids(namespaces=(other,)) == [x.id]
    assert set(await ids(namespaces=(ns, other))) == {a.id, b.id, c.id, d.id, x.id}
    assert await ids(namespaces=()) == []
    assert await ids(namespaces=(uid("ns"),)) == []
    got = await record_store.query(MemoryFilter(namespaces=(ns,), layers=(Layer.EPISODIC,)))
    assert_same(got[0], c)


async def test_query_sees_current_version_only(record_store: RecordStore) -> None:
    ns = uid("ns")
    v1 = mem(ns, "old")
    v2 = v1.with_changes(content="new", version=2, status=Status.ARCHIVED)
    await record_store.put([v1, v2])
    assert await record_store.query(MemoryFilter(namespaces=(ns,))) == []
    got = await record_store.query(MemoryFilter(namespaces=(ns,), statuses=(Status.ARCHIVED,)))
    assert [(m.id, m.version, m.content) for m in got] == [(v1.id, 2, "new")]


async def test_irregular_forms_meet_their_base_form(record_store: RecordStore) -> None:
    ns = uid("ns")
    piano = mem(ns, "Ha, that's a secondhand piano! Bought it two weeks ago.")
    trip = mem(ns, "We went to Kyoto and the children ate mochi")
    await record_store.put([piano, trip])
    for query, want in [
        ("What did she buy?", piano.id),
        ("When did they go to Kyoto?", trip.id),
        ("what do kids eat", trip.id),
        ("a child", trip.id),
    ]:
        assert [h[0] for h in await record_store.keyword_search([ns], [], query, 10)] == [want]


async def test_an_index_another_analyzer_built_is_rebuilt_on_start(
    make_record_store: Callable[[], RecordStore], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Memories indexed by an older analyzer (here: version 1, before irregular forms) are
    re-indexed with this one when the store starts, so a query analysed today finds them."""
    from stores import text_analysis

    with monkeypatch.context() as old:
        old.setattr(text_analysis, "ANALYZER_VERSION", 1)
        old.setattr(text_analysis, "BASE_FORMS", {})
        store = make_record_store()
        await store.start()
        ns = uid("ns")
        piano = mem(ns, "Bought a secondhand piano")
        await store.put([piano])
        assert await store.keyword_search([ns], [], "buy", 10) == []
        await store.close()
    store = make_record_store()
    await store.start()
    try:
        assert [h[0] for h in await store.keyword_search([ns], [], "buy", 10)] == [piano.id]
        assert [h[0] for h in await store.keyword_search([ns], [], "bought", 10)] == [piano.id]
    finally:
        await store.close()


async def test_keyword_search_english(record_store: RecordStore) -> None:
    ns, other = uid("ns"), uid("ns")
    dark = mem(ns, "The user prefers dark mode in every editor")
    half = mem(ns, "Switch the terminal to dark colours")
    none = mem(ns, "Likes green tea")
    elsewhere = mem(other, "prefers dark mode too")
    await record_store.put([dark, half, none, elsewhere])

    hits = await record_store.keyword_search([ns], [Layer.SEMANTIC], "dark mode", 10)
    assert [h[0] for h in hits] == [dark.id, half.id]
    assert all(0.0 < s <= 1.0 for _, s in hits)
    assert hits[0][1] > hits[1][1]
    assert hits[0][1] == pytest.approx(1.0)
    # case-insensitive; restricted to namespaces and layers
    upper = await record_store.keyword_search([ns], [Layer.SEMANTIC], "DARK", 10)
    assert {h[0] for h in upper} == {dark.id, half.id}
    assert await record_store.keyword_search([ns], [Layer.EPISODIC], "dark mode", 10) == []
    both = await record_store.keyword_search([ns, other], [Layer.SEMANTIC], "dark mode", 10)
    assert {h[0] for h in both} == {dark.id, half.id, elsewhere.id}
    assert len(await record_store.keyword_search([ns], [Layer.SEMANTIC], "dark mode", 1)) == 1
    assert await record_store.keyword_search([ns], [Layer.SEMANTIC], "coffee", 10) == []
    assert await record_store.keyword_search([uid("ns")], [Layer.SEMANTIC], "dark", 10) == []


async def test_keyword_memories_are_keyword_search_with_the_memories(
    record_store: RecordStore,
) -> None:
    ns = uid("ns")
    dark = mem(ns, "The user prefers dark mode in every editor", embedding=vec(1))
    half = mem(ns, "Switch the terminal to dark colours", context="Leo: which theme?")
    archived = mem(ns, "dark mode was nice", status=Status.ARCHIVED, embedding=vec(2))
    tea = mem(ns, "Likes green tea", embedding=vec(3))
    await record_store.put([dark, half, archived, tea])
    layers = [Layer.SEMANTIC]
    for query, limit in (("dark mode", 10), ("dark", 1), ("which theme is dark", 5)):
        ids = await record_store.keyword_search([ns], layers, query, limit)
        hits, loaded = await record_store.keyword_memories([ns], layers, query, limit)
        assert [(m.id, pytest.approx(s)) for m, s in hits] == ids, query
        assert loaded == {}
        for got, _ in hits:  # every field of the current version, the embedding too
            assert_same(got, {dark.id: dark, half.id: half}[got.id])
    # ``load``: what get(ids, embeddings=False) returns (any status, unknown ids left out), in
    # the same call, with or without lexical hits
    for query in ("dark", "coffee", "what is it"):
        hits, loaded = await record_store.keyword_memories(
            [ns], layers, query, 10, load=[tea.id, archived.id, "nope", tea.id]
        )
        assert set(loaded) == {tea.id, archived.id}, query
        for got in loaded.values():
            assert_same(
                got, {tea.id: tea, archived.id: archived}[got.id].with_changes(embedding=None)
            )
        ids = await record_store.keyword_search([ns], layers, query, 10)
        assert [m.id for m, _ in hits] == [i for i, _ in ids]
        assert bool(hits) is (query == "dark")
    # an id of ``load`` that is also a hit comes once, with the hits (embedding included)
    hits, loaded = await record_store.keyword_memories([ns], layers, "dark", 10, load=[dark.id])
    assert dark.id in [m.id for m, _ in hits] and loaded == {}
    assert await record_store.keyword_memories([ns], layers, "coffee", 10) == ([], {})
    assert await record_store.keyword_memories([ns], [Layer.EPISODIC], "dark", 10) == ([], {})


async def test_keyword_search_chinese(record_store: RecordStore) -> None:
    ns = uid("ns")
    coriander = mem(ns, "用户不吃香菜")
    rice = mem(ns, "用户喜欢吃米饭", layer=Layer.EPISODIC)
    await record_store.put([coriander, rice])
    layers = [Layer.SEMANTIC, Layer.EPISODIC]

    hits = await record_store.keyword_search([ns], layers, "香菜", 10)
    assert [h[0] for h in hits] == [coriander.id]
    assert 0.0 < hits[0][1] <= 1.0
    assert {h[0] for h in await record_store.keyword_search([ns], layers, "用户", 10)} == {
        coriander.id,
        rice.id,
    }
    # a one-character term, and a term embedded in a longer query
    assert [h[0] for h in await record_store.keyword_search([ns], layers, "饭", 10)] == [rice.id]
    best = await record_store.keyword_search([ns], layers, "他不吃香菜吗", 10)
    assert best and best[0][0] == coriander.id
    assert await record_store.keyword_search([ns], layers, "咖啡", 10) == []


async def test_keyword_search_stems_and_indexes_context(record_store: RecordStore) -> None:
    ns = uid("ns")
    cert = mem(ns, "Finally passed: I completed the certificates last week!")
    answer = mem(
        ns,
        "Use it every day, best money I spent.",
        layer=Layer.EPISODIC,
        context="Elena: are you happy with the 3D printer you bought?",
    )
    await record_store.put([cert, answer])
    layers = [Layer.SEMANTIC, Layer.EPISODIC]
    hits = await record_store.keyword_search(
        [ns], layers, "When did she complete a certificate?", 5
    )
    assert [h[0] for h in hits] == [cert.id]  # certificate ~ certificates, complete ~ completed
    # the context is searched; the stored content stays the turn
    hits = await record_store.keyword_search([ns], layers, "How is the 3D printer?", 5)
    assert [h[0] for h in hits] == [answer.id]
    assert (await record_store.get([answer.id]))[answer.id].content.startswith("Use it every")
    # only stop words: nothing to look up
    assert await record_store.keyword_search([ns], layers, "what is it", 5) == []


async def test_set_context_reindexes_the_current_version_only(record_store: RecordStore) -> None:
    """A stored turn learns the turn after it: found by its words, content and version kept."""
    ns = uid("ns")
    question = mem(ns, "Did you end up going to the lake?", layer=Layer.EPISODIC, context="Leo:")
    await record_store.put([question])
    layers = [Layer.EPISODIC]
    assert await record_store.keyword_search([ns], layers, "kayak", 5) == []
    stored = (await record_store.get([question.id]))[question.id]
    stored.context = "Leo:\nElena: yes, we rented a kayak for the whole afternoon"
    await record_store.set_context([stored])
    hits = await record_store.keyword_search([ns], layers, "Who rented a kayak?", 5)
    assert [h[0] for h in hits] == [question.id]
    after = (await record_store.get([question.id]))[question.id]
    assert (after.content, after.version) == (question.content, question.version)
    assert after.context == stored.context
    assert len(await record_store.history(question.id)) == 1
    # a version that is no longer current changes nothing
    newer = question.with_changes(version=question.version + 1, context="Leo:")
    await record_store.put([newer])
    await record_store.set_context([stored])
    assert await record_store.keyword_search([ns], layers, "kayak", 5) == []


async def test_set_embeddings_replaces_the_current_vector_without_a_version(
    record_store: RecordStore,
) -> None:
    """Another embedder's vector for the same text (a switch re-embeds): the current version and
    its history entry carry it, older versions and the version number stay as they were."""
    ns = uid("ns")
    first = mem(ns, "Alice lives in Berlin", embedding=vec(1))
    second = first.with_changes(version=2, content="Alice lives in Hamburg", embedding=vec(2))
    await record_store.put([first, second])
    fresh = vec(3, dim=12)  # another model, another size
    await record_store.set_embeddings([(first.id, fresh), (uid(), vec(4))])  # unknown: skipped
    now = (await record_store.get([first.id]))[first.id]
    assert now.version == 2 and now.embedding is not None
    assert np.allclose(now.embedding, fresh)
    history = await record_store.history(first.id)
    assert [m.version for m in history] == [1, 2]
    assert np.allclose(history[0].embedding, vec(1)) and np.allclose(history[1].embedding, fresh)
    found = [i for batch in [b async for b in record_store.iter_vectors()] for i in batch]
    mine = [i for i in found if i.id == first.id]
    assert len(mine) == 1 and np.allclose(mine[0].vector, fresh)


#: A fixed corpus and queries on which every adapter must rank like the reference BM25 below.
AGREEMENT_CORPUS = [
    "Leo adopted a rabbit called Pickle last weekend",
    "Pickle the rabbit chewed through the charger cable again",
    "Elena bought a secondhand piano two weeks ago",
    "The piano tuner comes on Friday, the piano is badly out of tune",
    "Leo finished the sommelier level one exam",
    "Elena is training for a charity run in the park",
    "The charity run raised money for the animal shelter",
    "Leo moved to Denver and loves Washington Park",
    "Elena switched from coffee to decaf oat lattes",
    "我们周末去爬山，然后吃了火锅",
    "他最喜欢的火锅店在成都",
    "A long day of meetings, emails and more meetings",
]
AGREEMENT_QUERIES = [
    "What is the name of Leo's rabbit?",
    "When did Elena buy the piano?",
    "Which charity did the run support?",
    "Where does Leo live now, which park?",
    "他喜欢哪家火锅店？",
    "What does Elena drink instead of coffee?",
]


def _reference_bm25(query: str, k1: float = 1.2, b: float = 0.75) -> list[int]:
    """Lucene-style BM25 over the analysed corpus alone (the engines see other documents too,
    which shifts their IDF: hence the tolerance of the agreement test)."""
    import math
    from collections import Counter

    from stores.text_analysis import document_terms, query_terms

    docs = [Counter(document_terms(d)) for d in AGREEMENT_CORPUS]
    avg = sum(sum(d.values()) for d in docs) / len(docs)
    scores = []
    for i, d in enumerate(docs):
        s = 0.0
        for t in query_terms(query):
            if t in d:
                df = sum(1 for x in docs if t in x)
                idf = math.log(1 + (len(docs) - df + 0.5) / (df + 0.5))
                f = d[t]
                s += idf * f * (k1 + 1) / (f + k1 * (1 - b + b * sum(d.values()) / avg))
        if s > 0:
            scores.append((-s, i))
    return [i for _, i in sorted(scores)]


async def test_keyword_search_agrees_with_reference_bm25(record_store: RecordStore) -> None:
    """SQLite FTS5 and Neo4j Lucene rank the analysed terms with BM25 (k1 1.2, b 0.75). Their
    IDF differs in detail (FTS5 clamps terms in over half the rows, each counts its own whole
    index, and a shared server's index holds other tests' memories too), so the tolerance: each
    best hit in the other's top 2, and all but one of the reference's top 3 in the adapter's."""
    ns = uid("ns")
    mems = [mem(ns, text) for text in AGREEMENT_CORPUS]
    await record_store.put(mems)
    for query in AGREEMENT_QUERIES:
        want = [mems[i].id for i in _reference_bm25(query)][:3]
        got = [h[0] for h in await record_store.keyword_search([ns], [Layer.SEMANTIC], query, 3)]
        # the engines' IDF counts the whole database (a shared server holds other tests' data):
        # the best hit of each is in the other's top 2, and the top 3 agree but for one
        assert got[:1][0] in want[:2] and want[:1][0] in got[:2], query
        assert len(set(got) & set(want)) >= len(want) - 1, query


async def test_query_by_session(record_store: RecordStore) -> None:
    ns = uid("ns")
    turns = [
        mem(
            ns,
            f"turn {i}",
            layer=Layer.EPISODIC,
            source_session=s,
            event_time=T0 + timedelta(minutes=i),
        )
        for i, s in enumerate(["s1", "s1", "s2", "s1"])
    ]
    await record_store.put(turns)
    flt = MemoryFilter((ns,), (Layer.EPISODIC,), session_id="s1", end=turns[3].when, limit=1)
    assert [m.id for m in await record_store.query(flt)] == [turns[1].id]
    flt = MemoryFilter((ns,), (Layer.EPISODIC,), session_id="s2", limit=10)
    assert [m.id for m in await record_store.query(flt)] == [turns[2].id]


async def test_keyword_search_only_active_current(record_store: RecordStore) -> None:
    ns = uid("ns")
    archived = mem(ns, "prefers dark mode", status=Status.ARCHIVED)
    changed = mem(ns, "prefers dark mode")
    await record_store.put([archived, changed])
    await record_store.put([changed.with_changes(content="prefers light mode", version=2)])
    hits = await record_store.keyword_search([ns], [Layer.SEMANTIC], "dark", 10)
    assert hits == []
    hits = await record_store.keyword_search([ns], [Layer.SEMANTIC], "light", 10)
    assert [h[0] for h in hits] == [changed.id]


async def test_find_fact(record_store: RecordStore) -> None:
    ns, other = uid("ns"), uid("ns")
    key = "user:editor:theme"
    m = mem(ns, "prefers dark mode", fact_key=key)
    await record_store.put([m])
    found = await record_store.find_fact(ns, key)
    assert found is not None and found.id == m.id
    assert await record_store.find_fact(other, key) is None
    assert await record_store.find_fact(ns, "user:unknown") is None
    await record_store.put([m.with_changes(version=2, status=Status.SUPERSEDED)])
    assert await record_store.find_fact(ns, key) is None


async def test_find_facts_answers_many_pairs_in_one_call(record_store: RecordStore) -> None:
    ns, other = uid("ns"), uid("ns")
    a = mem(ns, "prefers dark mode", fact_key="user:editor:theme")
    b = mem(other, "lives in Lyon", fact_key="user:city")
    gone = mem(ns, "likes tea", fact_key="user:drink")
    await record_store.put([a, b, gone])
    await record_store.put([gone.with_changes(version=2, status=Status.ARCHIVED)])
    found = await record_store.find_facts(
        [(ns, "user:editor:theme"), (other, "user:city"), (ns, "user:city"), (ns, "user:drink")]
    )
    assert {k: m.id for k, m in found.items()} == {
        (ns, "user:editor:theme"): a.id,
        (other, "user:city"): b.id,
    }
    assert found[(ns, "user:editor:theme")].content == "prefers dark mode"
    assert await record_store.find_facts([]) == {}


async def test_fact_key_conflict_stores_nothing_of_the_batch(record_store: RecordStore) -> None:
    ns = uid("ns")
    key = "user:editor:theme"
    holder = mem(ns, "prefers dark mode", fact_key=key)
    await record_store.put([holder])

    innocent = mem(ns, "likes tea")
    rival = mem(ns, "prefers light mode", fact_key=key)
    holder_v2 = holder.with_changes(content="prefers solarized", version=2)
    with pytest.raises(Conflict):
        await record_store.put([innocent, holder_v2, rival])

    assert await record_store.get([innocent.id, rival.id]) == {}
    assert await record_store.history(rival.id) == []
    assert [h.version for h in await record_store.history(holder.id)] == [1]
    found = await record_store.find_fact(ns, key)
    assert found is not None and found.id == holder.id and found.version == 1
    # the same fact key in another namespace, or in an inactive memory, is no conflict
    await record_store.put([rival.with_changes(id=uid(), namespace=uid("ns"))])
    await record_store.put([rival.with_changes(id=uid(), status=Status.ARCHIVED)])


async def test_superseded_version_frees_its_fact_key(record_store: RecordStore) -> None:
    ns = uid("ns")
    key = "user:diet"
    old = mem(ns, "用户吃香菜", fact_key=key)
    await record_store.put([old])
    # a new version of the same memory keeps its key without conflicting with itself
    old_v2 = old.with_changes(content="用户很爱吃香菜", version=2)
    await record_store.put([old_v2])
    # supersede the holder and add the successor in one batch
    new = mem(ns, "用户不吃香菜", fact_key=key)
    await record_store.put([old_v2.with_changes(version=3, status=Status.SUPERSEDED), new])

    found = await record_store.find_fact(ns, key)
    assert found is not None and found.id == new.id
    current = (await record_store.get([old.id]))[old.id]
    assert (current.version, current.status, current.fact_key) == (3, Status.SUPERSEDED, key)


async def test_touch_counts_accesses_without_a_version(record_store: RecordStore) -> None:
    m = mem(uid("ns"), "prefers dark mode", access_count=0)
    await record_store.put([m])
    first = T0 + timedelta(days=1)
    second = datetime(2024, 5, 3, 8, 0, tzinfo=CST)
    await record_store.touch([m.id], first)
    await record_store.touch([m.id, uid("missing")], second)

    got = (await record_store.get([m.id]))[m.id]
    assert got.access_count == 2
    assert got.last_accessed_at == second and got.last_accessed_at.tzinfo is not None
    assert got.version == 1 and got.content == m.content
    assert len(await record_store.history(m.id)) == 1
    await record_store.touch([], second)


async def test_iter_vectors_yields_active_embedded_memories(record_store: RecordStore) -> None:
    ns = uid("ns")
    with_vec = [mem(ns, f"v{i}", embedding=vec(10 + i)) for i in range(5)]
    episodic = mem(ns, "ep", layer=Layer.EPISODIC, embedding=vec(20))
    no_vec = mem(ns, "no vector")
    archived = mem(ns, "archived", embedding=vec(21), status=Status.ARCHIVED)
    retired = mem(ns, "retired", embedding=vec(22))
    await record_store.put([*with_vec, episodic, no_vec, archived, retired])
    await record_store.put([retired.with_changes(version=2, status=Status.FORGOTTEN)])

    seen: dict[str, VectorItem] = {}
    async for batch in record_store.iter_vectors(batch_size=2):
        assert 0 < len(batch) <= 2
        for item in batch:
            assert item.id not in seen
            seen[item.id] = item
    mine = {m.id: m for m in [*with_vec, episodic, no_vec, archived, retired]}
    found = {i: item for i, item in seen.items() if i in mine}
    assert set(found) == {m.id for m in [*with_vec, episodic]}
    for i, item in found.items():
        assert item.namespace == ns
        assert item.layer == mine[i].layer
        np.testing.assert_array_equal(item.vector, mine[i].embedding)


async def test_count_keys(record_store: RecordStore) -> None:
    """Counts are of the whole store: on a shared server another test's gateway may apply its
    writes inside this test's window, so the window is measured again (at most three times)
    until nothing else changed in it."""
    for _ in range(3):
        ns = uid("ns")
        before = await record_store.count()
        memories = [
            mem(ns, "s1"),
            mem(ns, "s2"),
            mem(ns, "e1", layer=Layer.EPISODIC, status=Status.ARCHIVED),
            mem(ns, "p1", layer=Layer.PROCEDURAL, status=Status.QUARANTINED),
        ]
        await record_store.put(memories)
        await record_store.put([memories[1].with_changes(version=2, status=Status.FORGOTTEN)])
        after = await record_store.count()

        def delta(key: str, before: dict[str, int] = before, after: dict[str, int] = after) -> int:
            return after.get(key, 0) - before.get(key, 0)

        if sum(after.values()) - sum(before.values()) == 4:  # nothing but this test's writes
            break
    assert delta("semantic/active") == 1
    assert delta("semantic/forgotten") == 1
    assert delta("episodic/archived") == 1
    assert delta("procedural/quarantined") == 1
    assert all(isinstance(v, int) and v > 0 for v in after.values())
    assert all(k.split("/")[0] in set(Layer) and k.split("/")[1] in set(Status) for k in after)


async def test_namespaces_lists_those_with_active_memories(record_store: RecordStore) -> None:
    live, gone = uid("ns"), uid("ns")
    await record_store.put([mem(live, "a1"), mem(gone, "g1", status=Status.ARCHIVED)])
    found = await record_store.namespaces()
    assert live in found and gone not in found
    assert found == sorted(found)


async def test_scan_pages_a_namespace_in_id_order_any_status(record_store: RecordStore) -> None:
    ns, other = uid("ns"), uid("ns")
    ids = sorted(uid() for _ in range(5))
    statuses = [Status.ACTIVE, Status.FORGOTTEN, Status.ARCHIVED, Status.QUARANTINED, Status.ACTIVE]
    await record_store.put(
        [
            mem(ns, f"n{i}", id=mid, status=s)
            for i, (mid, s) in enumerate(zip(ids, statuses, strict=True))
        ]
        + [mem(other, "elsewhere")]
    )
    await record_store.put([mem(ns, "n0 v2", id=ids[0], version=2)])
    first = await record_store.scan(ns, "", 2)
    assert [m.id for m in first] == ids[:2]
    assert (first[0].version, first[0].content) == (2, "n0 v2")  # the current version
    rest = await record_store.scan(ns, first[-1].id, 10)
    assert [m.id for m in rest] == ids[2:]
    assert [m.status for m in rest] == statuses[2:]
    assert await record_store.scan(ns, ids[-1], 10) == []
    assert await record_store.scan(ns, "", 0) == []


# ------------------------------------------------------------------ erasure


async def test_erase_leaves_only_the_tombstone(record_store: RecordStore) -> None:
    ns = f"user/{uid('u')}"
    secret = f"alice's passport {uid('p')}"
    first = mem(ns, secret, fact_key="passport", embedding=vec(1), evidence=[secret])
    second = first.with_changes(version=2, content=f"{secret} renewed", entities=["Passport"])
    keep = mem(ns, "unrelated note", embedding=vec(2))
    await record_store.put([first, keep])
    await record_store.put([second])
    grave = first.with_changes(
        content="",
        version=3,
        status=Status.FORGOTTEN,
        metadata={"content_sha256": "ab"},
        evidence=[],
        entities=[],
        fact_key="",
        embedding=None,
    )
    await record_store.erase([grave])
    await record_store.erase([grave])  # idempotent
    got = (await record_store.get([first.id]))[first.id]
    assert_same(got, grave)
    history = await record_store.history(first.id)
    assert len(history) == 1 and history[0].content == "" and history[0].version == 3
    terms = secret.split()[-1]
    assert await record_store.keyword_search([ns], [], terms, 10) == []
    assert await record_store.find_fact(ns, "passport") is None
    assert first.id not in {v.id for b in [x async for x in record_store.iter_vectors()] for v in b}
    # the fact is free again, and the neighbour is untouched
    await record_store.put([mem(ns, "new passport", fact_key="passport")])
    assert (await record_store.get([keep.id]))[keep.id].content == "unrelated note"


async def test_delete_and_ids_in_erase_a_namespace_in_batches(record_store: RecordStore) -> None:
    ns, other = f"user/{uid('u')}", f"user/{uid('u')}"
    mine = [mem(ns, f"note {i}", embedding=vec(i)) for i in range(5)]
    theirs = mem(other, "stays")
    await record_store.put([*mine, theirs])
    await record_store.put([mine[0].with_changes(version=2, status=Status.ARCHIVED)])
    erased = 0
    while ids := await record_store.ids_in(ns, 2):
        assert len(ids) <= 2 and set(ids) <= {m.id for m in mine}
        await record_store.delete(ids)
        erased += len(ids)
    assert erased == 5
    assert await record_store.get([m.id for m in mine]) == {}
    for m in mine:
        assert await record_store.history(m.id) == []
    assert await record_store.query(MemoryFilter(namespaces=(ns,), statuses=())) == []
    assert await record_store.ids_in(other, 10) == [theirs.id]
    await record_store.delete([])
    await record_store.delete([mine[0].id])  # again: a no-op


@pytest.fixture(params=["sqlite", pytest.param("neo4j", marks=pytest.mark.real)])
async def pruning_store(
    request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[RecordStore]:
    """A record store that searches terms in over 5% of the searched memories like stop words
    (the gateway's default, ``lexical_common_terms``)."""
    store: RecordStore
    if request.param == "sqlite":
        from stores.sqlite_records import SqliteRecordStore

        store = SqliteRecordStore(tmp_path / "records.db", common_terms=0.05)
    else:
        from stores.neo4j_records import Neo4jRecordStore

        store = Neo4jRecordStore(request.getfixturevalue("neo4j_uri"), common_terms=0.05)
    await store.start()
    try:
        yield store
    finally:
        await store.close()


async def test_terms_in_most_searched_memories_are_left_out(pruning_store: RecordStore) -> None:
    """Same rule on every adapter: a term in more than 5% of the searched memories (at least
    200 of them) is searched like a stop word, judged within the namespaces searched, not the
    whole store; a small namespace keeps every term."""
    big, other, small = uid("ns"), uid("ns"), uid("ns")
    chatter = [mem(big, f"Leo mentioned the weather again, note {i}") for i in range(240)]
    kayaks = [
        mem(big, "Leo bought a kayak for the lake"),
        mem(big, "The kayak leaks at the seam"),
        mem(big, "Renting a kayak costs twenty"),
    ]
    quiet = [mem(big, f"Nothing much happened on day {i}") for i in range(60)]
    # "kayak" is everywhere in another namespace: that must not make it common in ``big``
    elsewhere = [mem(other, f"kayak club newsletter {i}") for i in range(250)]
    tiny = [mem(small, f"Leo note {i}") for i in range(5)]
    await pruning_store.put([*chatter, *kayaks, *quiet, *elsewhere, *tiny])
    layers = [Layer.SEMANTIC]

    hits = await pruning_store.keyword_search([big], layers, "Leo kayak", 10)
    assert {h[0] for h in hits} == {m.id for m in kayaks}  # no Leo-only chatter
    # asked again, the terms' counts are remembered for a few seconds, not probed: same hits
    assert await pruning_store.keyword_search([big], layers, "kayak Leo", 10) == hits
    assert await pruning_store.keyword_search([big], layers, "What did Leo say?", 10) == []
    # the memories come with the hits too
    found, _ = await pruning_store.keyword_memories([big], layers, "Leo kayak", 10)
    assert {m.id for m, _ in found} == {m.id for m in kayaks}
    # under 200 searched memories every term counts
    assert len(await pruning_store.keyword_search([small], layers, "Leo", 10)) == 5
    # in ``other`` the kayak term is in every memory: left out there
    assert await pruning_store.keyword_search([other], layers, "kayak", 10) == []


# ---- lean reads see every write (the embedded store answers them from its row cache)


async def lean(store: RecordStore, *ids: str) -> dict[str, Memory]:
    return await store.get(list(ids), embeddings=False)


async def test_lean_reads_see_new_versions_context_and_touches(record_store: RecordStore) -> None:
    ns = uid("ns")
    m = mem(ns, "likes tea", embedding=vec(3), access_count=0)
    other = mem(ns, "unrelated")
    await record_store.put([m, other])
    assert (await lean(record_store, m.id, other.id))[m.id].content == "likes tea"  # read once

    v2 = m.with_changes(content="likes green tea", version=2, updated_at=T0 + timedelta(days=1))
    await record_store.put([v2])
    await record_store.put([m])  # a late replay of version 1 changes nothing
    got = (await lean(record_store, m.id, other.id))[m.id]
    assert (got.content, got.version, got.embedding) == ("likes green tea", 2, None)

    await record_store.set_context([v2.with_changes(context="Bob: what do you drink?")])
    assert (await lean(record_store, m.id))[m.id].context == "Bob: what do you drink?"

    at = datetime(2024, 5, 3, 8, 0, 0, 123456, tzinfo=CST)
    await record_store.touch([m.id, m.id], at)
    await record_store.touch([m.id], at + timedelta(hours=1))
    got = (await lean(record_store, m.id))[m.id]
    assert got.access_count == 2 and got.last_accessed_at == at + timedelta(hours=1)
    assert_same(got, (await record_store.get([m.id]))[m.id].with_changes(embedding=None))
    assert (await lean(record_store, other.id))[other.id].access_count == other.access_count


async def test_keyword_hits_are_current_after_new_versions_and_touches(
    record_store: RecordStore,
) -> None:
    """The embedded store copies a lexical hit's row from its row cache and reads only the
    embedding: the hit must still be the current version, with its own embedding."""
    ns = uid("ns")
    m = mem(ns, "kayak trip in June", embedding=vec(5), access_count=0)
    await record_store.put([m, mem(ns, "unrelated note")])
    layers = [Layer.SEMANTIC]
    first, _ = await record_store.keyword_memories([ns], layers, "kayak", 10)
    assert_same(first[0][0], m)  # cached by the put (and now by the search)
    v2 = m.with_changes(
        content="kayak trip moved to July", version=2, embedding=vec(6), updated_at=T0 + DAY
    )
    await record_store.put([v2])
    at = T0 + 2 * DAY
    await record_store.touch([m.id], at)
    await record_store.set_context([v2.with_changes(context="Ana: any kayak news?")])
    want = v2.with_changes(access_count=1, last_accessed_at=at, context="Ana: any kayak news?")
    for _ in range(2):  # a caller that changes a hit changes its copy only
        hits, _ = await record_store.keyword_memories([ns], layers, "kayak july", 10)
        assert [h.id for h, _ in hits] == [m.id]
        assert_same(hits[0][0], want)
        hits[0][0].content, hits[0][0].embedding = "changed by a caller", vec(7)
    assert_same((await lean(record_store, m.id))[m.id], want.with_changes(embedding=None))


async def test_lean_reads_see_erasure_and_deletion(record_store: RecordStore) -> None:
    ns = f"user/{uid('u')}"
    gone, erased, kept = (mem(ns, f"secret {uid('s')}") for _ in range(3))
    await record_store.put([gone, erased, kept])
    assert len(await lean(record_store, gone.id, erased.id, kept.id)) == 3
    grave = erased.with_changes(content="", version=2, status=Status.FORGOTTEN)
    await record_store.erase([grave])
    await record_store.delete([gone.id])
    got = await lean(record_store, gone.id, erased.id, kept.id)
    assert set(got) == {erased.id, kept.id}
    assert (got[erased.id].content, got[erased.id].status) == ("", Status.FORGOTTEN)
    assert got[kept.id].content == kept.content


async def test_a_lean_read_hands_out_its_own_copy(record_store: RecordStore) -> None:
    m = mem(uid("ns"), "prefers dark mode")
    await record_store.put([m])
    for _ in range(2):  # the first read and a repeated one (answered from a cache, if any)
        got = (await lean(record_store, m.id))[m.id]
        got.content = "changed by a caller"
        got.embedding = vec(4)
    again = (await lean(record_store, m.id))[m.id]
    assert (again.content, again.embedding) == ("prefers dark mode", None)


async def test_a_failed_write_leaves_lean_reads_on_what_is_stored(
    record_store: RecordStore,
) -> None:
    ns = uid("ns")
    holder = mem(ns, "lives in Paris", fact_key="home")
    await record_store.put([holder])
    assert (await lean(record_store, holder.id))[holder.id].content == "lives in Paris"
    renamed = holder.with_changes(content="lives in Rome", version=2)
    with pytest.raises(Conflict):
        await record_store.put([renamed, mem(ns, "also home", fact_key="home")])
    assert (await lean(record_store, holder.id))[holder.id].content == "lives in Paris"
