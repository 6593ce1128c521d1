"""Dialogue turns are found through their context (the turn before, from the same batch or from
the store), returned as themselves, with their event time; the setting turns it off."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from tests.e2e.conftest import gateway_settings, running_gateway
from tests.tags import fresh_tag

T0 = datetime(2023, 5, 9, 22, 10, tzinfo=UTC)


def _turns(ns: str) -> list[dict[str, object]]:
    lines = [
        ("Elena", "What's that big box in your photo?"),
        ("Leo", "Ha, that's a 3D printer! Bought it two weeks ago."),
        ("Elena", "Are you happy with the printer?"),
        ("Leo", "Use it every day. Best money I've spent all year."),
        ("Elena", "Lovely weather here today."),
    ]
    return [
        dict(
            namespace=ns,
            layer="episodic",
            content=text,
            session_id="s1",
            event_time=T0 + timedelta(seconds=30 * i),
            metadata={"speaker": who},
        )
        for i, (who, text) in enumerate(lines)
    ]


ANSWER = "Use it every day. Best money I've spent all year."


def _rank(contents: list[str]) -> int:
    return contents.index(ANSWER) + 1 if ANSWER in contents else 99


def test_turn_found_through_the_previous_turn(tmp_path: Path, backend: dict[str, str]) -> None:
    with running_gateway(gateway_settings(tmp_path, **backend)) as gw, gw.client() as client:
        ns = f"user/dlg-{fresh_tag(8)}"
        items = _turns(ns)
        client.batch_write(items[:3], wait=True)
        client.batch_write(items[3:], wait=True)  # its previous turn comes from the store
        recall = client.recall("Is Leo happy with the printer?", namespaces=[ns], top_k=3)
        assert _rank([h.content for h in recall.hits]) <= 3
        hit = next(h for h in recall.hits if h.content.startswith("Use it every day"))
        assert hit.event_time == T0 + timedelta(seconds=90)
        assert "2023-05-09" in recall.memory_block


def test_context_can_be_turned_off(tmp_path: Path) -> None:
    ranks = []
    for turns in (1, 0):
        settings = gateway_settings(tmp_path / str(turns), context_turns=turns)
        with running_gateway(settings) as gw, gw.client() as client:
            ns = f"user/dlg-{fresh_tag(8)}"
            client.batch_write(_turns(ns), wait=True)
            recall = client.recall("Is Leo happy with the printer?", namespaces=[ns], top_k=5)
            ranks.append(_rank([h.content for h in recall.hits]))
    with_context, alone = ranks
    assert with_context <= 3
    assert alone > with_context


def test_turn_found_through_the_turn_after_it(tmp_path: Path) -> None:
    """The question turn is found by the words of its answer, the next turn, written later in
    its own batch (the stored turn is re-indexed); off with ``context_next=False``."""
    question = "What's that big box in your photo?"
    ranks = []
    for on in (True, False):
        settings = gateway_settings(tmp_path / str(on), context_next=on)
        with running_gateway(settings) as gw, gw.client() as client:
            ns = f"user/dlg-{fresh_tag(8)}"
            for item in _turns(ns):
                client.batch_write([item], wait=True)
            recall = client.recall("the 3D printer he bought", namespaces=[ns], top_k=5)
            contents = [h.content for h in recall.hits]
            assert len(contents) == 5
            ranks.append(contents.index(question) + 1)
    with_next, without = ranks
    assert with_next <= 3
    assert without > with_next
