"""Formation distractors: things a speaker says that are NOT a stable fact of their own — other
people's preferences, reported speech, questions, hypotheticals, what they used to do, jokes and
one-off small talk — each labelled in the ground truth with its type, so a memory-formation
benchmark can count a candidate drawn from one as wrong.

They are said near the end of a session (after the small talk, before the goodbyes) and drawn
from a random generator of their own, so the rest of the dialogue — every turn id a recall
question cites as evidence, and the questions themselves — is what it was without them.
"""

from __future__ import annotations

import random
from typing import Any

V = dict[str, Any]

#: ground-truth types of distractors (none of them is a stable fact of the speaker's)
TYPES = ("third_party", "reported", "question", "hypothetical", "past", "joke", "passing")

# (type, pool kind, template, the value's field) — {x}: a pool value nobody in the dialogue holds,
# {p}: another person's name, {rel}/{pron}: a relative and their pronoun
TEMPLATES: list[tuple[str, str, str, str]] = [
    ("third_party", "fav_food", "My {rel} loves {x[dish]}, {pron} would eat it every single day.", "dish"),
    ("third_party", "fav_food", "{p} can't stand {x[dish]}, picks it out of everything.", "dish"),
    ("third_party", "diet", "{p} is {x[diet]} now, so group dinners got complicated.", "diet"),
    ("third_party", "hobby", "My {rel} is really into {x[hobby]} these days, it's all {pron} talks about.", "hobby"),
    ("third_party", "home_city", "My {rel} lives in {x[city]} and keeps telling me to visit.", "city"),
    ("reported", "allergy", '{p} told me "I\'m allergic to {x[thing]}" halfway through dinner, poor thing.', "thing"),
    ("reported", "fav_food", 'My {rel} always says "I love {x[dish]}" and then orders something else.', "dish"),
    ("reported", "home_city", '{p} said "I live in {x[city]} now" like it was nothing.', "city"),
    ("question", "fav_food", "Do you like {x[dish]}?", "dish"),
    ("question", "hobby", "Have you ever tried {x[hobby]}?", "hobby"),
    ("question", "pet", "Would you ever get a {x[kind]}?", "kind"),
    ("question", "drink", "Are you into {x[drink]} at all?", "drink"),
    ("hypothetical", "home_city", "If I ever moved, I'd love to live in {x[city]}.", "city"),
    ("hypothetical", "hobby", "If I had more time I would take up {x[hobby]}.", "hobby"),
    ("hypothetical", "pet", "Maybe one day I'll get a {x[kind]}, who knows.", "kind"),
    ("hypothetical", "language", "I wish I spoke {x[lang]}, it sounds so nice.", "lang"),
    ("past", "fav_food", "I used to love {x[dish]} as a kid, can't face it now.", "dish"),
    ("past", "home_city", "I used to live in {x[city]}, years ago.", "city"),
    ("past", "diet", "I was {x[diet]} for a year in college, not anymore.", "diet"),
    ("past", "instrument", "I used to play the {x[inst]} at school, badly.", "inst"),
    ("joke", "", "I'm allergic to Monday mornings, ha.", "Monday mornings"),
    ("joke", "", "I love spreadsheets so much I'd marry one, ha, kidding.", "spreadsheets"),
    ("joke", "", "My favourite food is whatever someone else is cooking, ha.", "whatever someone else is cooking"),
    ("joke", "", "I'm a professional napper, ha, if only it paid.", "napper"),
    ("joke", "", "I live in my pyjamas at this point, haha.", "pyjamas"),
    ("passing", "fav_food", "I could really go for {x[dish]} right now.", "dish"),
    ("passing", "fav_food", "I'm having {x[dish]} tonight, I think.", "dish"),
    ("passing", "drink", "Just made myself a {x[drink]}, first of the day.", "drink"),
]  # fmt: skip
RELATIVES = [("sister", "she"), ("brother", "he"), ("aunt", "she"), ("uncle", "he")]
LEAD_IN = ["Anything else new?", "What else is going on?", "Go on, what else?"]
REPLY = ["Hmm, hard to say.", "Huh, okay.", "Ha, fair enough.", "Depends on the day, honestly.",
         "Good question.", "Oh really?"]  # fmt: skip


def plan(
    rng: random.Random,
    sessions: int,
    pools: dict[str, list[V]],
    taken: dict[str, list[V]],
    people: list[str],
    p_session: float = 0.8,
) -> dict[int, V]:
    """At most one distractor per session: session index -> what is said, by whom, about what.
    Values come from ``pools`` minus what either speaker holds (``taken``)."""
    out: dict[int, V] = {}
    for i in range(sessions):
        if rng.random() >= p_session:
            continue
        type_, kind, template, field = rng.choice(TEMPLATES)
        rel, pron = rng.choice(RELATIVES)
        if kind:
            own = {v.get(field) for v in taken.get(kind, [])}
            choices = [v for v in pools[kind] if v.get(field) not in own] or pools[kind]
            x = rng.choice(choices)
            value = str(x[field])
        else:
            x, value = {}, field
        person = rng.choice(people)
        subject = person if "{p}" in template else rel if "{rel}" in template else ""
        out[i] = {
            "who": rng.randrange(2),
            "type": type_,
            "key": kind or "joke",
            "value": value,
            "text": template.format(x=x, p=person, rel=rel, pron=pron),
            "about": subject,  # "" = the speaker themself
            "lead_in": rng.choice(LEAD_IN),
            "reply": rng.choice(REPLY),
        }
    return out


def say(d: Any, item: V) -> None:
    """Say ``item`` keeping the turns alternating without asking the dialogue's own random
    generator for anything: the turn before the goodbyes is by the same speaker afterwards."""
    turns = d.sessions[d.cur]["turns"]
    last = [p.name for p in d.people].index(turns[-1]["speaker"]) if turns else 1 - item["who"]
    who = item["who"]
    if who == last:  # the other speaker hands over first
        d.say(1 - who, item["lead_in"])
        item["turns"] = [d.say(who, item["text"])]
    else:
        item["turns"] = [d.say(who, item["text"])]
        d.say(1 - who, item["reply"])


def facts(d: Any, items: list[V]) -> list[V]:
    """Ground-truth entries for the distractors said (type: one of ``TYPES``)."""
    out = []
    for x in items:
        speaker = d.people[x["who"]].name
        out.append(
            {
                "subject": x["about"] or speaker,
                "mentioned_by": speaker,
                "key": x["key"],
                "value": x["value"],
                "type": x["type"],
                "stated": x["turns"],
                "restated": [],
                "changed": [],
            }
        )
    return out
