"""A restart against an existing Neo4j is quiet (issue 47): the schema's ``IF NOT EXISTS``
statements used to log ~16 multi-line "index or constraint already exists" notifications on
every start after the first."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from tests.e2e.conftest import gateway_settings, running_gateway


@pytest.mark.real
def test_a_second_start_logs_no_schema_notifications(
    tmp_path: Path, neo4j_uri: str, redis_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    settings = gateway_settings(tmp_path, neo4j_uri=neo4j_uri, redis_url=redis_url)
    with running_gateway(settings):
        pass  # the schema exists from here on (and from every earlier test)
    caplog.clear()
    with caplog.at_level(logging.INFO), running_gateway(settings):
        pass
    noisy = [r.getMessage()[:120] for r in caplog.records if "already exists" in r.getMessage()]
    assert noisy == []
