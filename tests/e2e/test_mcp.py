"""``memgate mcp`` driven by the ``mcp`` SDK's own client, over stdio (the server is a subprocess,
as an MCP host launches it) and over streamable HTTP (a subprocess on 127.0.0.1), against a real
gateway on both backends: tools/list, every tool called, the timeline resource, and refusals."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp", reason="the MCP extra is not installed: pip install memgate[mcp]")

from mcp import Client, StdioServerParameters  # noqa: E402

from tests.e2e.conftest import (  # noqa: E402
    RunningGateway,
    gateway_settings,
    running_gateway,
)
from tests.tags import fresh_tag  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
MASTER_TOOLS = {
    "remember",
    "recall",
    "forget",
    "timeline",
    "append_turn",
    "end_session",
    "propose_fact",
    "submit_result",
    "match_skill",
    "list_proposals",
    "approve",
    "reject",
}


def _command(address: str, agent: str, *extra: str) -> list[str]:
    return ["-m", "gateway.cli", "mcp", "--target", address, "--agent", agent, *extra]


def _key_args(api_key: str | None) -> tuple[str, ...]:
    return ("--api-key", api_key) if api_key else ()


@contextmanager
def _http_server(address: str, agent: str, log: Path, *extra: str) -> Iterator[str]:
    """``memgate mcp --transport http --port 0`` as a subprocess; yields its URL."""
    with log.open("w") as err:
        proc = subprocess.Popen(
            [
                sys.executable,
                *_command(address, agent, "--transport", "http", "--port", "0", *extra),
            ],
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
            stderr=err,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
        )
    try:
        deadline = time.monotonic() + 90
        while not (m := re.search(r"streamable HTTP on (http://\S+)", log.read_text())):
            assert proc.poll() is None, f"memgate mcp exited: {log.read_text()}"
            assert time.monotonic() < deadline, f"memgate mcp did not start: {log.read_text()}"
            time.sleep(0.1)
        assert m.group(1).startswith("http://127.0.0.1:")  # loopback by default
        yield m.group(1)
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)


@pytest.fixture(params=["stdio", "http"])
def connect(request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    """``connect(address, agent)``: an MCP client session with ``memgate mcp`` for that agent."""

    @asynccontextmanager
    async def session(
        address: str, agent: str, api_key: str | None = None
    ) -> AsyncIterator[Client]:
        if request.param == "stdio":
            params = StdioServerParameters(
                command=sys.executable,
                args=_command(address, agent, *_key_args(api_key)),
                cwd=str(ROOT),
                env={"PYTHONPATH": str(ROOT)},
            )
            async with Client(params, read_timeout_seconds=60) as client:
                yield client
            return
        log = tmp_path / f"mcp-{agent}-{fresh_tag(6)}.log"
        token = uuid.uuid4().hex
        with _http_server(address, agent, log, "--token", token, *_key_args(api_key)) as url:
            async with Client(_with_token(url, token), read_timeout_seconds=60) as client:
                yield client

    return session


def _with_token(url: str, token: str) -> Any:
    """A streamable-HTTP transport that sends the bearer token."""
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60)
    return streamable_http_client(url, http_client=http)


async def _call(client: Client, tool: str, **arguments: Any) -> dict[str, Any]:
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, f"{tool}: {result.content}"
    assert isinstance(result.structured_content, dict)
    return result.structured_content


async def _refused(client: Client, tool: str, **arguments: Any) -> str:
    result = await client.call_tool(tool, arguments)
    assert result.is_error, f"{tool} should have failed: {result.structured_content}"
    return " ".join(getattr(c, "text", "") for c in result.content)


async def test_master_uses_every_tool(gw: RunningGateway, ns: str, connect: Any) -> None:
    sub = f"sub-{fresh_tag(8)}"
    skills_ns = f"task/skills-{fresh_tag(8)}"
    with gw.client(sub) as cs, gw.client() as cm:
        proposal = cs.write_result(ns, "semantic", "The user prefers morning meetings")
        other = cs.write_result(ns, "semantic", "The user hates all meetings")
        cm.register_skill("save-md", "Save a web page as Markdown", namespace=skills_ns)
        event = cm.record_event(ns, "Booked a table for two at Noma", wait=True)

    async with connect(gw.address, "master") as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert set(tools) == MASTER_TOOLS
        for tool in tools.values():  # schemas an LLM can act on
            assert tool.description and len(tool.description) > 30, tool.name
        remember = tools["remember"].input_schema
        assert set(remember["required"]) == {"content"}
        assert "user/<id>" in remember["properties"]["namespace"]["description"]
        assert remember["properties"]["layer"]["enum"] == ["semantic", "episodic", "procedural"]

        written = await _call(
            client,
            "remember",
            content="Alice is vegetarian",
            namespace=ns,
            importance=0.8,
            entities=["Alice"],
        )
        assert written["id"] and written["outcome"] == "stored" and "proposal_id" not in written
        recalled = await _call(client, "recall", query="what does Alice eat?", namespaces=[ns])
        assert recalled["hits"][0]["id"] == written["id"]
        assert set(recalled["hits"][0]) == {"id", "content", "when", "layer", "namespace", "why"}
        assert "Alice is vegetarian" in recalled["memory_block"]

        turn = await _call(
            client, "append_turn", namespace=ns, session_id="s1", role="user", content="hi"
        )
        assert turn["turns_in_window"] == 1 and turn["outcome"] == "added"
        fact = await _call(
            client,
            "propose_fact",
            namespace=ns,
            fact="Prefers replies in English",
            session_id="s1",
            explicit=True,
        )
        assert fact["stored"] and fact["memory_id"]
        task = f"t-{fresh_tag(8)}"
        result = await _call(
            client,
            "submit_result",
            task_id=task,
            status="done",
            summary="Compared three vendors",
            decisions=["pick vendor B"],
            memory_updates=[dict(namespace=ns, content="The user's company uses Salesforce")],
        )
        assert result["event_id"] and len(result["stored"]) == 1 and result["proposed"] == []
        matches = (
            await _call(
                client, "match_skill", intent="save page as markdown", namespaces=[skills_ns]
            )
        )["matches"]
        assert matches[0]["name"] == "save-md"

        pending = (await _call(client, "list_proposals"))["proposals"]
        assert {proposal.proposal_id, other.proposal_id} <= {p["id"] for p in pending}
        approved = await _call(client, "approve", proposal_id=proposal.proposal_id, reason="ok")
        assert approved["state"] == "approved" and approved["memory_id"]
        rejected = await _call(client, "reject", proposal_id=other.proposal_id)
        assert rejected["state"] == "rejected"

        forgotten = await _call(client, "forget", memory_id=written["id"], reason="asked to")
        assert forgotten == {"id": written["id"], "forgotten": True}
        again = await _call(client, "recall", query="Alice vegetarian", namespaces=[ns])
        assert written["id"] not in {h["id"] for h in again["hits"]}

        ended = await _call(client, "end_session", namespace=ns, session_id="s1")
        assert set(ended) == {"job_id", "turns_to_mine", "already_ended"}

        kind, owner = ns.split("/")
        read = await client.read_resource(f"memgate://timeline/{kind}/{owner}")
        text = read.contents[0].text  # type: ignore[union-attr]
        assert event in text and "Booked a table for two at Noma" in text

        # refusals come back as tool errors in the tool's terms, and change nothing
        bad = await _refused(client, "remember", content="x", namespace="not a namespace")
        assert "an argument was refused" in bad and "namespace" in bad and "Fix it" in bad
        missing = await _refused(client, "approve", proposal_id="nope")
        assert "not found" in missing and "list_proposals" in missing
    with gw.client() as cm:
        assert [e.id for e in cm.timeline(ns)] == [event]


async def test_sub_agent_is_bound_by_the_gateway_rules(
    gw: RunningGateway, ns: str, connect: Any
) -> None:
    sub, other = f"sub-{fresh_tag(8)}", f"sub-{fresh_tag(8)}"
    with gw.client(other) as co:
        private = co.write(f"agent/{other}", "semantic", "other's private note", wait=True)
    async with connect(gw.address, sub) as client:
        tools = {t.name for t in (await client.list_tools()).tools}
        assert tools == MASTER_TOOLS - {"list_proposals", "approve", "reject"}
        denied = await _refused(client, "recall", query="note", namespaces=[f"agent/{other}"])
        assert "not allowed for this agent" in denied
        forgot = await _refused(client, "forget", memory_id=private)
        assert "not found" in forgot  # another agent's private id answers like a missing one
        # a write into a shared namespace is a proposal, not a memory
        written = await _call(client, "remember", content="The user likes jazz", namespace=ns)
        assert written["id"] == "" and written["proposal_id"] and "proposed" in written["outcome"]
        screened = await _call(
            client,
            "remember",
            content="My card is 4111 1111 1111 1111",
            namespace=f"agent/{sub}",
        )
        assert screened["redacted"]
    with gw.client() as cm:
        assert cm.get(private).status == "active"
        assert cm.recall("jazz", namespaces=[ns]).hits == []


async def test_api_key_is_passed_to_the_gateway(tmp_path: Path, connect: Any) -> None:
    settings = gateway_settings(tmp_path / "gw", api_keys={"master": "s3cret"})
    with running_gateway(settings) as running:
        async with connect(running.address, "master", api_key="s3cret") as client:
            written = await _call(
                client, "remember", content="Alice is vegetarian", namespace="user/a"
            )
            assert written["id"]
        async with connect(running.address, "master", api_key="wrong") as client:
            refused = await _refused(client, "recall", query="Alice", namespaces=["user/a"])
            assert "could not sign in to the gateway" in refused


def test_mcp_over_http_wants_its_token(gw: RunningGateway, tmp_path: Path) -> None:
    """Without the bearer token (or with another) a request gets 401 and never reaches the
    gateway; with no --token a random one is made and printed; --no-auth is for loopback only."""
    import httpx2

    hello = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-03-26",
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "0"},
        },
    }
    headers = {"Accept": "application/json, text/event-stream"}
    log = tmp_path / "auth.log"
    with _http_server(gw.address, "master", log) as url:
        # issue 49 N7: the made token is kept in a file only its user reads, never printed
        printed = re.search(r"bearer token for this server is in (\S+) \(mode 600", log.read_text())
        assert printed, log.read_text()
        kept = Path(printed.group(1))
        assert kept.stat().st_mode & 0o777 == 0o600
        token = kept.read_text().strip()
        assert len(token) >= 32 and token not in log.read_text()
        for sent in ({}, {"Authorization": "Bearer wrong"}):
            r = httpx2.post(url, json=hello, headers={**headers, **sent}, timeout=30)
            assert r.status_code == 401 and "Bearer" in r.headers["www-authenticate"]
        ok = httpx2.post(
            url,
            json=hello,
            headers={**headers, "Authorization": f"Bearer {token}"},
            timeout=30,
        )
        assert ok.status_code == 200, ok.text
    refused = subprocess.run(
        [
            sys.executable,
            *_command(
                gw.address,
                "master",
                "--transport",
                "http",
                "--no-auth",
                "--host",
                "0.0.0.0",
                "--port",
                "0",
            ),
        ],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
    )
    assert refused.returncode == 2 and "--no-auth is refused" in refused.stderr
    open_log = tmp_path / "open.log"
    with _http_server(gw.address, "master", open_log, "--no-auth") as url:
        assert "WARNING --no-auth" in open_log.read_text()
        r = httpx2.post(url, json=hello, headers=headers, timeout=30)
        assert r.status_code == 200


def test_secrets_on_the_command_line_are_warned_about(gw: RunningGateway, tmp_path: Path) -> None:
    """Issue 49 N7: ``--token``/``--api-key`` given literally show in ``/proc/PID/cmdline``;
    they still work, with a warning naming the way that does not show them: the file options
    (or the environment) are read without one, and the secret is never logged."""
    import httpx2

    secret = f"tok-{fresh_tag(24)}"
    keyfile = tmp_path / "token"
    keyfile.write_text(secret + "\n")
    keyfile.chmod(0o600)
    hello = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-03-26", "capabilities": {},
        "clientInfo": {"name": "t", "version": "0"}}}  # fmt: skip
    headers = {"Accept": "application/json, text/event-stream", "Authorization": f"Bearer {secret}"}
    literal, from_file = tmp_path / "literal.log", tmp_path / "file.log"
    with _http_server(gw.address, "master", literal, "--token", secret):
        pass
    assert "WARNING --token on the command line is visible" in literal.read_text()
    with _http_server(gw.address, "master", from_file, "--token-file", str(keyfile)) as url:
        r = httpx2.post(url, json=hello, headers=headers, timeout=30)
        assert r.status_code == 200, r.text
        # issue 49 N11: the scheme is case-insensitive
        lower = {**headers, "Authorization": f"bearer {secret}"}
        assert httpx2.post(url, json=hello, headers=lower, timeout=30).status_code == 200
        wrong = {**headers, "Authorization": f"Basic {secret}"}
        assert httpx2.post(url, json=hello, headers=wrong, timeout=30).status_code == 401
    assert "WARNING" not in from_file.read_text() and secret not in from_file.read_text()
