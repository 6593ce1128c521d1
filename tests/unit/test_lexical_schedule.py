"""``lexical_schedule``: a recall's lexical search beside the query's embedding, or after the
vector search in one round trip with the dense hits' memories. Both give the same answer."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from gateway.core.recall.recall import RecallQuery
from gateway.core.writing.inputs import WriteInput
from gateway.settings import Settings
from gateway.wiring import build_service
from stores.sqlite_records import SqliteRecordStore

TURNS = [
    "Elena: I booked the hotel near Kyoto station for the conference.",
    "Leo: The ferry to Miyajima leaves at nine, bring the tickets.",
    "Elena: My sister adopted a rabbit called Pickle last spring.",
    "Leo: I finally finished the pottery course on Thursday evenings.",
    "Elena: The printer at the office jammed again before the demo.",
    "Leo: We should try the ramen place by the river next week.",
]
QUESTIONS = ["Where is the hotel?", "What is the rabbit called?", "pottery course", "printer demo"]


def test_auto_is_after_dense_on_neo4j_only() -> None:
    assert not Settings().lexical_after_dense()
    assert Settings(neo4j_uri="bolt://127.0.0.1:7687").lexical_after_dense()
    assert Settings(lexical_schedule="after_dense").lexical_after_dense()
    assert not Settings(neo4j_uri="bolt://x:1", lexical_schedule="beside").lexical_after_dense()
    with pytest.raises(ValueError, match="lexical_schedule"):
        Settings(lexical_schedule="later").validate()


async def _answers(tmp_path: Path, schedule: str, calls: list[tuple[str, Any]]) -> list[Any]:
    settings = Settings(
        data_dir=tmp_path / schedule,
        embedder="hash",
        injection_embedder="",
        recall_processes=0,
        recall_cache_ttl_s=0,
    )
    svc = build_service(dataclasses.replace(settings, lexical_schedule=schedule))
    await svc.start()
    try:
        await svc.writer.write(
            "master",
            [WriteInput(namespace="user/u", layer="episodic", content=t) for t in TURNS],
            wait=True,
        )
        calls.clear()
        out = []
        for question in QUESTIONS:
            r = await svc.recaller.recall_as("master", RecallQuery(question, ("user/u",)))
            out.append([(h.memory.content, round(h.score, 6)) for h in r.hits])
        return out
    finally:
        await svc.close()


async def test_both_schedules_answer_the_same_and_after_dense_loads_in_one_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[tuple[str, Any]] = []
    keyword, get = SqliteRecordStore.keyword_memories, SqliteRecordStore.get

    async def keyword_spy(self: SqliteRecordStore, *args: Any, **kw: Any) -> Any:
        calls.append(("keyword_memories", kw.get("load", ())))
        return await keyword(self, *args, **kw)

    async def get_spy(self: SqliteRecordStore, ids: Any, *args: Any, **kw: Any) -> Any:
        calls.append(("get", list(ids)))
        return await get(self, ids, *args, **kw)

    monkeypatch.setattr(SqliteRecordStore, "keyword_memories", keyword_spy)
    monkeypatch.setattr(SqliteRecordStore, "get", get_spy)
    beside = await _answers(tmp_path, "beside", calls)
    beside_calls = list(calls)
    after = await _answers(tmp_path, "after_dense", calls)
    assert after == beside and all(beside)
    # beside: the lexical search alone, then a load of the dense hits
    assert all(load == () for name, load in beside_calls if name == "keyword_memories")
    assert any(name == "get" for name, _ in beside_calls)
    # after_dense: one call per recall carries the dense hits' ids to load (ranking reads no
    # further on six memories: no other load)
    assert [name for name, _ in calls] == ["keyword_memories"] * len(QUESTIONS)
    assert all(load for _, load in calls)
