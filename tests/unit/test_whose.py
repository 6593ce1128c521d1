"""Whose is it (``core/recall/whose.py``): a statement about someone of the person asked about
(their brother, husband, son) ranks below; a thing of theirs, or a question that names that
someone, keeps its place; turns are left alone."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from gateway.core.model.models import Layer, Memory
from gateway.core.recall.scoring import Scored
from gateway.core.recall.whose import OTHERS_FACTOR, others_below, someone_elses


def _fact(text: str, layer: Layer = Layer.SEMANTIC, mid: str = "m") -> Memory:
    return Memory(mid, "user/a", layer, text, event_time=datetime(2024, 1, 1, tzinfo=UTC))


@pytest.mark.parametrize(
    ("query", "text", "demoted"),
    [
        ("Where does Noah live?", "Noah's brother lives in Bristol.", True),
        ("What is Grace's job?", "Grace's husband Tom works as a pilot.", True),
        ("陈静对什么过敏？", "陈静的儿子对花生过敏。", True),
        ("小周在哪里工作？", "小周的妹妹在武汉工作。", True),
        ("Where does Noah's brother live?", "Noah's brother lives in Bristol.", False),
        ("陈静的儿子对什么过敏？", "陈静的儿子对花生过敏。", False),
        ("Where does Maya work?", "Maya's new job is at Google.", False),  # a thing of hers
        ("What laptop does Lukas use?", "Lukas's work laptop is a ThinkPad.", False),
        ("Where does Noah live?", "Noah lives in Leeds.", False),
        ("What does Tom do?", "Grace's husband Tom works as a pilot.", False),  # Grace not asked
        ("Where does Leo's older sister live?", "Leo's older sister lives in Rome.", False),
    ],
)
def test_someone_elses(query: str, text: str, demoted: bool) -> None:
    assert someone_elses(query, _fact(text)) is demoted


def test_a_turn_is_left_alone() -> None:
    turn = _fact("Noah's brother lives in Bristol.", Layer.EPISODIC)
    assert not someone_elses("Where does Noah live?", turn)


def test_the_persons_own_statement_comes_first() -> None:
    brother = Scored(_fact("Noah's brother lives in Bristol.", mid="b"), 0.9, 0.9, 0.0, 0.0)
    own = Scored(_fact("Noah lives in Leeds.", mid="n"), 0.8, 0.8, 0.0, 0.0)
    ranked = others_below([brother, own], "Where does Noah live?")
    assert [h.memory.id for h in ranked] == ["n", "b"]
    assert ranked[1].score == pytest.approx(0.9 * OTHERS_FACTOR)
    # asked about the brother: nothing moves
    brother = Scored(_fact("Noah's brother lives in Bristol.", mid="b"), 0.9, 0.9, 0.0, 0.0)
    own = Scored(_fact("Noah lives in Leeds.", mid="n"), 0.8, 0.8, 0.0, 0.0)
    same = others_below([brother, own], "Where does Noah's brother live?")
    assert [(h.memory.id, h.score) for h in same] == [("b", 0.9), ("n", 0.8)]
