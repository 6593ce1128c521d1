"""Seeded generator of long multi-session two-person dialogues with annotated recall questions
and ground-truth facts (memgate's own long-dialogue recall benchmark).

    python -m bench.dialogues.generate --seed 7 --out bench/dialogues/longdialog-v1.json

Each conversation: two named speakers, 20–26 dated sessions days or weeks apart, ~450–600 turns.
Persona facts are said once in passing (and sometimes restated or changed later); dated events use
relative time words ("last weekend", "next month"); opinions only make sense with the question
before them; small talk and near-miss distractors share the questions' vocabulary. Two
conversations are partly in Chinese.

Question categories and evidence (turn ids ``D<session>:<n>``):

* ``single-hop``  — one fact or one exchange (a question and its answer = two evidence turns);
* ``multi-hop``   — 2+ evidence turns, usually from different sessions (a relative introduced in
  one session, their news in another; everything a person bought and what they thought of it);
* ``temporal``    — needs the session date to resolve "last weekend" etc.; the answer is a date;
* ``open-domain`` — an inference from stated facts ("Would X enjoy a steakhouse dinner?");
* ``adversarial`` — attributes something to the wrong speaker or to the speaker instead of a third
  person (evidence = the misleading turns that show who it really was), or asks about something
  never said (evidence empty: no recall target, excluded from R@k and counted apart).

``facts`` per conversation: subject, normalised key, value, type (preference / attribute /
constraint / passing), and the turns where it is stated, restated, changed; ``passing`` facts are
one-off small-talk mentions that should NOT become stable facts. A speaker's own "I'm not a huge
fan of X" is a ``preference`` fact (``dislike_food``; restated when said again in a later session),
"My cousin P just moved to…" also says the speaker's cousin is called P (``cousin_name``). The
other non-facts are labelled by what they are: ``third_party`` (someone else's), ``reported``
(someone else's words in quotes), ``question``, ``hypothetical``, ``past`` ("I used to…", "I tried X
once"), ``joke`` (distractors.py adds one such line to most sessions, before the goodbyes, from
its own random generator so nothing else in the dialogue moves).
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import sys
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any

from bench.dialogues import distractors as X
from bench.dialogues import pools as P
from bench.dialogues import templates as T

V = dict[str, Any]
Episode = Callable[["Dialogue"], None]

CATEGORIES = ("single-hop", "multi-hop", "temporal", "open-domain", "adversarial")
CORE_KINDS = ("home_city", "job", "hobby")
OPTIONAL_KINDS = (
    "pet",
    "diet",
    "allergy",
    "fav_food",
    "instrument",
    "language",
    "drink",
    "commute",
)
POOLS: dict[str, list[V]] = {
    "home_city": P.CITIES, "job": P.JOBS, "pet": P.PETS, "diet": P.DIETS, "allergy": P.ALLERGIES,
    "hobby": P.HOBBIES, "fav_food": P.DISHES, "instrument": P.INSTRUMENTS, "language": P.LANGUAGES,
    "drink": P.DRINKS, "commute": P.COMMUTES,
}  # fmt: skip
EXTRA_SEED = 1_000_000  # the formation distractors' own random generator (distractors.py)
ZH_CONVERSATIONS = (3, 7)  # 0-based: these two conversations have a bilingual speaker


def cap(s: str) -> str:
    return s[:1].upper() + s[1:]


def facets(value: V) -> V:
    """The value plus a capitalised twin of every text facet (``did`` → ``did_cap``)."""
    out = dict(value)
    for k, x in value.items():
        if isinstance(x, str):
            out[f"{k}_cap"] = cap(x)
    if "title" in value:
        out["a_title"] = a_an(value["title"])
    return out


def a_an(noun: str) -> str:
    return f"{'an' if noun[:1].lower() in 'aeiou' else 'a'} {noun}"


def _fmt(d: date) -> str:
    return f"{d.day} {d.strftime('%B %Y')}"


def relative_time(rng: random.Random, today: date, future: bool) -> tuple[str, str, date, str]:
    """A relative time phrase said on ``today``: (english, chinese, day, answer)."""
    if future:
        days_to_sat = (5 - today.weekday()) % 7 or 7
        days_to_fri = (4 - today.weekday()) % 7 or 7
        nxt = (today.replace(day=1) + timedelta(days=32)).replace(day=1)
        options = [
            ("tomorrow", "明天", today + timedelta(days=1), None),
            ("this Friday", "这周五", today + timedelta(days=days_to_fri), None),
            ("next Saturday", "下周六", today + timedelta(days=days_to_sat + 7), None),
            ("in two weeks", "两周后", today + timedelta(days=14), "about two weeks after {d0}"),
            ("next month", "下个月", nxt, "{month}"),
        ]
    else:
        days_since_sat = (today.weekday() - 5) % 7 or 7
        prev = (today.replace(day=1) - timedelta(days=1)).replace(day=1)
        options = [
            ("yesterday", "昨天", today - timedelta(days=1), None),
            (
                "last weekend",
                "上周末",
                today - timedelta(days=days_since_sat),
                "the weekend before {d0} ({d})",
            ),
            (
                "two weeks ago",
                "两周前",
                today - timedelta(days=14),
                "about two weeks before {d0} ({d})",
            ),
            ("a few days ago", "前几天", today - timedelta(days=3), "a few days before {d0}"),
            ("last month", "上个月", prev, "{month}"),
        ]
    en, zh, day, pattern = rng.choice(options)
    answer = (pattern or "{d}").format(d=_fmt(day), d0=_fmt(today), month=day.strftime("%B %Y"))
    return en, zh, day, answer


@dataclass
class Persona:
    name: str
    zh_p: float  # probability that an episode by this speaker is in Chinese (when templates exist)
    values: dict[str, V] = field(default_factory=dict)


class Dialogue:
    """Builds one conversation turn by turn and logs what was said where."""

    def __init__(self, cid: str, rng: random.Random, people: list[Persona], days: list[datetime]):
        self.cid = cid
        self.rng = rng
        self.people = people
        self.days = days
        self.sessions: list[V] = [
            {"session": i + 1, "date_time": d.isoformat(timespec="minutes"), "turns": []}
            for i, d in enumerate(days)
        ]
        self.cur = 0
        self.plan: dict[int, list[Episode]] = defaultdict(list)
        self.facts: dict[tuple[int, str], V] = {}
        self.events: list[V] = []
        self.opinions: list[V] = []
        self.chains: list[V] = []
        self.distractors: list[V] = []
        self.passing: list[V] = []
        self.extras: dict[int, V] = {}  # session index -> a formation distractor (distractors.py)

    # ---- turns
    @property
    def today(self) -> date:
        return self.days[self.cur].date()

    def name(self, who: int) -> str:
        return self.people[who].name

    def lang(self, who: int, kind: str = "", table: dict[str, Any] | None = None) -> str:
        if table is not None and kind not in table.get("zh", {}):
            return "en"
        return "zh" if self.rng.random() < self.people[who].zh_p else "en"

    def say(self, who: int, text: str, lang: str = "en") -> str:
        turns = self.sessions[self.cur]["turns"]
        if turns and turns[-1]["speaker"] == self.name(who):
            # keep the turns alternating: an acknowledgement before a question, else a hand-over
            if text.rstrip().endswith(("?", "？")):
                filler = self.pad(self.rng.choice(T.ACK[lang]), T.TAIL_STATUS, lang, 0.9)
            else:
                filler = f"{self.rng.choice(T.TAIL_STATUS[lang])} {self.rng.choice(T.BRIDGE[lang])}"
                filler = filler if self.rng.random() < 0.85 else self.rng.choice(T.BRIDGE[lang])
            self.say(1 - who, filler, lang)
        tid = f"D{self.cur + 1}:{len(turns) + 1}"
        turns.append({"id": tid, "speaker": self.name(who), "text": text, "lang": lang})
        return tid

    def fill(self, template: str, who: int, **kw: Any) -> str:
        return template.format(
            me=self.name(who), you=self.name(1 - who), n=self.rng.randint(2, 9), **kw
        )

    def entry(self, who: int, e: T.Entry, lang: str = "en", **kw: Any) -> list[str]:
        """Say a template entry; returns its evidence turns (both turns of a question+answer)."""
        if isinstance(e, tuple):
            context_only = e[0].startswith("~")
            prompt = self.pad(self.fill(e[0].lstrip("~"), 1 - who, **kw), T.TAIL_ASK, lang, 0.3)
            q = self.say(1 - who, prompt, lang)
            a = self.say(who, self.pad(self.fill(e[1], who, **kw), T.TAIL_SAY, lang, 0.3), lang)
            return [a] if context_only else [q, a]
        return [self.say(who, self.pad(self.fill(e, who, **kw), T.TAIL_SAY, lang, 0.35), lang)]

    def react(self, who: int, lang: str = "en", p: float = 0.6, neutral: bool = False) -> None:
        if self.rng.random() < p:
            short = self.rng.choice((T.REACT_NEUTRAL if neutral else T.REACT)[lang])
            self.say(1 - who, self.pad(short, T.TAIL_REACT, lang, 0.85), lang)

    def pad(self, text: str, tails: dict[str, list[str]], lang: str, p: float = 0.75) -> str:
        """A short line plus a chatty follow-on sentence (most of the time)."""
        if self.rng.random() >= p:
            return text
        sep = "" if lang == "zh" else " "
        return f"{text}{sep}{self.rng.choice(tails[lang])}"

    def session_after(self, day: date, at_least: int = 1) -> int | None:
        """The first session after ``day`` (and at least ``at_least`` sessions later)."""
        for i in range(self.cur + at_least, len(self.days)):
            if self.days[i].date() > day:
                return i
        return None

    def later(self, lo: int, hi: int) -> int | None:
        lo = self.cur + lo
        hi = min(len(self.days) - 1, self.cur + hi)
        return self.rng.randint(lo, hi) if lo <= hi else None


# ------------------------------------------------------------------------------ episodes
def ep_state(who: int, key: str) -> Episode:
    kind = key.rstrip("2")  # hobby2: a second hobby, said like the first

    def run(d: Dialogue) -> None:
        v = d.people[who].values[key]
        lang = d.lang(who, kind, T.STATE)
        ev = d.entry(who, d.rng.choice(T.STATE[lang][kind]), lang, v=v)
        d.react(who, lang)
        fact = d.facts.setdefault(
            (who, key), {"value": v, "stated": [], "restated": [], "changed": []}
        )
        fact["stated"] += ev
        fact["lang"] = lang

    return run


def ep_restate(who: int, key: str) -> Episode:
    kind = key.rstrip("2")

    def run(d: Dialogue) -> None:
        fact = d.facts.get((who, key))
        if fact is None:  # not stated yet (cannot happen with the planner; be safe)
            return
        lang = d.lang(who, kind, T.RESTATE)
        ev = d.entry(who, d.rng.choice(T.RESTATE[lang][kind]), lang, v=fact["value"])
        d.react(who, lang, 0.4)
        fact["restated"] += ev

    return run


def ep_change(who: int, kind: str, new: V) -> Episode:
    """A changed fact (moved city, new job): announced with a date, confirmed in a later session."""

    def run(d: Dialogue) -> None:
        fact = d.facts.get((who, kind))
        if fact is None:
            return
        en, _, day, answer = relative_time(d.rng, d.today, future=True)
        tpl = d.rng.choice(T.CHANGE[kind])
        if isinstance(tpl, str):
            tpl = tpl.replace(" at the end of the month", f" {en}").replace(
                " in two weeks", f" {en}"
            )
        ev = d.entry(who, tpl, v=fact["value"], v2=new)
        wow = d.rng.choice(["Whoa, congratulations!", "No way! That's huge.", "Wait, what?!"])
        d.say(1 - who, d.pad(wow, T.TAIL_REACT, "en"))
        change = {"value": new, "turns": list(ev), "from_session": d.cur + 1}
        fact["changed"].append(change)
        d.events.append(
            {
                "who": who,
                "kind": f"{kind}_change",
                "x": new,
                "day": day,
                "answer": answer,
                "turns": list(ev),
            }
        )
        after = d.session_after(day)
        if after is not None:
            d.plan[after].append(ep_after_change(who, kind, change))

    return run


def ep_after_change(who: int, kind: str, change: V) -> Episode:
    def run(d: Dialogue) -> None:
        ev = d.entry(who, d.rng.choice(T.CHANGE[f"{kind}_after"]), v2=change["value"])
        d.react(who)
        change["turns"] += ev

    return run


def ep_pet2(who: int, new: V) -> Episode:
    def run(d: Dialogue) -> None:
        fact = d.facts.get((who, "pet"))
        if fact is None:
            return
        en, _, day, answer = relative_time(d.rng, d.today, future=False)
        ev = d.entry(who, d.rng.choice(T.CHANGE["pet2"]), v=fact["value"], v2=new, when=en)
        d.react(who, p=0.9)
        fact.setdefault("added", []).append({"value": new, "turns": ev})
        d.events.append(
            {"who": who, "kind": "pet2", "x": new, "day": day, "answer": answer, "turns": ev}
        )

    return run


def ep_person(who: int, rel: str, person: str, job: V, pron: str) -> Episode:
    """Introduce a relative or friend; their news (a job) comes in a later session."""

    def run(d: Dialogue) -> None:
        chain = {"who": who, "rel": rel, "p": person, "x": job, "intro": [], "detail": []}
        chain["intro"] = d.entry(who, d.rng.choice(T.PERSON_INTRO), rel=rel, p=person)
        d.react(who, p=0.4)
        d.chains.append(chain)
        j = d.later(2, 8)
        if j is not None:
            d.plan[j].append(ep_person_detail(chain, pron))

    return run


def ep_person_detail(chain: V, pron: str) -> Episode:
    def run(d: Dialogue) -> None:
        tpl = d.rng.choice(T.PERSON_DETAIL)
        chain["detail"] = d.entry(chain["who"], tpl, p=chain["p"], x=chain["x"], pron_cap=cap(pron))
        d.react(chain["who"], p=0.7)

    return run


EVENT_TEMPLATES: dict[str, tuple[list[T.Entry], bool]] = {
    "trip_future": (T.TRIP_FUTURE, True),
    "trip_past": (T.TRIP_PAST, False),
    "purchase": (T.PURCHASE, False),
    "appointment": (T.APPOINTMENT, True),
    "race": (T.RACE, True),
    "concert": (T.CONCERT, False),
    "exam": (T.EXAM, False),
}
FOLLOWS: dict[str, list[tuple[str, str]]] = {
    "trip_future": T.TRIP_FOLLOW,
    "trip_past": T.TRIP_FOLLOW,
    "purchase": T.PURCHASE_FOLLOW,
    "appointment": T.APPOINTMENT_FOLLOW,
    "race": T.RACE_FOLLOW,
}


def ep_event(who: int, kind: str, x: Any) -> Episode:
    def run(d: Dialogue) -> None:
        templates, future = EVENT_TEMPLATES[kind]
        en, zh, day, answer = relative_time(d.rng, d.today, future)
        zh_ok = kind in ("trip_future", "purchase") and d.lang(who) == "zh"
        if zh_ok:
            tpl = (T.TRIP_FUTURE_ZH if kind == "trip_future" else T.PURCHASE_ZH)[0]
            xx = x if kind == "trip_future" else d.rng.choice(P.PURCHASES_ZH)
            ev = [d.say(who, d.fill(tpl, who, x=xx, when_zh=zh), "zh")]
            d.react(who, "zh")
        else:
            xx = x
            label, short = (x[0], x[1]) if isinstance(x, tuple) else (x, "")
            ev = d.entry(who, d.rng.choice(templates), x=label, y=short, when=en)
            d.react(who, p=0.7)
        event = {
            "who": who,
            "kind": kind,
            "x": xx,
            "day": day,
            "answer": answer,
            "turns": ev,
            "follow": [],
        }
        d.events.append(event)
        if kind in FOLLOWS and not zh_ok:
            j = d.session_after(day)
            if j is not None and j - d.cur <= 4:
                d.plan[j].append(ep_follow(event))
        if not zh_ok and d.rng.random() < 0.7:
            j = d.session_after(day)
            if j is not None:
                d.plan[min(len(d.days) - 1, j + d.rng.randint(0, 4))].append(ep_echo(event))

    return run


def _bare(phrase: str) -> str:
    for article in ("a ", "an ", "my "):
        if phrase.startswith(article):
            return phrase[len(article) :]
    return phrase


def ep_echo(event: V) -> Episode:
    """The event's thing mentioned again later, without its date: a near miss for 'when'."""

    def run(d: Dialogue) -> None:
        x = event["x"]
        label, short = (x[0], x[1]) if isinstance(x, tuple) else (x, "")
        kind = event["kind"].split("_")[0]
        tpl = d.rng.choice(T.ECHO[kind])
        xn = _bare(label) if isinstance(label, str) else ""
        d.say(event["who"], d.fill(tpl, event["who"], x=label, y=short, xn=xn))
        d.react(event["who"], p=0.5, neutral=True)

    return run


