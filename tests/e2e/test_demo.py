"""The agents demo with the real MiniLM embedder: the seeds' cross-session story holds."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from agents_demo.story import main, run
from tests.e2e.conftest import gateway_settings, running_gateway


def test_preference_survives_window_and_session(
    tmp_path: Path, backend: dict[str, str], ns: str
) -> None:
    settings = gateway_settings(tmp_path, embedder="minilm", dialogue_max_turns=20, **backend)
    lines: list[str] = []
    with running_gateway(settings) as gw:
        outcome = run(gw.address, say=lines.append, user=ns)
    assert outcome.rolled_out_of_window, lines  # the window no longer holds the turn …
    assert outcome.preference_recalled, lines  # … but recall in a new session brings it back
    assert "cilantro" in outcome.recommendation and "leave out" in outcome.recommendation
    # formed without propose_fact: said in s1 and s2, a semantic fact with the user's words
    assert outcome.formed == ["The user is allergic to peanuts"], lines
    assert outcome.formed_evidence == [
        "Also, I'm allergic to peanuts.",
        "Anything without peanuts is fine, I'm allergic to peanuts.",
    ]
    assert outcome.allergy_recalled, lines  # a new session recalls it
    assert not outcome.small_talk_promoted, lines  # French, said once while chatting, is not
    # plain talk (no "remember") formed a dated observation: "yesterday" is the day before
    yesterday = f"{datetime.now(UTC) - timedelta(days=1):%Y-%m-%d}"
    assert any(f"went to the farmers market on {yesterday}" in o for o in outcome.observed), lines
    # the team (issue 47): every proposal of the run decided — approved, rejected with a reason,
    # approved over the fact it contradicts —, a private namespace refused to another sub-agent,
    # a Chinese turn recalled later, and everything the run wrote erased
    team = outcome.team
    assert team is not None
    assert team.pending_left == 0 and team.rejected == ["The office is closed on Fridays"], lines
    assert "Alice orders dinner around 19:00" in team.approved, lines
    assert (
        team.superseded == ["Alice lives in Berlin"]
        and team.current_city == "Alice lives in Munich"
    )
    assert team.refused_reads == ["agent/researcher"] and team.chinese_recalled, lines
    assert ns in team.erased and any(e.startswith("global:") for e in team.erased), lines
    with running_gateway(settings) as gw, gw.client("master") as c:
        assert c.recall("Alice", [ns]).hits == []  # cleaned up
        assert not [p for p in c.proposals("pending", 500) if p.item.namespace == ns]
    # one preference, once: the master's note and the fact formed from the same words merged
    assert sum("cilantro" in line and "recalled" in line for line in lines[-40:]) <= 2, lines


def test_a_second_run_against_the_same_gateway_tells_the_same_story(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Each run has a namespace, sessions and a task of its own (never the README tour's
    user/alice), so running the demo twice against one gateway passes twice."""
    settings = gateway_settings(tmp_path, embedder="minilm", dialogue_max_turns=20)
    with running_gateway(settings) as gw:
        assert main(["--target", gw.address]) == 0
        assert main(["--target", gw.address]) == 0
        with gw.client("master") as c:
            used = c.namespaces("user/").namespaces
    out = capsys.readouterr().out
    assert out.count("demo: OK") == 2 and "user/alice" not in used
    assert [n for n in used if n.startswith("user/demo-")] == []  # each run cleans up


def test_the_demo_runs_against_a_keyed_tls_gateway(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The documented set-up (TLS and an API key per agent): the demo takes the same flags."""
    from tests.e2e.certs import Authority

    ca = Authority("demo CA")
    (tmp_path / "ca.crt").write_bytes(ca.pem)
    cert, key = ca.issue("memgate-server", server=True, sans=("127.0.0.1",)).write(tmp_path, "s")
    keys = {"master": "k-master-1", "researcher": "k-res-2", "planner": "k-plan-3"}
    (tmp_path / "keys").write_text("\n".join(f"{a}={k}" for a, k in keys.items()) + "\n")
    settings = gateway_settings(
        tmp_path / "gw", embedder="minilm", dialogue_max_turns=20, tls_cert=cert, tls_key=key,
        api_keys=keys,
    )  # fmt: skip
    with running_gateway(settings) as gw:
        args = ["--target", gw.address, "--api-keys", str(tmp_path / "keys")]
        assert main([*args, "--tls-ca", str(tmp_path / "ca.crt")]) == 0
        # without the keys the gateway refuses the demo's agents, and it says what to pass
        assert main(["--target", gw.address, "--tls-ca", str(tmp_path / "ca.crt")]) == 2
    assert "a keyed gateway needs --api-keys" in capsys.readouterr().err
