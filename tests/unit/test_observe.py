"""Observations from plain talk (gateway/extractors/observe.py, timeref.py): third person with
the speaker's name, relative time resolved against the turn's time, chit-chat forms nothing."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from gateway.core.model.models import Turn
from gateway.extractors.observe import observe, speaker_for, third_person
from gateway.extractors.timeref import resolve

MONDAY = datetime(2018, 11, 5, 18, 30, tzinfo=UTC)


def _turn(text: str, at: datetime = MONDAY, speaker: str = "Sam") -> Turn:
    return Turn("t1", "user", text, at=at, metadata={"speaker": speaker} if speaker else {})


@pytest.mark.parametrize(
    ("text", "label"),
    [
        ("I went to Boise yesterday", "2018-11-04"),
        ("I have a class tomorrow", "2018-11-06"),
        ("we slept in last night", "2018-11-04"),
        ("I am moving next month", "2018-12"),
        ("I graduated last year", "2017"),
        ("I saw it two weeks ago", "2018-W43"),
        ("I went to India about a month ago", "2018-10"),
        ("I was in Montana over the weekend", "2018-W44"),
        ("I will see her on Friday", "2018-11-09"),
        ("I saw her on Friday", "2018-11-02"),
        ("I graduate in December", "2018-12"),
        ("I moved here in March", "2018-03"),
        ("my last day is May 30th", "2019-05-30"),
        ("I'm leaving in a couple of weeks", "2018-W47"),
        ("I was born in 1999", "1999"),
    ],
)
def test_relative_time_resolves_against_the_turn(text: str, label: str) -> None:
    when = resolve(text, MONDAY)
    assert when is not None and when.label == label


def test_no_time_said_resolves_to_nothing() -> None:
    assert resolve("I love hiking with my dog", MONDAY) is None


def test_third_person_with_agreement() -> None:
    assert third_person("I really love my dog", "Sam") == "Sam really loves Sam's dog"
    assert third_person("I'm a junior and I study nursing", "Sam") == (
        "Sam is a junior and Sam studies nursing"
    )
    assert third_person("I don't like coffee", "Sam") == "Sam does not like coffee"
    assert third_person("I went home", "Sam") == "Sam went home"
    # a past tense is never given an -s, a present one that ends like a past one is, and a
    # chat adverb is not the verb
    assert third_person("I said it twice", "Sam") == "Sam said it twice"
    assert third_person("I need more sleep", "Sam") == "Sam needs more sleep"
    assert third_person("I agreed", "Sam") == "Sam agreed"
    assert third_person("I def want to go", "Sam") == "Sam def wants to go"
    assert third_person("I sure miss home", "Sam") == "Sam sure misses home"


def test_statements_become_observations_with_time_and_evidence() -> None:
    [o] = observe([_turn("Yeah! I went to Boise yesterday for an Ultimate Frisbee tournament.")])
    assert o.text == "Sam went to Boise on 2018-11-04 for an Ultimate Frisbee tournament."
    assert o.type == "event" and not o.stable and o.when == "2018-11-04"
    assert o.event_time == datetime(2018, 11, 4, tzinfo=UTC)
    assert o.turn_ids == ("t1",) and "Boise" in o.quote and "Boise" in o.entities
    [fact] = observe([_turn("My brother lives in Texas")])
    assert fact.text == "Sam's brother lives in Texas." and fact.type == "fact" and fact.stable
    [want] = observe([_turn("I'd love to go to Greece.")])
    assert want.type == "preference"


@pytest.mark.parametrize(
    "text",
    [
        "Hello! How are you doing today?",
        "haha that's so cool",
        "Thanks for talking with me, I gotta go!",
        "Do you like sushi?",
        "If I could relive a day I would go back to high school",
        "I agree",
        "I'm good, thanks",
        "I love that!",
        "I know right",
    ],
)
def test_chit_chat_forms_nothing(text: str) -> None:
    assert observe([_turn(text)]) == []


def test_only_the_mined_role_and_the_speakers_name() -> None:
    turns = [
        Turn("a", "assistant", "I live in Paris", at=MONDAY),
        _turn("I live in Provo", speaker=""),
    ]
    [o] = observe(turns, namespace="user/alice")
    assert o.text == "Alice lives in Provo." and o.speaker == "Alice"
    assert speaker_for(_turn("x", speaker=""), "user/u-123") == "The user"
    assert speaker_for(_turn("x"), "user/alice") == "Sam"  # the turn's own speaker wins


def _chat(*lines: tuple[str, str]) -> list[Turn]:
    return [
        Turn(
            f"t{n}",
            role,
            text,
            at=MONDAY,
            metadata={"speaker": "Sam" if role == "user" else "Alex"},
        )
        for n, (role, text) in enumerate(lines)
    ]


def test_a_short_answer_reads_the_question_before_it() -> None:
    turns = _chat(
        ("assistant", "cool! what's your major?"),
        ("user", "Biology"),
        ("assistant", "nice. Where are you from?"),
        ("user", "Oh, Boise haha"),
        ("assistant", "what's your favorite movie?"),
        ("user", "I don't know, do you have one?"),
    )
    assert [(o.text, o.turn_ids, o.type) for o in observe(turns)] == [
        ("Sam's major is Biology.", ("t1",), "fact"),
        ("Sam is from Boise.", ("t3",), "fact"),
    ]


def test_me_too_takes_the_other_speakers_statement() -> None:
    turns = _chat(
        ("assistant", "I love peppermint ice cream"), ("user", "Me too!! Especially at Christmas")
    )
    [o] = observe(turns)
    assert o.text == "Sam loves peppermint ice cream." and o.quote.startswith("Me too")


def test_he_and_she_point_back_to_my_people_in_the_turn() -> None:
    [uncle, works] = observe(
        _chat(("user", "My uncle moved to Tokyo after college. He works there now"))
    )
    assert uncle.text == "Sam's uncle moved to Tokyo after college."
    assert works.text == "Sam's uncle works there now."
    # no one named in this turn: "he" stays unresolved and forms nothing
    assert observe(_chat(("user", "He works in Tokyo and travels a lot"))) == []


def test_a_view_of_the_world_or_hearsay_is_no_observation() -> None:
    assert observe(_chat(("user", "I think robots will get rights someday"))) == []
    assert observe(_chat(("user", "I've heard great danes are good apartment dogs"))) == []
    [o] = observe(_chat(("user", "I think I'm going to head over to Cougar Tech")))
    assert o.text == "Sam is going to head over to Cougar Tech." and o.type == "plan"


def test_a_yes_or_no_says_the_question_as_the_speakers_own_statement() -> None:
    turns = _chat(
        ("assistant", "Cool! He liked it a lot, have you served a mission?"),
        ("user", "I haven't. What about you?"),
        ("assistant", "Is bio your major?"),
        ("user", "Yup"),
        ("assistant", "I take it you've seen Avengers?"),
        ("user", "yep!"),
        ("assistant", "Did you take the AI or Machine Learning classes?"),
        ("user", "No I haven't!"),
        ("assistant", "Did you do anything fun?"),  # "yes" says nothing of "anything"
        ("user", "Yeah!"),
        ("assistant", "Is it a windows?"),  # "it" is not named here
        ("user", "yep haha"),
    )
    assert [(o.text, o.turn_ids) for o in observe(turns)] == [
        ("Sam has not served a mission.", ("t1",)),
        ("Sam's major is bio.", ("t3",)),
        ("Sam has seen Avengers.", ("t5",)),
        ("Sam didn't take the AI or Machine Learning classes.", ("t7",)),
    ]


def test_a_short_answer_fills_the_gap_of_the_question() -> None:
    turns = _chat(
        ("assistant", "Nice. What instrument do you play?"),
        ("user", "clarinet mostly but I tried out on the french horn"),
        ("assistant", "when do you find out if you got into the band?"),
        ("user", "Sometime after May 15th I think"),
        ("assistant", "What major are you studying?"),
        ("user", "haha hard to say\nnext semester\nEditing and Publishing major"),
        ("assistant", "Where are you rooming?"),
        ("user", "Sorry for the delay lol. I'm in heritage"),
    )
    got = [o.text for o in observe(turns)]
    assert "Sam plays clarinet mostly." in got
    assert "Sam tried out on the french horn." in got
    assert "Sam will find out if Sam got into the band sometime after 2019-05-15." in got
    assert "Sam is studying Editing and Publishing major." in got
    assert "Sam is rooming in heritage." in got and "Sam is in heritage." not in got


def test_times_said_first_and_subjects_left_out() -> None:
    got = [
        o.text
        for o in observe(
            _chat(
                ("user", "Yesterday I went to the farmers market."),
                ("user", "before my mission i had never even seen the ocean"),
                ("user", "So once I graduate, I'll be doing the mowing full time."),
                ("user", "I went to Boise for a tournament. And slept in on Sunday."),
                ("user", "Just reading my astronomy textbook"),
                ("user", "the day I was voted homecoming queen"),
                ("user", "Just kidding"),
            )
        )
    ]
    assert got == [
        "Sam went to the farmers market on 2018-11-04.",
        "Sam had never even seen the ocean before Sam's mission.",
        "Sam will be doing the mowing full time once Sam graduates.",
        "Sam went to Boise for a tournament.",
        "Sam slept in on 2018-11-04.",
        "Sam is just reading Sam's astronomy textbook.",
        "Sam was voted homecoming queen.",
    ]


def test_people_and_things_of_the_speakers_life() -> None:
    got = [
        o.text
        for o in observe(
            _chat(
                ("user", "Reading, and traveling with my wife probably"),
                ("user", "my bf just started texting me"),
                ("user", "My brother served in Mexico"),
                ("assistant", "Cool, where does he live now?"),  # "he": the other's now
                ("user", "He lives in Provo"),
                ("user", "My uncle moved to Tokyo"),
                ("assistant", "Well that's a cool place to live."),
                ("user", "But he works in Tokyo and travels a lot"),
                ("user", "We won 3 of the 4 games. Java is cool though. The plot was good."),
            )
        )
    ]
    assert got == [
        "Sam has a wife.",
        "Sam's bf just started texting Sam.",
        "Sam has a boyfriend.",  # a partner is said on its own
        "Sam's brother served in Mexico.",  # "Sam has a brother" is in it already
        "Sam's uncle moved to Tokyo.",
        "Sam's uncle works in Tokyo and travels a lot.",
        "Sam and others won 3 of the 4 games.",
        "Sam thinks Java is cool.",
    ]


def test_me_too_takes_the_last_statement_only() -> None:
    turns = _chat(
        ("assistant", "I also really like peppermint and chocolate\n*peppermint"),
        ("user", "Me too!!"),
        ("assistant", "I was sad. When I read about Percy I about died!"),
        ("user", "Yeah, me too actually!"),
    )
    assert [o.text for o in observe(turns)] == ["Sam also really likes peppermint and chocolate."]


@pytest.mark.parametrize(
    "text",
    [
        "I'll figure something out.",
        "I've never known anything else",
        "I feel bad",
        "I am TERRIFIED",
        "I had fun",
        "I'm not sure what the prompt is talking about",
        "I don't see why bad robots is that big of a fear",
        "I know small talk is super awkward",
        "I have a confession.",
        "I'm glad she did!",
        "Oh my goodness that sounds like so much fun.",
        "Tomorrow is my last day?",
    ],
)
def test_vague_feelings_views_and_ellipsis_form_nothing(text: str) -> None:
    assert observe([_turn(text)]) == []


def test_typed_contractions_and_weekends() -> None:
    [o] = observe([_turn("i just wont have a car")])
    assert o.text == "Sam just won't have a car."
    [t] = observe([_turn("I love my new tattoo")])  # "too" at its end is no "too"
    assert t.text == "Sam loves Sam's new tattoo."
    [w] = observe([_turn("I was in Montana over the weekend")])
    assert w.text == "Sam was in Montana over the weekend of 2018-11-03." and w.when == "2018-W44"
    [d] = observe([_turn("My last day isn't until May 30th")])
    assert d.text == "Sam's last day isn't until 2019-05-30."


MAY = datetime(2018, 5, 11, 15, 0, tzinfo=UTC)  # a Friday


@pytest.mark.parametrize(
    ("text", "at", "label", "said"),
    [
        ("I went home yesterday", MONDAY, "2018-11-04", "Sam went home on 2018-11-04."),
        ("I'm going to a concert tonight", MONDAY, "2018-11-05", "on 2018-11-05"),
        ("I will fly home tmrw", MONDAY, "2018-11-06", "Sam will fly home on 2018-11-06."),
        ("I went home two days ago", MONDAY, "2018-11-03", "Sam went home on 2018-11-03."),
        ("I went to Utah last week", MONDAY, "2018-W44", "in the week of 2018-10-29"),
        ("I saw my aunt a few weeks ago", MONDAY, "2018-W42", "in the week of 2018-10-15"),
        ("I'm going camping this weekend", MONDAY, "2018-W45", "over the weekend of 2018-11-10"),
        ("I'm moving to Denver next month", MONDAY, "2018-12", "in December 2018"),
        ("I graduated from high school last year", MONDAY, "2017", "in 2017"),
        ("I moved to Provo in March", MONDAY, "2018-03", "in March 2018"),
        ("I saw my sister on Friday", MONDAY, "2018-11-02", "on 2018-11-02"),
        ("I worked at a summer camp last summer", MONDAY, "2018", "in summer 2018"),
        ("I worked at a summer camp last summer", MAY, "2017", "in summer 2017"),
        ("I have big plans for the summer", MONDAY, "2019", "in summer 2019"),
        ("I have big plans for the summer", MAY, "2018", "in summer 2018"),
        ("I'm taking physics next semester", MONDAY, "2019", "semester starting January 2019"),
        ("I'm taking physics next semester", MAY, "2018", "semester starting September 2018"),
        ("I'm going to tennis practice right now", MAY, "2018-05-11", "right now, on 2018-05-11"),
        ("I'm going to do my homework now", MAY, "2018-05-11", "now, on 2018-05-11"),
        ("I should graduate in April if all goes well", MONDAY, "2019-04", "in April 2019"),
        ("I got 15 days till graduation", MAY, "2018-05-26", "graduation, on 2018-05-26"),
    ],
)
def test_each_kind_of_relative_time_is_resolved_in_the_observation(
    text: str, at: datetime, label: str, said: str
) -> None:
    """Against the turn's time, not the clock's: the label, the event time and the words."""
    [o] = observe([_turn(text, at=at)])
    assert o.when == label and said in o.text, o
    assert o.event_time == resolve(text, at).start  # type: ignore[union-attr]
    assert o.event_time <= at or o.type == "plan", o


def test_a_bare_now_dates_a_plan_not_a_state() -> None:
    assert resolve("I drink coffee now", MONDAY) is None
    [o] = observe([_turn("I drink coffee now")])
    assert o.when == "" and o.event_time == MONDAY


def test_every_time_said_in_a_statement_is_resolved() -> None:
    [o] = observe(
        [_turn("My last day isn't until May 30th and graduation isn't until June 3rd", MAY)]
    )
    assert o.text == "Sam's last day isn't until 2018-05-30 and graduation isn't until 2018-06-03."
    assert o.when == "2018-05-30"


def test_an_answer_takes_the_time_the_question_asked_about() -> None:
    asked = Turn("a1", "assistant", "Did you do anything fun over the weekend?", at=MONDAY)
    said = _turn("Yeah! I went to Boise for a tournament. I'm a CS major")
    went, major = observe([asked, said])
    assert went.text == "Sam went to Boise for a tournament over the weekend of 2018-11-03."
    assert went.when == "2018-W44" and went.event_time == datetime(2018, 10, 29, tzinfo=UTC)
    assert major.when == "" and major.text == "Sam is a CS major."


def test_a_question_that_asks_no_activity_lends_no_time() -> None:
    asked = Turn("a1", "assistant", "you excited for BYU in the Fall?", at=MAY)
    [o] = observe([asked, _turn("I'm actually going on my mission first", MAY)])
    assert o.when == "" and o.text == "Sam is actually going on Sam's mission first."


@pytest.mark.parametrize(
    ("text", "said"),
    [
        (  # "going to go" is a farewell only at the end of what is said
            "i am actually going to go on a temple walk with some people in my ward",
            ["Sam is actually going to go on a temple walk with some people in Sam's ward."],
        ),
        (
            "my wife normally plans fun things to do",
            ["Sam's wife normally plans fun things to do.", "Sam has a wife."],
        ),
        ("Math is my best subject and favorite", ["Math is Sam's best subject and favorite."]),
        ("I don't know too much about wars", ["Sam does not know too much about wars."]),
        ("I dont know, It just kinda seems right", []),
        ("I've wanted to", []),
        ("I'm crying", []),
        ("I'm vegan.", ["Sam is vegan."]),
        ("Yeah I didn't care. My personal opinion.", []),
        ("I'm almost positive we will have a NEW president", []),
        ("I didn't know they were doing that", []),
        ("(I'm the youngest, that's why I ask)", ["Sam is the youngest."]),
        ("Oh, I'm going to go now", []),
    ],
)
def test_what_a_statement_says_and_what_says_nothing(text: str, said: list[str]) -> None:
    assert [o.text for o in observe([_turn(text)])] == said


def test_where_you_from_without_are() -> None:
    asked = Turn("a1", "assistant", "cool\nso where you from?", at=MONDAY)
    [o] = observe([asked, _turn("va")])
    assert o.text == "Sam is from va." and o.type == "fact"


@pytest.mark.parametrize(
    ("text", "wanted"),
    [
        # a time said earlier in the sentence dates the later clauses that happened then
        (
            "Yesterday I cleaned the whole apartment, then I baked bread for my roommates.",
            {"bread": "2018-11-04"},
        ),
        (
            "I'm volunteering at the food bank this month and I have met so many neighbours.",
            {"neighbours": "2018-11"},
        ),
        (
            "Next week I will fly to Denver and I will meet my cousin there.",
            {"cousin": "2018-W46"},
        ),
        # ... but not one with a time of its own, a state, or a past clause after "right now"
        (
            "Yesterday I went hiking and I tried sushi the other day.",
            {"sushi": ""},
        ),
        ("Last week I moved to Provo and I love my new place.", {"place": ""}),
        ("I'm so tired right now, I cooked all afternoon.", {"afternoon": ""}),
    ],
)
def test_a_time_carries_over_to_the_later_clauses_of_its_sentence(
    text: str, wanted: dict[str, str]
) -> None:
    got = {o.text: o.when for o in observe([_turn(text)])}
    for word, label in wanted.items():
        [when] = [w for t, w in got.items() if word in t]  # the one observation saying it
        assert when == label, got


def test_a_time_of_day_in_another_sentence_makes_a_plan_today() -> None:
    turn = "I'm going to the climbing gym with my roommates. I should be back around 6 ish"
    got = {o.text: o.when for o in observe([_turn(turn)])}
    assert got["Sam is going to the climbing gym with Sam's roommates on 2018-11-05."] == (
        "2018-11-05"
    ), got
    # a day said beside the time of day is that day's; a question's time is nobody's plan
    got = {o.text: o.when for o in observe([_turn("I'm going to the gym. We meet tomorrow at 6")])}
    assert got == {
        "Sam is going to the gym.": "",
        "Sam and others meet on 2018-11-06 at 6.": "2018-11-06",
    }
    asked = observe([_turn("I'm going to the climbing gym. Are you free at 6?")])
    assert [o.when for o in asked] == [""], asked


def test_right_now_and_rn_date_the_statement() -> None:
    [o] = observe([_turn("Right now I'm reading a book about the Roman empire though")])
    assert o.text == "Sam is reading a book about the Roman empire right now, on 2018-11-05."
    assert o.when == "2018-11-05"
    [o] = observe([_turn("I'm rewatching The Office rn")])
    assert o.when == "2018-11-05"
    # "Rn" with a capital is a name, "RN" a nurse: no time
    [o] = observe([_turn("I am an RN at the children's hospital")])
    assert o.when == ""