def ep_follow(event: V) -> Episode:
    def run(d: Dialogue) -> None:
        q, a = d.rng.choice(FOLLOWS[event["kind"]])
        x = event["x"]
        label, short = (x[0], x[1]) if isinstance(x, tuple) else (x, "")
        event["follow"] = d.entry(event["who"], (q, a), x=label, y=short)
        d.react(event["who"], p=0.5)

    return run


def ep_opinion(who: int, kind: str, item: str, positive: bool) -> Episode:
    def run(d: Dialogue) -> None:
        lang = "zh" if kind in ("movie", "show") and d.lang(who) == "zh" else "en"
        if lang == "zh":
            ask = d.rng.choice(T.ZH_OPINION["ask"])
            answer = d.rng.choice(T.ZH_OPINION["pos" if positive else "neg"])
        else:
            ask = d.rng.choice(T.ASK_OPINION[kind])
            food = kind == "restaurant"
            pool = (
                (P.FOOD_POS if positive else P.FOOD_NEG)
                if food
                else (P.OPINIONS_POS if positive else P.OPINIONS_NEG)
            )
            answer = d.rng.choice(pool)
        ev = d.entry(who, (ask, answer), lang, x=item)
        d.react(who, lang, 0.3)
        d.opinions.append(
            {
                "who": who,
                "kind": kind,
                "x": item,
                "positive": positive,
                "turns": ev,
                "lang": lang,
                "text": answer,
            }
        )

    return run


