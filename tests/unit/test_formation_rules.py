"""The rule extractor and the extractive summariser: what they keep and what they leave out."""

from __future__ import annotations

import asyncio

import pytest

from gateway.core.model.models import Turn
from gateway.extractors.rules import RuleExtractor
from gateway.extractors.summary import NOTE, summarise, tokens


def _extract(
    *lines: str, role: str = "user", **meta: str
) -> dict[str, tuple[str, str, bool, bool]]:
    turns = [Turn(f"t{i}", role, text, metadata=dict(meta)) for i, text in enumerate(lines)]
    found = asyncio.run(RuleExtractor().extract(turns))
    for c in found:  # every candidate quotes words of the turn it names
        assert c.quote in next(t.content for t in turns if t.id == c.turn_ids[0])
    return {c.key: (c.value, c.type, c.explicit, c.correction) for c in found}


@pytest.mark.parametrize(
    ("line", "key", "value", "type_"),
    [
        ("I'm vegetarian, so no steak for me.", "user.diet", "vegetarian", "constraint"),
        ("No animal products at all for me, not even cheese.", "user.diet", "vegan", "constraint"),
        ("I'm allergic to peanuts.", "user.allergy.peanuts", "peanuts", "constraint"),
        ("I don't eat cilantro.", "user.avoids.cilantro", "cilantro", "constraint"),
        (
            "I really hate early meetings.",
            "user.taste.early_meetings",
            "dislikes early meetings",
            "preference",
        ),
        ("I love hiking but not running.", "user.taste.hiking", "likes hiking", "preference"),
        ("Please call me Sam.", "user.address_as", "Sam", "preference"),
        ("My name is Li Wei.", "user.name", "Li Wei", "attribute"),
        ("I live in New York these days.", "user.home_city", "New York", "attribute"),
        ("I work as a nurse at night.", "user.job", "nurse", "attribute"),
        ("My sister Ana is visiting.", "user.family.sister", "Ana", "attribute"),
        ("My cat Juniper knocked a glass over.", "user.pet.juniper", "Juniper", "attribute"),
        (
            "I go swimming every Tuesday.",
            "user.schedule.go_swimming_every_tuesday",
            "go swimming every Tuesday",
            "attribute",
        ),
        ("我对花生过敏。", "user.allergy.花生", "花生", "constraint"),
        ("我不吃香菜。", "user.avoids.香菜", "香菜", "constraint"),
        ("我喜欢爬山。", "user.taste.爬山", "喜欢爬山", "preference"),
        ("我不喜欢香菜。", "user.taste.香菜", "不喜欢香菜", "preference"),
        ("我住在杭州。", "user.home_city", "杭州", "attribute"),
        ("我姐姐叫小红。", "user.family.姐姐", "小红", "attribute"),
        ("我吃素。", "user.diet", "素食", "constraint"),
        # said in passing, still plainly about the speaker
        ("Fish is the only meat I eat these days.", "user.diet", "pescatarian", "constraint"),
        (
            "Turns out I'm properly allergic to shellfish.",
            "user.allergy.shellfish",
            "shellfish",
            "constraint",
        ),
        ("No, it's Biscuit, my dog. He stole a sock.", "user.pet.biscuit", "Biscuit", "attribute"),
        ("Yes! My cello teacher says I'm ready.", "user.plays.cello", "cello", "attribute"),
        ("My German tutor made me order lunch.", "user.learning.german", "German", "attribute"),
        ("The joys of getting to work by bike.", "user.commute", "cycling", "attribute"),
        ("Remind me why I became a pharmacist?", "user.job", "pharmacist", "attribute"),
        ("Staying put in Vancouver this weekend.", "user.home_city", "Vancouver", "attribute"),
    ],
)
def test_patterns(line: str, key: str, value: str, type_: str) -> None:
    got = _extract(line)
    assert key in got, got
    assert got[key][:2] == (value, type_)


@pytest.mark.parametrize(
    "line",
    [
        "Do you like pizza?",  # a question
        "I'd love to live in Paris.",  # a wish
        "If I were vegan I'd miss cheese.",  # a hypothetical
        "Colin speaks fluent Spanish.",  # someone else
        "My neighbour's dog stole a sock.",  # someone else's pet
        "I love it!",  # nothing to keep
        "I used to live in Rome.",  # the past
        "I was vegetarian for a year in college, not anymore.",  # the past
        "Maybe one day I'll get a parrot, who knows.",  # a hypothetical
        "I'm allergic to Monday mornings, ha.",  # a joke
        "I love spreadsheets so much I could marry one, kidding.",  # a joke
        'Ana told me "I\'m allergic to pollen" halfway through dinner.',  # reported speech
        "My uncle always says “I love hotpot” and then orders pizza.",  # reported speech
        "Dana said I live in Barcelona now, like it was nothing.",  # reported, unquoted
        "She's going to be working as a lawyer.",  # someone else
        "My sister loves pho, she would eat it every day.",  # someone else's taste
    ],
)
def test_not_facts_about_the_speaker(line: str) -> None:
    assert _extract(line) == {}


def test_only_user_turns_and_the_speaker_is_the_subject() -> None:
    assert _extract("I'm vegan.", role="assistant") == {}
    assert "leo.diet" in _extract("I'm vegan.", speaker="Leo")


def test_explicit_and_corrections() -> None:
    got = _extract(
        "记住：我不吃香菜。", "Remember that my flight is on Friday.", "以后都用中文回复我"
    )
    assert got["user.avoids.香菜"][2] and got["user.reply_language"] == (
        "中文",
        "preference",
        True,
        False,
    )
    assert got["user.note.my_flight_is_on"][2]  # explicit, no pattern: kept as said
    fixed = _extract("Actually, I live in Munich now.", "我不是住在北京，而是上海。")
    assert fixed["user.home_city"] in {
        ("Munich", "attribute", False, True),
        ("上海", "attribute", False, True),
    }
    assert _extract("我不是住在北京，而是上海。")["user.home_city"] == (
        "上海",
        "attribute",
        False,
        True,
    )


def test_extractive_summary_keeps_what_matters_within_budget() -> None:
    turns = [
        Turn("1", "user", "Hi!"),
        Turn("2", "user", "Nice weather, huh."),
        Turn("3", "user", "We decided to ship on March 3. Please use Postgres, not MySQL."),
        Turn("4", "assistant", "Great, thanks."),
        Turn("5", "user", "Budget is 12000 dollars. 我们约定周五开会。"),
    ]
    text = summarise(turns, 60)
    assert text.endswith(NOTE) and tokens(text) <= 60
    for kept in ("March 3", "Postgres", "12000", "周五开会"):
        assert kept in text
    for dropped in ("Hi!", "Nice weather", "Great, thanks"):
        assert dropped not in text
    assert summarise(turns, 20) == NOTE or tokens(summarise(turns, 20)) <= 20
