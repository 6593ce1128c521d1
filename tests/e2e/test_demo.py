"""The agents demo with the real MiniLM embedder: the seeds' cross-session story holds."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from agents_demo.story import run
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