def ep_distract(who: int, kind: str, x: V, person: str) -> Episode:
    def run(d: Dialogue) -> None:
        tpl = d.rng.choice(T.DISTRACT[kind])
        ev = [d.say(who, d.fill(tpl, who, x=x, p=person))]
        d.react(who, p=0.5, neutral=True)
        d.distractors.append(
            {"who": who, "kind": kind, "x": x, "p": person, "turns": ev, "text": tpl}
        )

    return run


def ep_passing(who: int, key: str, tpl: str, x: str) -> Episode:
    def run(d: Dialogue) -> None:
        ev = [d.say(who, d.fill(tpl, who, x=x))]
        d.react(who, p=0.4, neutral=True)
        d.passing.append({"who": who, "key": key, "x": x, "turns": ev})

    return run


def ep_small_talk(who: int) -> Episode:
    def run(d: Dialogue) -> None:
        lang = d.lang(who)
        d.say(who, d.pad(d.rng.choice(T.SMALL_TALK[lang]), T.TAIL_SMALL, lang, 0.6), lang)
        d.say(1 - who, d.pad(d.rng.choice(T.SMALL_TALK_REPLY[lang]), T.TAIL_REACT, lang), lang)

    return run


# ------------------------------------------------------------------------------ personas and plan
def _value(rng: random.Random, kind: str, taken: list[V], extra: V | None = None) -> V:
    choices = [v for v in POOLS[kind] if v not in taken] or POOLS[kind]
    v = dict(rng.choice(choices))
    taken.append(v)
    return v


