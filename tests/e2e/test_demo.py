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
    assert len([n for n in used if n.startswith("user/demo-")]) == 2
