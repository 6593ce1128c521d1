"""The operators' commands as a script runs them: `memgate proposals|forget|export|import`
against a keyed gateway, with --json output and the documented exit codes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from gateway.client import GatewayClient, InvalidArgument, PermissionDenied
from gateway.ops_cli import BAD_INPUT, CONFLICT, NOT_ALLOWED, NOT_FOUND, OK, UNREACHABLE
from tests.e2e.conftest import RunningGateway, gateway_settings, running_gateway
from tests.tags import fresh_tag

KEY = "k-" + uuid.uuid4().hex
HELPER_KEY = "h-" + uuid.uuid4().hex


def memgate(
    gw: RunningGateway | str, *args: str, key: str | None = KEY, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "MEMGATE_API_KEY"}
    env["COLUMNS"] = "250"  # rich tables fold to the terminal width
    if key:
        env["MEMGATE_API_KEY"] = key  # the key comes from the environment
    target = gw if isinstance(gw, str) else gw.address
    return subprocess.run(
        [sys.executable, "-m", "gateway.cli", *args[:1], *args[1:], "--target", target],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        input=stdin,
    )


@pytest.fixture(scope="module")
def keyed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningGateway]:
    settings = gateway_settings(
        tmp_path_factory.mktemp("cli"), api_keys={"master": KEY, "helper": HELPER_KEY}
    )
    with running_gateway(settings) as gw:
        yield gw


def _propose(gw: RunningGateway, ns: str, *texts: str) -> list[str]:
    with GatewayClient(gw.address, "helper", api_key=HELPER_KEY) as h:
        return [h.write_result(ns, "semantic", text).proposal_id for text in texts]


def test_proposals_list_approve_reject_with_exit_codes(keyed: RunningGateway) -> None:
    ns = f"user/u-{fresh_tag(8)}"
    keep, drop = _propose(keyed, ns, "The user drinks oolong", "The user is a cat")
    listed = memgate(keyed, "proposals", "list", "--json")
    assert listed.returncode == OK, listed.stderr
    pending = {p["id"]: p for p in json.loads(listed.stdout)}
    assert pending[keep]["item"]["content"] == "The user drinks oolong"
    people = memgate(keyed, "proposals", "list")
    assert people.returncode == OK and "The user drinks oolong" in people.stdout  # a table

    done = memgate(keyed, "proposals", "approve", keep, "--reason", "confirmed", "--json")
    assert done.returncode == OK and json.loads(done.stdout)["state"] == "approved"
    for decision in ("reject", "approve"):  # one rule with the console: a reason, always
        no_reason = memgate(keyed, "proposals", decision, drop)
        assert no_reason.returncode == 2 and "--reason" in no_reason.stderr
    assert memgate(keyed, "proposals", "reject", drop, "--reason", "nonsense").returncode == OK
    retried = memgate(keyed, "proposals", "reject", drop, "--reason", "nonsense", "--json")
    assert retried.returncode == OK and json.loads(retried.stdout)["state"] == "rejected"
    again = memgate(keyed, "proposals", "approve", drop, "--reason", "late")
    assert again.returncode == CONFLICT and "already rejected" in again.stderr
    assert memgate(keyed, "proposals", "approve", "nope", "--reason", "x").returncode == NOT_FOUND
    as_helper = memgate(keyed, "proposals", "list", "--agent", "helper", key=HELPER_KEY)
    assert as_helper.returncode == NOT_ALLOWED and "master" in as_helper.stderr
    no_key = memgate(keyed, "proposals", "list", key=None)
    assert no_key.returncode == NOT_ALLOWED and "UNAUTHENTICATED" in no_key.stderr


def test_a_pending_fact_is_listed_and_confirmed_by_the_listed_id(keyed: RunningGateway) -> None:
    """``propose_fact`` answers a ``pending_id``; the master finds the fact in
    ``pending_facts`` (client) and ``memgate facts list`` (CLI) with the id ConfirmFact takes —
    also for a sub-agent's proposal, whose own id is an alias — and confirms it from there."""
    ns = f"user/u-{fresh_tag(8)}"
    with GatewayClient(keyed.address, "helper", api_key=HELPER_KEY) as h:
        alias = h.propose_fact(ns, "The user keeps bees", session_id="s1").pending_id
        with pytest.raises(PermissionDenied, match="master"):
            h.pending_facts(ns)
    with GatewayClient(keyed.address, "master", api_key=KEY) as c:
        mine = c.propose_fact(ns, "The user rows on Sundays", session_id="s1").pending_id
        listed = c.pending_facts(ns)
        assert [f.fact for f in listed] == ["The user keeps bees", "The user rows on Sundays"]
        assert listed[1].id == mine and listed[0].id != alias and listed[0].sessions == ["s1"]
        with pytest.raises(InvalidArgument, match="limit"):
            c.pending_facts(ns, limit=501)
        with pytest.raises(InvalidArgument):
            c.pending_facts("not a namespace")
    table = memgate(keyed, "facts", "list", ns)
    assert table.returncode == OK and "The user keeps bees" in table.stdout
    as_json = json.loads(memgate(keyed, "facts", "list", ns, "--json").stdout)
    bees = next(f["id"] for f in as_json if f["fact"] == "The user keeps bees")
    done = memgate(keyed, "facts", "confirm", bees, "--json")
    assert done.returncode == OK and json.loads(done.stdout)["promoted"], done.stderr
    left = json.loads(memgate(keyed, "facts", "list", ns, "--json").stdout)
    assert [f["fact"] for f in left] == ["The user rows on Sundays"]
    as_helper = memgate(keyed, "facts", "list", ns, "--agent", "helper", key=HELPER_KEY)
    assert as_helper.returncode == NOT_ALLOWED