def _dish_for(rng: random.Random, forbid: set[str], taken: list[V]) -> V:
    ok = [x for x in P.DISHES if not (x["has"] & forbid) and x not in taken]
    dish = dict(rng.choice(ok))
    taken.append(dish)
    return dish


def _decorate(kind: str, v: V, rng: random.Random, names: list[str], dishes: list[V]) -> V:
    """Per-kind facets the templates use (a pet's name, a diet's dish, Chinese wording)."""
    if kind == "pet":
        v.update(name=names.pop(), kind_zh=v["zh"], pron_cap=cap(v["pron"]))
    elif kind == "hobby":
        v["hobby_zh"] = v["zh"]
    elif kind == "fav_food":
        v["dish_zh"] = v["zh"]
    elif kind == "diet":
        dish = _dish_for(rng, v["forbid"], dishes)
        v.update(ok_dish=dish["dish"], ok_dish_zh=dish["zh"])
    return facets(v)


def make_people(
    rng: random.Random, index: int
) -> tuple[list[Persona], dict[str, list[V]], list[str]]:
    """Two speakers with their persona values; also the values taken and the pet names left."""
    if index in ZH_CONVERSATIONS:
        people = [Persona(rng.choice(P.NAMES_ZH), 0.6), Persona(rng.choice(P.NAMES_EN), 0.25)]
    else:
        a, b = rng.sample(P.NAMES_EN, 2)
        people = [Persona(a, 0.0), Persona(b, 0.0)]
    optional = list(OPTIONAL_KINDS)
    rng.shuffle(optional)
    kinds = [list(CORE_KINDS) + optional[:5], list(CORE_KINDS) + optional[3:]]
    taken: dict[str, list[V]] = defaultdict(list)
    pet_names = rng.sample(P.PET_NAMES, 6)
    dishes: list[V] = []
    for who, person in enumerate(people):
        for kind in kinds[who]:
            if kind == "fav_food":
                continue  # after the diet, so the favourite dish fits it
            v = _value(rng, kind, taken[kind])
            person.values[kind] = _decorate(kind, v, rng, pet_names, dishes)
        if "fav_food" in kinds[who]:
            forbid = person.values.get("diet", {}).get("forbid", set())
            person.values["fav_food"] = _decorate(
                "fav_food", _dish_for(rng, forbid, dishes), rng, pet_names, dishes
            )
    # a second hobby each; the second speaker's is the first speaker's (a shared interest)
    people[0].values["hobby2"] = _decorate(
        "hobby", _value(rng, "hobby", taken["hobby"]), rng, pet_names, dishes
    )
    people[1].values["hobby2"] = people[0].values["hobby"]
    return people, taken, pet_names


