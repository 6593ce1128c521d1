"""Recency when undecided (``core/recall/newer_first.py``, ``core/truth/subjects.py``): two
statements about the same subject, near in meaning, rank newer first and the older one is
labelled "earlier, as of"; another person, another thing of theirs, two observations, a turn, or
a far meaning never compete; nothing is stored."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from gateway.core.model import provenance as pv
from gateway.core.model.models import Layer, Memory
from gateway.core.recall import scoring
from gateway.core.recall.newer_first import newer_first, owners
from gateway.core.truth.judge import UpdateJudge
from gateway.core.truth.same_person import person
from gateway.core.truth.subjects import USER, subject


@pytest.mark.parametrize(
    ("text", "who"),
    [
        ("Noah lives in Leeds.", "noah"),
        ("Noah's brother lives in Bristol.", "noah's brother"),
        ("Lukas's work laptop is a ThinkPad.", "lukas's work laptop"),
        ("Omar's team meeting was moved to Wednesday afternoons.", "omar's team meeting"),
        ("Correction: Dan's Lisbon flight leaves on the 16th", "dan's lisbon flight"),
        ("The user's sister lives in Rome", f"{USER}'s sister"),
        ("I'm on the day roster now", USER),
        ("Maya Lopez works as a barista", "maya lopez"),
        ("He moved to Paris", ""),
        ("The office is closed on Fridays", ""),  # a capital that starts a sentence, no name
        ("王芳买了辆电动车", "王芳"),
        ("小周的妹妹在武汉工作。", "小周的妹妹"),
        ("赵磊的自行车是黑色的。", "赵磊的自行车"),
        ("我上个月搬到杭州滨江了", USER),
        ("更正：小李的生日是三月八号", "小李的生日"),
        ("王军毕业后去了深圳工作。", "王军"),  # a surname and a given name, then the verb
    ],
)
def test_the_subject_is_read_from_the_structure(text: str, who: str) -> None:
    assert subject(text) == who


def test_a_user_namespace_names_its_user() -> None:
    assert owners(["user/maya-1f3", "global", "agent/x"]) == {"maya-1f3", "maya"}


def _fact(mid: str, text: str, month: int, layer: Layer = Layer.SEMANTIC, **meta: str) -> Memory:
    return Memory(mid, "user/maya", layer, text, event_time=datetime(2024, month, 1, tzinfo=UTC),
                  metadata=dict(meta))  # fmt: skip


def _vectors(table: dict[str, list[float]]):  # type: ignore[no-untyped-def]
    async def get(ids: list[str]) -> dict[str, np.ndarray]:
        return {
            i: np.asarray(table[i], np.float32) / np.linalg.norm(table[i])
            for i in ids
            if i in table
        }

    return get


async def test_the_newer_statement_ranks_first_and_the_older_is_labelled() -> None:
    old = _fact("a", "Maya works as a barista at Blue Bottle.", 1)
    new = _fact("b", "Maya works at the public library now.", 6)
    other = _fact("c", "Maya's brother works at a bank.", 7)
    hits = [scoring.Scored(m, s, 0, 0, 0) for m, s in ((old, 0.9), (other, 0.8), (new, 0.5))]
    vectors = _vectors({"a": [1, 0.2, 0], "b": [1, 0.4, 0], "c": [1, 0.3, 0]})
    out = await newer_first(hits, ["user/maya"], vectors)
    assert [h.memory.id for h in out] == ["b", "a", "c"]
    older = out[1]
    assert older.earlier and older.memory.metadata[pv.EARLIER] == "b"
    assert "· earlier, as of 2024-01-01]" in scoring.line_for(older.memory, "", older.earlier)
    assert pv.EARLIER not in old.metadata  # the stored memory is untouched


async def test_what_does_not_compete_keeps_its_order() -> None:
    far = [_fact("a", "Maya likes jazz.", 1), _fact("b", "Maya works at the library.", 6)]
    two_events = [
        _fact("c", "Maya went to Rome.", 1, Layer.EPISODIC, **{pv.OBSERVED_KIND: "event"}),
        _fact("d", "Maya went to Paris.", 6, Layer.EPISODIC, **{pv.OBSERVED_KIND: "event"}),
    ]
    for pair, table in (
        (far, {"a": [1, 0, 0], "b": [0, 1, 0]}),  # far in meaning
        (two_events, {"c": [1, 0.1, 0], "d": [1, 0.2, 0]}),  # events, each true when it happened
    ):
        hits = [scoring.Scored(m, 1 - i / 10, 0, 0, 0) for i, m in enumerate(pair)]
        out = await newer_first(list(hits), ["user/maya"], _vectors(table))
        assert [h.memory.id for h in out] == [pair[0].id, pair[1].id]
        assert not any(h.earlier for h in out)


async def test_an_observation_competes_with_the_fact_it_changes() -> None:
    fact = _fact("a", "The user works night shifts at the hospital.", 1)
    said = _fact(
        "b", "Maya is on the day roster at the hospital.", 5, Layer.EPISODIC,
        **{pv.OBSERVED_KIND: "fact"},
    )  # fmt: skip
    said = said.with_changes(type=pv.OBSERVATION_TYPE)
    hits = [scoring.Scored(fact, 0.9, 0, 0, 0), scoring.Scored(said, 0.4, 0, 0, 0)]
    out = await newer_first(hits, ["user/maya"], _vectors({"a": [1, 0.3], "b": [1, 0.5]}))
    assert [h.memory.id for h in out] == ["b", "a"] and out[1].earlier


async def test_a_question_that_names_what_only_the_older_says_keeps_the_order() -> None:
    """ "Fact number *3*", "Is Maya's laptop still the *ThinkPad*?": the question names a value
    only the older says, so it asks for that one; a question that names none gets the newer
    first."""
    cases = [
        ("Fact number 3", "Maya's fact number 3 is true", "Maya's fact number 4 is true", "ab"),
        ("Is Maya's laptop still the ThinkPad?", "Maya's laptop is a ThinkPad",
         "Maya's laptop is a MacBook now", "ab"),
        ("What laptop does Maya use?", "Maya's laptop is a ThinkPad",
         "Maya's laptop is a MacBook now", "ba"),
    ]  # fmt: skip
    for query, old_text, new_text, order in cases:
        old, new = _fact("a", old_text, 1), _fact("b", new_text, 6)
        hits = [scoring.Scored(old, 0.9, 0, 0, 0), scoring.Scored(new, 0.8, 0, 0, 0)]
        out = await newer_first(
            hits, ["user/maya"], _vectors({"a": [1, 0.1], "b": [1, 0.2]}), query=query
        )
        assert "".join(h.memory.id for h in out) == order, query


def _turn(mid: str, text: str, month: int) -> Memory:
    return Memory(mid, "user/maya", Layer.EPISODIC, f"Maya: {text}", type=pv.TURN_TYPE,
                  source_session="s1", event_time=datetime(2024, month, 1, tzinfo=UTC),
                  metadata={"speaker": "Maya", "role": "user"})  # fmt: skip


#: a judge that reads only the cosine of the pair: "an update" above 0.3
_COSINE_JUDGE = UpdateJudge("test", np.r_[np.zeros(6, np.float32), 40.0], -12.0, 0.5, 2)


async def _order(old: Memory, new: Memory, table: dict[str, list[float]], judge=None) -> str:  # type: ignore[no-untyped-def]
    hits = [scoring.Scored(old, 0.9, 0, 0, 0), scoring.Scored(new, 0.5, 0, 0, 0)]
    out = await newer_first(hits, ["user/maya"], _vectors(table), judge=judge)
    return "".join(h.memory.id for h in out)


async def test_a_turn_the_user_said_changes_a_fact_when_the_judge_says_so() -> None:
    fact = _fact("a", "Maya works as a barista at Blue Bottle.", 1)
    said = _turn("b", "my first week at the library was way calmer than pulling shots", 6)
    near = {"a": [1, 1.2], "b": [1, 0.9]}  # cosine 0.99 — but a turn is never ruled by it
    assert await _order(fact, said, near) == "ab"
    assert await _order(fact, said, near, _COSINE_JUDGE) == "ba"
    far = {"a": [1, 0], "b": [0, 1]}
    assert await _order(fact, said, far, _COSINE_JUDGE) == "ab"


async def test_a_turn_that_asks_says_little_or_speaks_of_someone_else_never_competes() -> None:
    fact = _fact("a", "Maya takes 50 mcg of levothyroxine every morning.", 1)
    near = {"a": [1, 0.1], "b": [1, 0.2]}
    for text in (
        "got any tips for taking pills on an empty stomach?",
        "ugh mondays",
        "my mum's on levothyroxine too, 100 mcg a day",
        "我妈也在吃优甲乐，她是一天100微克",
    ):
        assert await _order(fact, _turn("b", text, 6), near, _COSINE_JUDGE) == "ab", text


async def test_which_subjects_meet() -> None:
    near = {"a": [1, 0.1], "b": [1, 0.2]}
    meet = [
        ("Sven's dentist is Dr. Holm.", "Sven sees Dr. Berg near his new flat for his teeth."),
        ("Dan's flight leaves on the 14th.", "Dan's Lisbon flight leaves on the 16th."),
        ("Marcus takes 10 mg of lisinopril.", "At Marcus's review the GP raised it to 20 mg."),
        ("孙杰在顺丰做快递员。", "孙杰考了网约车资格证，在滴滴上开网约车。"),
    ]
    apart = [
        ("Lukas's work laptop is a ThinkPad.", "Lukas's home laptop is a MacBook."),
        ("Leo's birthday is 2 November.", "Leo's manager's birthday is 3 November."),
        ("Noah lives in Leeds.", "Noah's brother lives in Bristol."),
        ("At the review the dose went up.", "The GP raised it to 20 mg."),  # no one named
    ]
    for pairs, want in ((meet, "ba"), (apart, "ab")):
        for old, new in pairs:
            got = await _order(_fact("a", old, 1), _fact("b", new, 6), near)
            assert got == want, (old, new)


def test_a_relative_is_someone_else_a_thing_is_theirs() -> None:
    assert person("sven's dentist") == "sven"
    assert person("noah's brother") == "noah's brother"
    assert person("leo's manager's birthday") == "leo's manager's birthday"
    assert person("老陈的手机") == "老陈" and person("王涛的姐姐") == "王涛的姐姐"


async def test_two_notes_written_together_never_compete() -> None:
    """A batch of notes about Maya, seconds apart: neither is newer than the other."""
    old = _fact("a", "Maya works as a barista at Blue Bottle.", 1)
    new = old.with_changes(id="b", content="Maya works at the public library.")
    new = new.with_changes(event_time=old.when + timedelta(seconds=5))
    near = {"a": [1, 0.1], "b": [1, 0.2]}
    assert await _order(old, new, near, _COSINE_JUDGE) == "ab"
    later = new.with_changes(event_time=old.when + timedelta(minutes=5))
    assert await _order(old, later, near, _COSINE_JUDGE) == "ba"


async def test_a_sure_judge_overrules_the_rule() -> None:
    """Same subject, near in meaning — the rule would order them — but a head sure that a road
    bike does not replace a car keeps the order; a head with no veto lets the rule decide."""
    car = _fact("a", "Sun Yan drives a red MINI to work.", 1)
    bike = _fact("b", "Sun Yan rides a Giant road bike out of town at weekends.", 6)
    near = {"a": [1, 0.1], "b": [1, 0.2]}
    never = np.zeros(7, np.float32)
    sure_not = UpdateJudge("test", never, -30.0, 0.5, 2, veto=0.35)
    assert await _order(car, bike, near, sure_not) == "ab"
    no_veto = UpdateJudge("test", never, -30.0, 0.5, 2)
    assert await _order(car, bike, near, no_veto) == "ba"
