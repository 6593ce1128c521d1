"""Shared fixtures: where the real servers are. The test command (scripts/test.sh) starts them and
exports their URLs; without them the real-server tests skip locally and FAIL in CI."""

from __future__ import annotations

import os

import pytest

# Gateways the tests start as processes (``memgate serve``, the demo, benchmarks) run without
# recall worker processes unless a test asks for them: with the default (one per core) every
# gateway would start two more interpreters, which tripled the suite's time on 2 cores. The
# workers are tested in tests/e2e/test_recall_workers.py, the default ("auto") included.
os.environ.setdefault("MEMGATE_RECALL_PROCESSES", "0")


def _require(env: str, what: str, how: str) -> str:
    value = os.environ.get(env, "")
    if value:
        return value
    message = (
        f"{what} is not configured: set {env} (start one with `{how}`, or run scripts/test.sh)"
    )
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(message)
    pytest.skip(message)


@pytest.fixture(scope="session")
def redis_url() -> str:
    return _require("MEMGATE_TEST_REDIS_URL", "Redis", "deploy/redis.sh start")


@pytest.fixture(scope="session")
def neo4j_uri() -> str:
    return _require("MEMGATE_TEST_NEO4J_URI", "Neo4j", "deploy/neo4j.sh start")


def pytest_terminal_summary(terminalreporter, exitstatus, config):  # type: ignore[no-untyped-def]
    """Say how many real-server tests ran, so a green run cannot hide skipped servers."""
    counts = {}
    for outcome in ("passed", "failed", "skipped", "error"):
        reports = terminalreporter.stats.get(outcome, [])
        counts[outcome] = sum(1 for r in reports if "real" in getattr(r, "keywords", {}))
    terminalreporter.write_line(
        "real-server tests (Redis/Neo4j): "
        + ", ".join(f"{n} {k}" for k, n in counts.items() if n or k == "passed")
    )


@pytest.fixture
def odd_payloads(monkeypatch: pytest.MonkeyPatch) -> None:
    """Journal payloads a gateway cannot read back: a ``MemoryWrite`` whose content is
    "corrupt" is journaled cut in half (not JSON); "newer", as a newer memgate would write it
    (the next codec version)."""
    from gateway.core.model import commands

    real = commands.dumps

    def dumps(cmd: commands.Command) -> str:
        text = real(cmd)
        if isinstance(cmd, commands.MemoryWrite) and cmd.content == "corrupt":
            return text[: len(text) // 2]
        if isinstance(cmd, commands.MemoryWrite) and cmd.content == "newer":
            version = commands.CODEC_VERSION
            return text.replace(f'"v":{version}', f'"v":{version + 1}')
        return text

    monkeypatch.setattr(commands, "dumps", dumps)
