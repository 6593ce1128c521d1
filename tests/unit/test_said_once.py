"""One answer per thing said (``core/recall/said_once.py``): a kept turn, the observation formed
from it and a fact confirmed from it fold into one hit — the fact over the observation, the
observation over the turn — which takes the best rank among them; an observation shown for its
turn quotes the words in the memory block; unrelated hits are untouched."""

from __future__ import annotations

from gateway.core.model import candidates as cd
from gateway.core.model import provenance as pv
from gateway.core.model.models import Layer, Memory
from gateway.core.recall import scoring
from gateway.core.recall.said_once import said_once


def _turn(id_: str, turn: str, content: str) -> Memory:
    return Memory(
        id_, "user/sam", Layer.EPISODIC, content, type=pv.TURN_TYPE,
        source_session="s1", metadata={pv.SAID_TURN: turn, "role": "user"},
    )  # fmt: skip


def _observation(id_: str, turn: str, content: str, quote: str = "") -> Memory:
    return Memory(
        id_, "user/sam", Layer.EPISODIC, content, type=pv.OBSERVATION_TYPE,
        source_session="s1", metadata={pv.OBSERVED_TURN: turn}, evidence=[quote] if quote else [],
    )  # fmt: skip


def _fact(id_: str, turns: str, content: str) -> Memory:
    return Memory(id_, "user/sam", Layer.SEMANTIC, content, metadata={cd.TURNS: turns})


def _hits(*pairs: tuple[Memory, float]) -> list[scoring.Scored]:
    return [scoring.Scored(m, s, 0.5, 0.0, 0.0) for m, s in pairs]


def test_an_observation_stands_for_its_turn_at_the_turns_rank_and_quotes_it() -> None:
    turn = _turn("k1", "t1", "Sam: Yeah! I went to Boise yesterday for a tournament")
    seen = _observation("o1", "t1", "Sam went to Boise on 2018-11-04.", "I went to Boise yesterday")
    other = _turn("k2", "t2", "Alex: the match was close")
    out = said_once(_hits((turn, 0.9), (other, 0.7), (seen, 0.5)))
    assert [h.memory.id for h in out] == ["o1", "k2"]
    assert out[0].score == 0.9 and out[0].quote == "I went to Boise yesterday"
    block, _, n = scoring.memory_block(out, 500)
    assert (
        n == 2 and 'Sam went to Boise on 2018-11-04. (said: "I went to Boise yesterday")' in block
    )
    assert "yesterday for a tournament" not in block


def test_a_fact_stands_for_its_observation_and_turns() -> None:
    fact = _fact("f1", "t1,t3", "Sam is vegan")
    out = said_once(
        _hits(
            (_turn("k3", "t3", "Sam: no meat or dairy for me, ever"), 0.95),
            (_observation("o1", "t1", "Sam is vegan."), 0.8),
            (_turn("k9", "t9", "Sam: see you soon"), 0.6),
            (fact, 0.4),
        )
    )
    assert [h.memory.id for h in out] == ["f1", "k9"]
    assert out[0].score == 0.95 and not out[0].quote


def test_two_observations_of_one_turn_answer_once_and_hits_without_provenance_stay() -> None:
    plain = Memory("m1", "user/sam", Layer.EPISODIC, "Sam: written by an agent")
    out = said_once(
        _hits(
            (_observation("o2", "t1", "Sam took an astronomy class."), 0.7),
            (plain, 0.65),
            (_observation("o1", "t1", "Sam's sister moved to Denver."), 0.6),
        )
    )
    assert [h.memory.id for h in out] == ["o2", "m1"]
    # nothing to fold: the list comes back as it was
    hits = _hits((plain, 0.5), (_turn("k1", "t1", "Sam: hi there"), 0.4))
    assert said_once(hits) == hits


def test_a_long_quote_is_cut() -> None:
    words = "I went to Boise " * 40
    seen = _observation("o1", "t1", "Sam went to Boise.", words)
    out = said_once(_hits((seen, 0.5), (_turn("k1", "t1", "Sam: " + words), 0.6)))
    assert out[0].quote.endswith("…") and len(out[0].quote) == 300


def test_an_observation_of_something_said_in_passing_does_not_stand_for_its_turn() -> None:
    """ "Ryan has a mum" quotes two words of a turn about his car: both stay hits."""
    turn = _turn(
        "k1", "t1",
        "Ryan: the Tesla's range in the cold is way worse than advertised, had to charge twice "
        "on the way to my mum's",
    )  # fmt: skip
    kin = _observation("o1", "t1", "Ryan has a mum.", "my mum's")
    out = said_once(_hits((turn, 0.6), (kin, 0.5)))
    assert [h.memory.id for h in out] == ["k1", "o1"]
    whole = _observation("o2", "t1", "Ryan's Tesla had to charge twice.", turn.content[6:])
    assert [h.memory.id for h in said_once(_hits((turn, 0.6), (whole, 0.5)))] == ["o2"]
