"""Where vectors live (``Settings.vectors``): the embedded default keeps every vector, Neo4j
records load them on demand; the wiring builds the matching index."""

from __future__ import annotations

from pathlib import Path

import pytest

from gateway.settings import Settings, load_settings
from gateway.wiring import build_stores


def test_auto_is_full_embedded_and_on_demand_with_neo4j() -> None:
    assert Settings().vector_mode() == "full"
    assert Settings(neo4j_uri="bolt://127.0.0.1:7687").vector_mode() == "on_demand"
    assert Settings(neo4j_uri="bolt://x:1", vectors="full").vector_mode() == "full"
    assert Settings(vectors="on_demand").vector_mode() == "on_demand"


def test_bad_values_are_refused_with_their_name() -> None:
    with pytest.raises(ValueError, match="vectors must be"):
        Settings(vectors="lazy").validate()
    with pytest.raises(ValueError, match="vector_cache_mb"):
        Settings(vector_cache_mb=0).validate()


def test_pinned_namespaces_from_the_environment() -> None:
    s = load_settings(
        env={"MEMGATE_VECTOR_PINNED": " global, team/ops ,", "MEMGATE_VECTORS": "on_demand"}
    )
    assert s.pinned_namespaces() == ("global", "team/ops")


@pytest.mark.parametrize("mode", ["full", "on_demand"])
def test_the_wiring_builds_the_index_of_the_mode(tmp_path: Path, mode: str) -> None:
    stores = build_stores(Settings(data_dir=tmp_path, vectors=mode, embedder="hash"), dim=384)
    assert stores.index.on_demand() is (mode == "on_demand")
    # a full copy must be filled from the records at start; a cache has nothing to fill
    assert stores.index.needs_rebuild() is (mode == "full")