def test_forget_by_id(keyed: RunningGateway) -> None:
    ns = f"user/u-{fresh_tag(8)}"
    with GatewayClient(keyed.address, "master", api_key=KEY) as c:
        mid = c.write(ns, "semantic", "The user's old address", wait=True)
    done = memgate(keyed, "forget", mid, "--reason", "moved", "--json")
    assert done.returncode == OK and json.loads(done.stdout)["status"] == "forgotten"
    assert memgate(keyed, "forget", "no-such-id", "--reason", "x").returncode == NOT_FOUND
    unreachable = memgate("127.0.0.1:1", "forget", mid, "--reason", "x")
    assert unreachable.returncode == UNREACHABLE and "memgate serve" in unreachable.stderr


def test_export_then_import_into_another_gateway(keyed: RunningGateway, tmp_path: Path) -> None:
    ns = f"user/u-{fresh_tag(8)}"
    with GatewayClient(keyed.address, "master", api_key=KEY) as c:
        for i in range(5):
            c.write(ns, "semantic", f"Fact number {i} about the user", wait=True)
        c.record_event(ns, "Visited the museum", entities=["Louvre"], wait=True)
    dump = tmp_path / "dump.jsonl"
    out = memgate(keyed, "export", ns, "--vectors", "-o", str(dump), "--json")
    assert out.returncode == OK, out.stderr
    assert json.loads(out.stdout)["memories"] == 6
    lines = dump.read_text().splitlines()
    assert json.loads(lines[0])["memgate_export"] == 1 and len(lines) == 7
    with running_gateway(gateway_settings(tmp_path / "other", api_keys={"master": KEY})) as other:
        first = memgate(other, "import", str(dump), "--json")
        assert first.returncode == OK, first.stderr
        assert json.loads(first.stdout)["imported"] == 6
        again = memgate(other, "import", "-", "--json", stdin=dump.read_text())
        assert json.loads(again.stdout)["unchanged"] == 6 and again.returncode == OK
        with GatewayClient(other.address, "master", api_key=KEY) as c:
            assert c.recall("Fact number 3", namespaces=[ns])[0].content.startswith("Fact number 3")
        broken = tmp_path / "broken.jsonl"
        broken.write_text(lines[0] + "\n" + '{"versions": "nope"}\n')
        bad = memgate(other, "import", str(broken))
        assert bad.returncode == BAD_INPUT and "broken.jsonl:2" in bad.stderr
        missing = memgate(other, "import", str(tmp_path / "nothing.jsonl"))
        assert missing.returncode == BAD_INPUT


def test_replay_a_past_conversation_forms_dated_memory_once(
    keyed: RunningGateway, tmp_path: Path
) -> None:
    ns = f"user/sam{fresh_tag(6)}"
    doc = {
        "namespace": ns,
        "sessions": [
            {
                "id": "s1",
                "turns": [
                    {
                        "role": "assistant",
                        "content": "how was your weekend?",
                        "at": "2018-11-05T18:29:00Z",
                    },
                    {
                        "role": "user",
                        "content": "I went to Boise yesterday for a frisbee tournament",
                        "at": "2018-11-05T18:30:00Z",
                        "speaker": "Sam",
                    },
                ],
            },
            {
                "id": "s2",
                "turns": [
                    {
                        "role": "user",
                        "content": "My sister is moving to Denver next month",
                        "at": "2018-12-01T09:00:00",
                    }
                ],
            },
        ],
    }
    path = tmp_path / "chat.json"
    path.write_text(json.dumps(doc))
    first = memgate(keyed, "replay", str(path), "--json", "--quiet")
    assert first.returncode == OK, first.stderr
    summary = json.loads(first.stdout)
    assert summary["sessions"] == 2 and summary["turns"] == 3 and summary["appended"] == 3
    assert summary["outcomes"]["observed"] == 2
    with GatewayClient(keyed.address, "master", api_key=KEY) as c:
        said = sorted(e.summary for e in c.timeline(ns, types=["observation"]))
    assert said[0] == "Sam went to Boise on 2018-11-04 for a frisbee tournament."
    assert said[1].endswith("sister is moving to Denver in January 2019.")
    # again (a retry after a failure half way): nothing new
    again = memgate(keyed, "replay", str(path), "--json", "--quiet")
    assert again.returncode == OK and json.loads(again.stdout)["appended"] == 0
    with GatewayClient(keyed.address, "master", api_key=KEY) as c:
        assert len(c.timeline(ns, types=["observation"])) == 2
    # bad input: a clear message naming the place, exit 2, nothing stored
    doc["sessions"][0]["turns"][1]["at"] = "yesterday"
    path.write_text(json.dumps(doc))
    bad = memgate(keyed, "replay", str(path))
    assert (
        bad.returncode == BAD_INPUT
        and "sessions[0].turns[1]" in bad.stderr
        and '"at"' in bad.stderr
    )