def _sample_days(rng: random.Random, n: int, index: int) -> list[datetime]:
    t = datetime(
        2023, 1 + (index % 6), rng.randint(1, 25), rng.randint(9, 21), rng.choice([0, 15, 30, 45])
    )
    days = []
    for _ in range(n):
        days.append(t)
        gap = rng.choice([3, 4, 5, 6, 7, 7, 9, 10, 12, 14, 16, 21])
        t = (t + timedelta(days=gap)).replace(
            hour=rng.randint(8, 22), minute=rng.choice([0, 10, 25, 40, 55])
        )
    return days


def plan_facts(d: Dialogue, who: int, taken: dict[str, list[V]], pet_names: list[str]) -> None:
    rng, n = d.rng, len(d.days)
    values = d.people[who].values
    change_kinds = {"home_city"} if who == 0 or rng.random() < 0.6 else set()
    if rng.random() < 0.5:
        change_kinds.add("job")
    for key in [k for k in values if not k.startswith("_")]:
        kind = key.rstrip("2")
        s1 = rng.randrange(0, max(1, n * 2 // 3))
        d.plan[s1].append(ep_state(who, key))
        s3 = rng.randint(s1 + 3, n - 3) if key in change_kinds and s1 + 3 <= n - 3 else None
        if s3 is not None:
            new = _decorate(kind, _value(rng, kind, taken[kind]), rng, pet_names, [])
            d.plan[s3].append(ep_change(who, kind, new))
        hi = (s3 - 1) if s3 is not None else n - 1
        restate = (
            key != "hobby2"
            and kind in T.RESTATE["en"]
            and (key in CORE_KINDS or rng.random() < 0.4)
        )
        if restate and s1 + 1 <= hi:
            d.plan[rng.randint(s1 + 1, hi)].append(ep_restate(who, key))
        if key == "pet" and rng.random() < 0.6 and s1 + 2 < n:
            pets = [p for p in P.PETS if p["kind"] != values["pet"]["kind"]]
            new = _decorate("pet", dict(rng.choice(pets)), rng, pet_names, [])
            taken["pet"].append(new)
            d.plan[rng.randint(s1 + 2, n - 1)].append(ep_pet2(who, new))


def plan_people(d: Dialogue, who: int, people_left: list[str]) -> None:
    rng, n = d.rng, len(d.days)
    for rel in rng.sample(P.RELATIONS, 2):
        pron = "she" if rel == "sister" else "he" if rel == "brother" else rng.choice(["she", "he"])
        job = facets(dict(rng.choice(P.JOBS)))  # a_title for "works as an accountant"
        d.plan[rng.randint(0, n - 5)].append(ep_person(who, rel, people_left.pop(), job, pron))


def plan_events(d: Dialogue, who: int, pick: dict[str, list[Any]]) -> None:
    rng, n = d.rng, len(d.days)
    kinds = [
        "trip_future",
        "trip_past",
        "purchase",
        "purchase",
        "appointment",
        "race",
        "concert",
        "exam",
    ]
    for kind in kinds:
        x = pick[kind.split("_")[0]].pop()
        d.plan[rng.randint(0, n - 2)].append(ep_event(who, kind, x))
    for _ in range(6):
        kind = rng.choice(list(T.ASK_OPINION))
        d.plan[rng.randint(0, n - 1)].append(
            ep_opinion(who, kind, pick[kind].pop(), rng.random() < 0.65)
        )


def _distractor_value(d: Dialogue, kind: str, taken: dict[str, list[V]]) -> V:
    """A value for a near-miss mention that neither speaker holds (so attributing it is wrong)."""
    pool = P.DESTINATIONS if kind == "trip" else POOLS[kind]
    key = P.PRIMARY[kind]
    own = {v[key] for v in taken[kind]}
    ok = [x for x in pool if x[key] not in own]
    return facets(dict(d.rng.choice(ok or pool)))


def plan_filler(d: Dialogue, people_left: list[str], taken: dict[str, list[V]]) -> None:
    rng, n = d.rng, len(d.days)
    for _ in range(int(n * 2.2)):
        kind = rng.choice(list(T.DISTRACT))
        x = _distractor_value(d, kind, taken)
        d.plan[rng.randrange(n)].append(
            ep_distract(rng.randrange(2), kind, x, rng.choice(people_left))
        )
    for key, tpl, xs in rng.sample(P.PASSING, len(P.PASSING)):
        for item in rng.sample(xs, 2):
            d.plan[rng.randrange(n)].append(ep_passing(rng.randrange(2), key, tpl, item))


def run_sessions(d: Dialogue) -> None:
    rng = d.rng
    zh_conv = any(p.zh_p for p in d.people)
    for i in range(len(d.days)):
        d.cur = i
        lang = "zh" if zh_conv and rng.random() < 0.35 else "en"
        first = rng.randrange(2)
        d.say(first, d.fill(rng.choice(T.OPEN[lang]), first), lang)
        d.say(1 - first, d.pad(rng.choice(T.OPEN_REPLY[lang]), T.TAIL_STATUS, lang, 0.5), lang)
        episodes = list(d.plan[i])
        rng.shuffle(episodes)
        for ep in episodes:
            ep(d)
        target = rng.randint(18, 26)
        while len(d.sessions[i]["turns"]) < target - 2:
            ep_small_talk(rng.randrange(2))(d)
        if i in d.extras:
            X.say(d, d.extras[i])
        last = rng.randrange(2)
        d.say(last, rng.choice(T.CLOSE[lang]), lang)
        d.say(1 - last, rng.choice(T.CLOSE_REPLY[lang]), lang)


def build_conversation(seed: int, index: int) -> V:
    rng = random.Random(seed * 1000 + index)
    people, taken, pet_names = make_people(rng, index)
    days = _sample_days(rng, rng.randint(20, 26), index)
    d = Dialogue(f"conv-{index + 1:02d}", rng, people, days)
    people_left = [p for p in P.OTHER_PEOPLE]
    rng.shuffle(people_left)
    places = rng.sample(P.DESTINATIONS, 4)
    pick: dict[str, list[Any]] = {
        "trip": [facets(dict(x)) for x in places],
        "purchase": rng.sample(P.PURCHASES, 4),
        "appointment": rng.sample(P.APPOINTMENTS, 2),
        "race": rng.sample(P.RACES, 2),
        "concert": rng.sample(P.CONCERTS, 2),
        "exam": rng.sample(P.EXAMS, 2),
        "movie": rng.sample(P.MOVIES, 12),
        "book": rng.sample(P.BOOKS, 10),
        "restaurant": rng.sample(P.RESTAURANTS, 8),
        "show": rng.sample(P.SHOWS, 6),
    }
    for who in (0, 1):
        plan_facts(d, who, taken, pet_names)
        plan_people(d, who, people_left)
        plan_events(d, who, pick)
    taken["trip"] = list(places)
    plan_filler(d, people_left, taken)
    d.extras = X.plan(
        random.Random(EXTRA_SEED + seed * 1000 + index), len(days), POOLS, taken, people_left
    )
    run_sessions(d)
    from bench.dialogues.questions import build_facts, build_questions

    return {
        "id": d.cid,
        "speakers": [p.name for p in people],
        "sessions": d.sessions,
        "questions": build_questions(d),
        "facts": build_facts(d),
    }


def generate(seed: int, conversations: int) -> V:
    convs = [build_conversation(seed, i) for i in range(conversations)]
    return {
        "name": "longdialog-v1",
        "seed": seed,
        "generator": "python -m bench.dialogues.generate",
        "categories": list(CATEGORIES),
        "scoring": (
            "R@k = fraction of a question's evidence turns among the top k hits, averaged over "
            "questions with evidence; adversarial questions about things never said have no "
            "evidence and are counted apart (no recall target)."
        ),
        "conversations": convs,
    }


def load(path: str | Path) -> V:
    """Load a dataset written by this module (plain or gzipped JSON)."""
    p = Path(path)
    if not p.exists() and Path(f"{p}.gz").exists():
        p = Path(f"{p}.gz")
    raw = p.read_bytes()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    return json.loads(raw.decode("utf-8"))


def summary(data: V) -> str:
    lines = []
    totals: dict[str, int] = defaultdict(int)
    for c in data["conversations"]:
        turns = sum(len(s["turns"]) for s in c["sessions"])
        per: dict[str, int] = defaultdict(int)
        for q in c["questions"]:
            per[q["category"]] += 1
            totals[q["category"]] += 1
        zh = sum(t["lang"] == "zh" for s in c["sessions"] for t in s["turns"])
        cats = " ".join(f"{k}={per[k]}" for k in CATEGORIES)
        lines.append(
            f"{c['id']} {'/'.join(c['speakers'])}: {len(c['sessions'])} sessions, {turns} turns "
            f"({zh} zh), {len(c['questions'])} questions ({cats}), {len(c['facts'])} facts"
        )
    lines.append("total: " + " ".join(f"{k}={totals[k]}" for k in CATEGORIES))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--conversations", type=int, default=10)
    ap.add_argument("--out", default="bench/dialogues/longdialog-v1.json")
    args = ap.parse_args(argv)
    data = generate(args.seed, args.conversations)
    text = json.dumps(data, ensure_ascii=False, indent=1, default=str)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    if len(text.encode()) > 5_000_000 or out.suffix == ".gz":
        out = out if out.suffix == ".gz" else Path(f"{out}.gz")
        out.write_bytes(gzip.compress(text.encode("utf-8"), mtime=0))
    else:
        out.write_text(text + "\n", encoding="utf-8")
    print(summary(data))
    print(f"wrote {out} ({out.stat().st_size / 1e6:.2f} MB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
