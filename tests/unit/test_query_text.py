"""How a recall query is read for the dense side, and how a turn is embedded: names go through
metadata and BM25, not through the vector."""

from __future__ import annotations

from gateway.core.apply import dialogue
from gateway.core.model.models import Layer
from gateway.core.recall import query_text
from gateway.core.recall.fusion import FusionWeights


def test_dense_text_masks_names_but_not_the_first_word() -> None:
    assert query_text.dense_text("What job did Elena's sister get?") == (
        "What job did their sister get?"
    )
    assert query_text.dense_text("Is Leo an animal person?") == "Is they an animal person?"
    assert query_text.dense_text("How long has Lucía been kayaking?") == (
        "How long has they been kayaking?"
    )
    assert query_text.dense_text("Zhao Lei吃东西有什么限制？") == "Zhao Lei吃东西有什么限制？"
    # places and titles after a preposition stay
    assert query_text.dense_text("When did Tomás go to Vienna?") == "When did they go to Vienna?"
    assert query_text.dense_text("How does the user like answers?") == (
        "How does the user like answers?"
    )


def test_dense_text_masks_chinese_names() -> None:
    assert query_text.dense_text("陈静的另一半叫什么？") == "他的另一半叫什么？"
    assert query_text.dense_text("梁家豪以前是做什么工作的？") == "他以前是做什么工作的？"
    assert query_text.dense_text("想联系王芳，用什么方式最好？") == "想联系他，用什么方式最好？"
    # a two-character name before a word of its own keeps that word
    assert query_text.dense_text("何森住在伦敦哪一带？") == "他住在伦敦哪一带？"
    assert query_text.dense_text("陈静存钱是打算干什么用？") == "他存钱是打算干什么用？"
    assert query_text.dense_text("陈静和王芳是同事吗") == "他和他是同事吗"
    # a surname character inside a common word is not a name
    assert query_text.dense_text("王芳周末去哪里？") == "他周末去哪里？"
    for text in ("我每周去一次", "今天很高兴", "马上到", "白天在哪", "用户不吃什么？"):
        assert query_text.dense_text(text) == text


def test_names_matches_whole_words_only() -> None:
    assert query_text.names("What does Leo's cat eat?", "Leo")
    assert not query_text.names("What does Leona eat?", "Leo")
    assert not query_text.names("What does Leo eat?", "")


def test_names_finds_a_name_inside_a_chinese_sentence() -> None:
    # CJK has no word boundaries: a Chinese name is found inside the sentence
    assert query_text.names("陈静的家在上海哪一片？", "陈静")
    assert query_text.names("你知道陈静是干哪一行的吗", "陈静")
    assert not query_text.names("陈晨的家在上海哪一片？", "陈静")
    # a name in Latin letters beside Chinese characters (a mixed question)
    assert query_text.names("Alice在哪里工作？", "Alice")
    assert query_text.names("你认识Leo吗", "Leo")
    assert query_text.names("Chen Jing住在哪里", "Chen Jing")
    # ... and still as a whole word of its own script
    assert not query_text.names("Leona在哪里工作？", "Leo")
    assert not query_text.names("你认识Leo2吗", "Leo")


def test_a_turn_is_embedded_without_its_speaker_name() -> None:
    meta = {"speaker": "Leo"}
    assert dialogue.said(Layer.EPISODIC, "s1", "Leo: I got a cat", meta) == "I got a cat"
    # not a dialogue turn, or a speaker that is not the one named: unchanged
    assert dialogue.said(Layer.SEMANTIC, "s1", "Leo: I got a cat", meta) == "Leo: I got a cat"
    assert dialogue.said(Layer.EPISODIC, "", "Leo: I got a cat", meta) == "Leo: I got a cat"
    assert dialogue.said(Layer.EPISODIC, "s1", "Ana: hi", meta) == "Ana: hi"
    assert dialogue.said(Layer.EPISODIC, "s1", "Leo:", meta) == "Leo:"


def test_a_query_in_cjk_weighs_lexical_more() -> None:
    f = FusionWeights()
    assert query_text.mostly_cjk("用户不吃什么？")
    assert not query_text.mostly_cjk("What does the user not eat? 香菜")
    assert f.for_query("What does the user not eat?") is f
    cjk = f.for_query("用户不吃什么？")
    assert (cjk.dense, cjk.lexical) == (f.cjk_dense, f.cjk_lexical)
    assert cjk.lexical > f.lexical


def test_a_query_in_cjk_ranks_by_the_cosine_under_a_multilingual_embedder() -> None:
    f = FusionWeights(multilingual=True)
    assert f.for_query("What does the user not eat?") is f
    cjk = f.for_query("用户不吃什么？")
    # a chat turn that only shares words with the question no longer outranks the one that
    # means the answer
    answer = cjk.relevance(dense=0.62, keyword=0.0)
    shares_words = cjk.relevance(dense=0.45, keyword=1.0)
    assert answer > shares_words
    assert f.relevance(dense=0.62, keyword=0.0) < f.relevance(dense=0.45, keyword=1.0)