def test_piped_output_is_quiet_when_the_reader_stops(keyed: RunningGateway) -> None:
    """`memgate export … | head -1`: the closed pipe ends the command without a traceback or a
    BrokenPipe message, and a piped table is not wrapped at 80 columns."""
    ns = f"user/u-{fresh_tag(8)}"
    with GatewayClient(keyed.address, "master", api_key=KEY) as c:
        c.batch_write(
            [
                {"namespace": ns, "layer": "semantic", "content": f"The user owns cat number {n}"}
                for n in range(200)
            ],
            wait=True,
        )
    env = {**os.environ, "MEMGATE_API_KEY": KEY}
    env.pop("COLUMNS", None)
    cmd = f"{sys.executable} -m gateway.cli export {ns} --quiet --target {keyed.address} | head -1"
    piped = subprocess.run(cmd, shell=True, capture_output=True, text=True, env=env, timeout=120)
    assert piped.returncode == 0 and len(piped.stdout.splitlines()) == 1
    assert "BrokenPipe" not in piped.stderr and "Traceback" not in piped.stderr, piped.stderr
    table = subprocess.run(
        f"{sys.executable} -m gateway.cli proposals list --target {keyed.address} | cat",
        shell=True,
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    header = next(line for line in table.stdout.splitlines() if "proposer" in line)
    assert "conflicts with" in header  # one line: not folded into 80 columns


def test_namespaces_by_reader_and_export_all(tmp_path: Path) -> None:
    scout_key = "s-" + uuid.uuid4().hex
    keys = {"master": KEY, "helper": HELPER_KEY, "scout": scout_key}
    with running_gateway(gateway_settings(tmp_path / "gw", api_keys=keys)) as gw:
        with GatewayClient(gw.address, "master", api_key=KEY) as m:
            for ns in ("user/ann", "user/bob", "global", "task/t1"):
                m.write(ns, "semantic", f"A fact kept in {ns}", wait=True)
        for agent, key in (("helper", HELPER_KEY), ("scout", scout_key)):
            with GatewayClient(gw.address, agent, api_key=key) as a:
                a.write(f"agent/{agent}", "semantic", f"{agent}'s own note", wait=True)
        every = ["agent/helper", "agent/scout", "global", "task/t1", "user/ann", "user/bob"]
        listed = memgate(gw, "namespaces", "--json")
        assert listed.returncode == OK, listed.stderr
        assert json.loads(listed.stdout) == {"namespaces": every, "truncated": False}
        # a sub-agent sees task/*, global and its own, never another agent's nor the users
        mine = memgate(gw, "namespaces", "--json", "--agent", "helper", key=HELPER_KEY)
        assert json.loads(mine.stdout)["namespaces"] == ["agent/helper", "global", "task/t1"]
        users = memgate(gw, "namespaces", "--prefix", "user/", "--limit", "1", "--json")
        assert json.loads(users.stdout) == {"namespaces": ["user/ann"], "truncated": True}
        table = memgate(gw, "namespaces")
        assert "6 namespace(s)" in table.stdout and "user/bob" in table.stdout
        for bad in (("--limit", "10001"), ("--limit", "-1"), ("--prefix", "u" * 201)):
            refused = memgate(gw, "namespaces", *bad)
            assert refused.returncode == BAD_INPUT and "Traceback" not in refused.stderr, bad

        dump = tmp_path / "all.jsonl"
        out = memgate(gw, "export", "--all", "-o", str(dump), "--json")
        assert out.returncode == OK, out.stderr
        assert json.loads(out.stdout)["memories"] == 6
        assert json.loads(dump.read_text().splitlines()[0])["namespaces"] == every
        for wrong in (("export",), ("export", "--all", "global")):
            assert memgate(gw, *wrong).returncode == BAD_INPUT
        denied = memgate(gw, "export", "--all", "--agent", "helper", key=HELPER_KEY)
        assert denied.returncode == NOT_ALLOWED
    with running_gateway(gateway_settings(tmp_path / "other", api_keys={"master": KEY})) as other:
        assert json.loads(memgate(other, "import", str(dump), "--json").stdout)["imported"] == 6
        again = memgate(other, "namespaces", "--json")
        assert json.loads(again.stdout)["namespaces"] == every
