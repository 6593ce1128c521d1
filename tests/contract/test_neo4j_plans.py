"""The Neo4j reads a recall (and a timeline) makes are answered from an index, never by scanning
every node of a label: a scan cost 121 ms per recall at 60k memories (docs/BENCHMARKS-HISTORY.md, fourth
round). Each statement the adapters send is captured and EXPLAINed on the real server."""

from __future__ import annotations

from typing import Any

import neo4j
import pytest

from gateway.core.model.models import Layer, MemoryFilter, Status
from stores.neo4j_graph import Neo4jEpisodicGraph
from stores.neo4j_records import Neo4jRecordStore
from tests.tags import fresh_tag

pytestmark = pytest.mark.real


def _operators(plan: Any) -> list[str]:
    out = [plan["operatorType"].split("@")[0]]
    for child in plan.get("children", []):
        out.extend(_operators(child))
    return out


def _capture(backed: Any, sent: list[tuple[str, dict[str, Any]]]) -> None:
    session = backed._db
    read = session.read

    async def capturing(query: str, params: dict[str, Any]) -> Any:
        sent.append((query, params))
        return await read(query, params)

    session.read = capturing


async def test_recall_and_timeline_reads_use_indexes(neo4j_uri: str) -> None:
    records = Neo4jRecordStore(neo4j_uri, common_terms=0.05)
    graph = Neo4jEpisodicGraph(neo4j_uri)
    await records.start()
    await graph.start()
    sent: list[tuple[str, dict[str, Any]]] = []
    try:
        _capture(records, sent)
        _capture(graph, sent)
        ns = (f"user/plans-{fresh_tag(8)}", f"agent/plans-{fresh_tag(8)}")
        await records.keyword_memories(ns, (Layer.EPISODIC,), "where did we go hiking", 10)
        await records.query(MemoryFilter(ns, layers=(), statuses=(), limit=5))
        await records.query(MemoryFilter(ns, layers=(Layer.EPISODIC,), limit=5))
        await records.query(MemoryFilter(ns, statuses=(Status.ACTIVE,), types=("note",), limit=5))
        await records.get(["a", "b"])
        await graph.timeline(ns[0], None, None, 5)
        assert len(sent) >= 6
    finally:
        await records.close()
        await graph.close()
    driver = neo4j.GraphDatabase.driver(neo4j_uri, auth=None)
    try:
        with driver.session() as s:
            for query, params in sent:
                plan = s.run("EXPLAIN " + query, params).consume().plan
                assert plan is not None
                scans = [op for op in _operators(plan) if op in ("NodeByLabelScan", "AllNodesScan")]
                assert not scans, f"{scans} in the plan of:\n{query}"
    finally:
        driver.close()
