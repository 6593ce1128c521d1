"""``memgate mcp`` as a model meets it, through the MCP SDK's own client (in memory, against a
real gateway): every tool's schema is valid JSON Schema with every parameter described and
exemplified (and the examples valid), namespaces and session ids are optional and follow one
convention, results are slim, and every error reads in the tool's terms."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp", reason="the MCP extra is not installed: pip install memgate[mcp]")

import jsonschema  # noqa: E402
from mcp import Client  # noqa: E402

from gateway.integrations.mcp import build_server  # noqa: E402
from tests.e2e.conftest import RunningGateway  # noqa: E402
from tests.tags import fresh_tag

ROOT = Path(__file__).resolve().parents[2]
OPTIONAL_EVERYWHERE = {"namespace", "namespaces", "session_id"}
#: what a model must never have to read: internals, transport names, pydantic dumps
UNREADABLE = re.compile(
    r"pydantic|https?://|INVALID_ARGUMENT|PERMISSION_DENIED|NOT_FOUND|UNAVAILABLE|"
    r"UNAUTHENTICATED|\bAppendTurn\b|\bProposeFact\b|\bRecall\b|\bWrite\b|Traceback|x-agent-id"
)


@asynccontextmanager
async def _client(address: str, agent: str = "master", **kw: Any) -> AsyncIterator[Client]:
    async with Client(build_server(address, agent, **kw)) as client:
        yield client


def _uid() -> str:
    return f"u-{fresh_tag(10)}"


async def _ok(client: Client, tool: str, **arguments: Any) -> dict[str, Any]:
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, f"{tool}: {result.content}"
    assert isinstance(result.structured_content, dict)
    return result.structured_content


async def _error(client: Client, tool: str, **arguments: Any) -> str:
    result = await client.call_tool(tool, arguments)
    assert result.is_error, f"{tool} should have failed: {result.structured_content}"
    text = " ".join(getattr(c, "text", "") for c in result.content)
    assert text.startswith(f"Error executing tool {tool}: "), text
    assert not UNREADABLE.search(text), f"{tool}: unreadable error: {text}"
    assert len(text) < 500 and "\n" not in text, text
    return text


@pytest.mark.parametrize("agent", ["master", "sub-schema"])
async def test_every_tool_schema_is_complete(gw: RunningGateway, agent: str) -> None:
    async with _client(gw.address, agent, namespaces=["user/alice"]) as client:
        tools = (await client.list_tools()).tools
    assert len(tools) == (12 if agent == "master" else 9)
    for tool in tools:
        schema = tool.input_schema
        jsonschema.Draft202012Validator.check_schema(schema)
        assert tool.description and len(tool.description) > 40, tool.name
        assert not (set(schema.get("required", ())) & OPTIONAL_EVERYWHERE), tool.name
        example: dict[str, Any] = {}
        for name, prop in schema["properties"].items():
            assert len(prop.get("description", "")) >= 10, f"{tool.name}.{name}: no description"
            assert prop.get("examples"), f"{tool.name}.{name}: no example"
            example[name] = prop["examples"][0]
        # the examples, put together, are a valid call
        jsonschema.validate(example, schema)
        assert tool.annotations is not None and tool.annotations.read_only_hint is not None
    by_name = {t.name: t for t in tools}
    # the defaults are spelled out where the model reads them
    remember = by_name["remember"].input_schema["properties"]
    assert "user/alice" in remember["namespace"]["description"]
    recall = by_name["recall"].input_schema["properties"]
    assert f"agent/{agent}, user/alice, global" in recall["namespaces"]["description"]
    turn_ns = by_name["append_turn"].input_schema["properties"]["namespace"]["description"]
    assert turn_ns != remember["namespace"]["description"]  # no description reused off-topic
    # docs/MCP.md reviews every tool and every parameter the server offers
    review = (ROOT / "docs" / "MCP.md").read_text()
    for tool in tools:
        assert f"### `{tool.name}`" in review, tool.name
        for name in tool.input_schema["properties"]:
            assert f"| `{name}` |" in review, f"{tool.name}.{name}"


async def test_one_namespace_convention_and_optional_sessions(gw: RunningGateway) -> None:
    uid = _uid()
    async with _client(gw.address, "master", namespaces=[f"user/{uid}"]) as client:
        # a name no other test uses: the recall reads `global` too, which the whole run shares
        written = await _ok(client, "remember", content="Ottoline is vegetarian")
        assert written["outcome"] == "stored"
        found = await _ok(client, "recall", query="what does Ottoline eat?")
        # the recall also reads `global` and the agent's own namespace, which other tests fill:
        # the memory is among the hits, in the user's namespace, explained and dated
        (hit,) = [h for h in found["hits"] if h["id"] == written["id"]]
        assert hit["namespace"] == f"user/{uid}"
        assert hit["why"] and hit["when"]
        turn = await _ok(client, "append_turn", content="I moved to Lyon last month")
        assert turn["outcome"] == "added" and turn["turns_in_window"] == 1
        again = await _ok(client, "append_turn", content="And I have a cat", role="user")
        assert again["turns_in_window"] == 2  # the same default session
        fact = await _ok(client, "propose_fact", fact="Lives in Lyon", explicit=True)
        assert fact["stored"] and fact["memory_id"]
        events = await _ok(client, "timeline")
        assert events["namespace"] == f"user/{uid}"
        assert [e["id"] for e in events["events"]] == []  # semantic memories are not events
        ended = await _ok(client, "end_session")
        assert ended["turns_to_mine"] == 2 and not ended["already_ended"]
    with gw.client() as c:
        assert c.get(written["id"]).namespace == f"user/{uid}"
        c.record_event(f"user/{uid}", "Booked a table at Noma", wait=True)
    async with _client(gw.address, "master", namespaces=[f"user/{uid}"], session_id="s-1") as cl:
        events = await _ok(cl, "timeline")
        # oldest first; the session's mining may have added episodes before it
        assert events["events"][-1]["what"] == "Booked a table at Noma"
        assert set(events["events"][0]) == {"id", "when", "what", "type"}


async def test_every_error_is_readable_and_changes_nothing(gw: RunningGateway) -> None:
    uid, sub = _uid(), f"sub-{fresh_tag(8)}"
    ns = f"user/{uid}"
    async with _client(gw.address, "master", namespaces=[ns]) as client:
        assert "'query' is required" in await _error(client, "recall")
        assert "less than or equal to 50" in await _error(client, "recall", query="x", top_k=500)
        assert "'content'" in await _error(client, "remember", content="")
        assert "'layer'" in await _error(client, "remember", content="x", layer="facts")
        text = await _error(client, "remember", content="x", namespace="users/alice")
        assert "an argument was refused" in text and "Fix it" in text
        text = await _error(client, "forget", memory_id="no-such-id")
        assert "not found" in text and "wait" not in text
        assert "not found" in await _error(client, "approve", proposal_id="nope")
        await _error(client, "timeline", namespace="nobody")
        await _error(client, "timeline", since="not a date")
        await _error(client, "append_turn", content="hi", session_id="bad id!")
        await _error(client, "submit_result", task_id="t", status="won", summary="x")
        await _error(client, "match_skill", intent="x", namespaces=["users/x"])
    async with _client(gw.address, sub, namespaces=[ns]) as client:
        text = await _error(client, "recall", query="x", namespaces=["agent/someone-else"])
        assert "not allowed for this agent" in text
        turn = await _error(client, "end_session", namespace="agent/someone-else")
        assert "not allowed" in turn
    async with _client("127.0.0.1:1", "master") as client:
        assert "unreachable" in await _error(client, "recall", query="x")
    with gw.client() as c:  # nothing was written by the refused calls
        assert c.timeline(ns) == []
        assert c.recall("x", namespaces=[ns]).hits == []


def test_bad_defaults_are_refused_in_one_line(gw: RunningGateway) -> None:
    for bad in (
        ["--namespace", "users/alice"],
        ["--session", "no spaces please"],
        *[[a for i in range(17) for a in ("--namespace", f"user/u{i}")]],
    ):
        out = subprocess.run(
            [sys.executable, "-m", "gateway.cli", "mcp", "--target", gw.address, "--agent", "a1"]
            + bad,
            capture_output=True,
            text=True,
            timeout=60,
            cwd=ROOT,
            env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
        )
        assert out.returncode == 2, out.stderr
        lines = out.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("memgate mcp: "), out.stderr
