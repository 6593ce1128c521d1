"""The recall engine's pure parts: the analyzer, time cues, dialogue context, the audit queue."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from gateway.core.apply import dialogue
from gateway.core.model.models import Layer, Memory
from gateway.core.recall import routing, timecues
from stores.text_analysis import document_terms, index_text, query_terms

NOW = datetime(2025, 3, 12, 15, 0, tzinfo=UTC)


def test_analyzer_stems_drops_stop_words_and_keeps_frequencies() -> None:
    assert query_terms("When did Elena complete the certificates?") == [
        "elena",
        "complet",
        "certif",
    ]
    assert query_terms("Running runs") == ["run"]
    assert document_terms("Pickle, pickle and PICKLE!") == ["pickl", "pickl", "pickl"]
    assert query_terms("Leo's rabbit") == ["leo", "rabbit"]  # possessive
    assert query_terms("Ｃａｆé") == query_terms("café")  # NFKC + case-folded
    assert query_terms("what is it") == []


def test_analyzer_cjk_characters_bigrams_and_words() -> None:
    assert document_terms("吃香菜") == ["吃", "香", "菜", "吃香", "香菜"]
    indexed = document_terms("陈静在瑞金医院心内科当护士")
    assert {"瑞金医院", "心内科", "护士", "瑞金"} <= set(indexed)  # words, and the bigrams in them
    assert query_terms("香菜") == ["香菜"]
    assert query_terms("饭") == ["饭"]
    # a query is cut into words: no bigram that straddles two of them ("吃什")
    assert query_terms("Zhao Lei吃什么") == ["zhao", "lei", "吃", "什么"]
    # every word of a question meets the fact's terms where the fact uses it
    asked = query_terms("陈静在哪家医院当护士？")
    assert {"陈静", "医院", "护士"} <= set(asked) and {"陈静", "医院", "护士"} <= set(indexed)


def test_index_text_is_context_then_content() -> None:
    m = Memory("m", "user/u", Layer.EPISODIC, "Use it every day.", context="Elena: the printer?")
    assert index_text(m) == "Elena: the printer?\nUse it every day."
    assert index_text(m.with_changes(context="")) == "Use it every day."


@pytest.mark.parametrize(
    ("query", "start", "end"),
    [
        (
            "What did I do in May 2023?",
            datetime(2023, 5, 1, tzinfo=UTC),
            datetime(2023, 6, 1, tzinfo=UTC),
        ),
        (
            "what happened last week",
            datetime(2025, 3, 3, tzinfo=UTC),
            datetime(2025, 3, 10, tzinfo=UTC),
        ),
        ("上个月我们聊了什么", datetime(2025, 2, 1, tzinfo=UTC), datetime(2025, 3, 1, tzinfo=UTC)),
        ("in 2023", datetime(2023, 1, 1, tzinfo=UTC), datetime(2024, 1, 1, tzinfo=UTC)),
        ("2024年12月去了哪里", datetime(2024, 12, 1, tzinfo=UTC), datetime(2025, 1, 1, tzinfo=UTC)),
    ],
)
def test_time_cues_name_a_period(query: str, start: datetime, end: datetime) -> None:
    cues = timecues.cues(query, NOW)
    assert (cues.start, cues.end) == (start, end)
    assert cues.period


def test_time_cues_when_and_latest() -> None:
    assert timecues.cues("When did Leo buy a tent?", NOW).asks_when
    assert not timecues.cues("When did Leo buy a tent?", NOW).period
    assert timecues.cues("Where does Elena live now?", NOW).asks_latest
    assert not timecues.cues("What is Leo's cat called?", NOW).asks_when
    assert timecues.dated("Bought it two weeks ago, still assembling it.")
    assert timecues.dated("We adopted a rabbit last weekend!")
    assert not timecues.dated("Are you happy with it?")


def _turn(content: str, **kw: object) -> Memory:
    base = Memory(
        "t", "user/u", Layer.EPISODIC, content, source_session="s1",
        event_time=datetime(2023, 5, 9, 22, 10, tzinfo=UTC),
    )  # fmt: skip
    return base.with_changes(**kw)


def test_dialogue_context_has_date_previous_turns_and_speaker() -> None:
    prev = _turn("Are you happy with the 3D printer?", metadata={"speaker": "Elena"})
    turn = _turn("Use it every day.", metadata={"speaker": "Leo"})
    assert dialogue.is_turn(turn) and not dialogue.is_turn(turn.with_changes(source_session=""))
    assert dialogue.context(turn, [prev]) == (
        "9 May 2023\nElena: Are you happy with the 3D printer?\nLeo:"
    )
    # the speaker already in the content is not repeated; no date when asked not to
    named = _turn("Leo: Use it every day.", metadata={"speaker": "Leo"})
    assert dialogue.context(named, [], with_date=False) == ""


def test_routing_never_hides_the_default_layers() -> None:
    for query in ("Did Leo like the documentary?", "how do I export", "let's continue"):
        assert set(routing.DEFAULT) <= set(routing.route(query))
