"""Fixtures of the contract suites: a local 3-master Redis Cluster (started once per session, only
when a test asks for it)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.contract.local_cluster import start_cluster


@pytest.fixture(scope="session")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[int]]:
    """The masters' ports of a Redis Cluster on 127.0.0.1."""
    yield from start_cluster(tmp_path_factory.mktemp("cluster"))
