"""Questions and ground-truth facts from what a generated dialogue logged (see ``generate.py``)."""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from bench.dialogues import distractors as X
from bench.dialogues import pools as P
from bench.dialogues import templates as T

if TYPE_CHECKING:
    from bench.dialogues.generate import Dialogue

V = dict[str, Any]


class Asker:
    def __init__(self, d: Dialogue) -> None:
        self.d = d
        self.rng = random.Random(f"{d.cid}-questions")
        self.out: list[V] = []

    def name(self, who: int) -> str:
        return self.d.people[who].name

    def add(self, category: str, kind: str, who: int, question: str, answer: str,
            evidence: list[str], lang: str = "en") -> None:  # fmt: skip
        self.out.append(
            {
                "id": f"{self.d.cid}-q{len(self.out) + 1:03d}",
                "category": category,
                "kind": kind,
                "about": self.name(who),
                "question": question,
                "answer": answer,
                "evidence": sorted(dict.fromkeys(evidence), key=_turn_order),
                "lang": lang,
            }
        )

    def pick(self, templates: list[str], who: int, **kw: Any) -> str:
        return self.rng.choice(templates).format(me=self.name(who), you=self.name(1 - who), **kw)


def _turn_order(tid: str) -> tuple[int, int]:
    s, n = tid[1:].split(":")
    return int(s), int(n)


def _facts(d: Dialogue) -> Iterator[tuple[int, str, str, V]]:
    for (who, key), fact in d.facts.items():
        yield who, key, key.rstrip("2"), fact


def answer_of(kind: str, v: V) -> str:
    return T.ANSWER[kind].format(v=v)


def _evidence(fact: V) -> list[str]:
    return list(fact["stated"]) + list(fact["restated"])


# ---------------------------------------------------------------- single-hop
def single_hop(a: Asker) -> None:
    d = a.d
    for who, key, kind, fact in _facts(d):
        if key == "hobby2":
            continue  # "one of X's hobbies" has two answers: asked as multi-hop
        if fact["changed"]:
            last = fact["changed"][-1]
            q = a.pick(T.ASK["en"][f"{kind}_now"], who, v=last["value"])
            a.add(
                "single-hop",
                f"{kind}_latest",
                who,
                q,
                answer_of(kind, last["value"]),
                last["turns"],
            )
            continue
        lang = fact.get("lang", "en") if kind in T.ASK["zh"] else "en"
        q = a.pick(T.ASK[lang][kind], who, v=fact["value"])
        a.add("single-hop", kind, who, q, answer_of(kind, fact["value"]), _evidence(fact), lang)
    for op in d.opinions:
        lang = op["lang"]
        templates = T.ZH_OPINION["q"] if lang == "zh" else T.Q_OPINION[op["kind"]]
        q = a.pick(templates, op["who"], x=op["x"])
        verdict = "liked it" if op["positive"] else "did not like it"
        a.add(
            "single-hop",
            f"opinion_{op['kind']}",
            op["who"],
            q,
            f"{verdict}: {op['text']}",
            op["turns"],
            lang,
        )
    for c in d.chains:
        q = a.pick(
            ["What is the name of {me}'s {rel}?", "Who is {me}'s {rel}?"], c["who"], rel=c["rel"]
        )
        a.add("single-hop", "person_name", c["who"], q, c["p"], c["intro"])
    for ev in d.events:
        if ev.get("follow") and _named_in_follow(d, ev):
            label = _label(ev)
            q = a.pick(["How did {me}'s {y} go?", "How was {me}'s {y}?"], ev["who"], y=label)
            a.add(
                "single-hop",
                f"{ev['kind']}_outcome",
                ev["who"],
                q,
                _turn_text(d, ev["follow"][-1]),
                ev["follow"],
            )


def _label(ev: V) -> str:
    x = ev["x"]
    if isinstance(x, tuple):
        return x[1]
    if isinstance(x, dict) and "place" in x:
        return f"trip to {x['place']}"
    return _the(str(x))


def _the(phrase: str) -> str:
    """'a 10k charity run' -> 'the 10k charity run' (for "How did X's … go?")."""
    for article in ("a ", "an "):
        if phrase.startswith(article):
            return phrase[len(article) :]
    return phrase


def _named_in_follow(d: Dialogue, ev: V) -> bool:
    x = ev["x"]
    needle = (
        x[1]
        if isinstance(x, tuple)
        else x["place"]
        if isinstance(x, dict) and "place" in x
        else str(x)
    )
    return needle.lower() in _turn_text(d, ev["follow"][0]).lower()


def _turn_text(d: Dialogue, tid: str) -> str:
    s, n = _turn_order(tid)
    return str(d.sessions[s - 1]["turns"][n - 1]["text"])


# ---------------------------------------------------------------- multi-hop
def multi_hop(a: Asker) -> None:
    d = a.d
    for c in d.chains:
        if c["detail"]:
            q = a.pick(
                ["What does {me}'s {rel} do for a living?", "What job did {me}'s {rel} get?"],
                c["who"],
                rel=c["rel"],
            )
            a.add("multi-hop", "person_job", c["who"], q, c["x"]["title"], c["intro"] + c["detail"])
    for who, _key, kind, fact in _facts(d):
        for change in fact["changed"]:
            what = {
                "home_city": "Which cities has {me} lived in?",
                "job": "What jobs has {me} had?",
            }[kind]
            ans = f"{answer_of(kind, fact['value'])}, then {answer_of(kind, change['value'])}"
            a.add(
                "multi-hop",
                f"{kind}_history",
                who,
                what.format(me=a.name(who)),
                ans,
                fact["stated"] + change["turns"],
            )
        for added in fact.get("added", []):
            q = a.pick(["What pets does {me} have?", "Which animals live with {me}?"], who)
            ans = f"{answer_of('pet', fact['value'])} and {answer_of('pet', added['value'])}"
            a.add("multi-hop", "pets", who, q, ans, fact["stated"] + added["turns"])
    for who in (0, 1):
        _hobbies(a, who)
        _trips(a, who)
        _purchases(a, who)
    for ev in d.events:
        if ev.get("follow") and not _named_in_follow(d, ev):
            q = a.pick(
                ["How did {me}'s {y} turn out?", "What happened with {me}'s {y}?"],
                ev["who"],
                y=_label(ev),
            )
            a.add(
                "multi-hop",
                f"{ev['kind']}_outcome",
                ev["who"],
                q,
                _turn_text(d, ev["follow"][-1]),
                ev["turns"] + ev["follow"],
            )


def _hobbies(a: Asker, who: int) -> None:
    d = a.d
    h1, h2 = d.facts.get((who, "hobby")), d.facts.get((who, "hobby2"))
    if h1 and h2:
        q = a.pick(
            ["What hobbies does {me} have?", "What does {me} like to do in their spare time?"], who
        )
        ans = f"{h1['value']['hobby']} and {h2['value']['hobby']}"
        a.add("multi-hop", "hobbies", who, q, ans, h1["stated"] + h2["stated"])
    if who == 0 and h1 and (shared := d.facts.get((1, "hobby2"))):
        q = a.pick(
            [
                "Which hobby do {me} and {you} have in common?",
                "What activity do both {me} and {you} enjoy?",
            ],
            0,
        )
        a.add(
            "multi-hop", "shared_hobby", 0, q, h1["value"]["hobby"], h1["stated"] + shared["stated"]
        )


def _trips(a: Asker, who: int) -> None:
    trips = [e for e in a.d.events if e["who"] == who and e["kind"].startswith("trip")]
    if len(trips) >= 2:
        q = a.pick(["Which places did {me} travel to?", "Where has {me} been on trips?"], who)
        ans = ", ".join(t["x"]["place"] for t in trips)
        a.add("multi-hop", "trips", who, q, ans, [tid for t in trips for tid in t["turns"]])


def _purchases(a: Asker, who: int) -> None:
    bought = [e for e in a.d.events if e["who"] == who and e["kind"] == "purchase"]
    if len(bought) >= 2:
        q = a.pick(
            [
                "What bigger things did {me} buy over these months?",
                "Which purchases did {me} mention?",
            ],
            who,
        )
        a.add(
            "multi-hop",
            "purchases",
            who,
            q,
            ", ".join(str(b["x"]) for b in bought),
            [t for b in bought for t in b["turns"]],
        )


# ---------------------------------------------------------------- temporal
WHEN: dict[str, list[str]] = {
    "trip_future": ["When did {me} travel to {place}?", "When was {me}'s trip to {place}?"],
    "trip_past": ["When did {me} go to {place}?", "When was {me} in {place}?"],
    "purchase": ["When did {me} buy {x}?", "When did {me} get {x}?"],
    "appointment": ["When was {me}'s {y}?", "On what date did {me} have {x}?"],
    "race": ["When did {me} take part in {x}?", "When was {me}'s {x}?"],
    "concert": ["When did {me} see {x} live?", "When did {me} go to see {x}?"],
    "exam": ["When did {me} pass {x}?", "When did {me} complete {x}?"],
    "home_city_change": ["When did {me} move to {city}?", "When was {me}'s move to {city}?"],
    "job_change": [
        "When did {me} start working as {a_title}?",
        "When did {me} begin the {title} job?",
    ],
    "pet2": ["When did {me} adopt {name}?", "When did {me} get {name} the {kind}?"],
}


def _fields(ev: V) -> V:
    x = ev["x"]
    if isinstance(x, tuple):
        return {"x": x[0], "y": x[1]}
    if isinstance(x, dict):
        return {**x, "x": x.get("place", "")}
    return {"x": x}


def _what(ev: V) -> str:
    f = _fields(ev)
    kind = ev["kind"]
    phrases = {
        "trip_future": "the trip to {place}", "trip_past": "the trip to {place}", "purchase": "buying {x}",
        "appointment": "the {y}", "race": "{x}", "concert": "seeing {x}", "exam": "passing {x}",
        "home_city_change": "moving to {city}", "job_change": "starting as {a_title}", "pet2": "adopting {name}",
    }  # fmt: skip
    return phrases[kind].format(**f)


def temporal(a: Asker) -> None:
    d = a.d
    for ev in d.events:
        q = a.pick(WHEN[ev["kind"]], ev["who"], **_fields(ev))
        a.add("temporal", ev["kind"], ev["who"], q, ev["answer"], ev["turns"])
    for who in (0, 1):
        mine = [e for e in d.events if e["who"] == who and e["turns"]]
        a.rng.shuffle(mine)
        for e1, e2 in zip(mine[0:6:2], mine[1:6:2], strict=False):
            if (
                e1["day"] == e2["day"]
                or e1["turns"][0].split(":")[0] == e2["turns"][0].split(":")[0]
            ):
                continue
            first = e1 if e1["day"] < e2["day"] else e2
            q = f"Which happened first for {a.name(who)}: {_what(e1)} or {_what(e2)}?"
            a.add("temporal", "order", who, q, _what(first), e1["turns"] + e2["turns"])


# ---------------------------------------------------------------- open-domain / inference
def open_domain(a: Asker) -> None:
    d = a.d
    for who, key, kind, fact in _facts(d):
        v = fact["changed"][-1]["value"] if fact["changed"] else fact["value"]
        ev = fact["changed"][-1]["turns"] if fact["changed"] else _evidence(fact)
        options = list(T.INFER.get(kind, []))
        if kind == "hobby":
            options += T.INFER["hobby_outdoor" if v["outdoor"] else "hobby_indoor"]
        if "infer_q" in v:
            options.append((v["infer_q"], v["infer_a"]))
        for qt, at in a.rng.sample(options, min(len(options), 2 if key == "hobby" else 1)):
            q, ans = (t.format(me=a.name(who), you=a.name(1 - who), v=v) for t in (qt, at))
            a.add("open-domain", kind, who, q, ans, ev)
    shared = d.facts.get((1, "hobby2"))
    h1 = d.facts.get((0, "hobby"))
    if shared and h1:
        hobby = h1["value"]["hobby"]
        q = f"Would {a.name(0)} and {a.name(1)} enjoy a {hobby} day together?"
        a.add(
            "open-domain",
            "shared_hobby",
            0,
            q,
            f"Yes, both like {hobby}.",
            h1["stated"] + shared["stated"],
        )
    for c in d.chains:
        if c["detail"]:
            q = a.pick(
                ["Could {me}'s {rel} help with {e}?"], c["who"], rel=c["rel"], e=c["x"]["expertise"]
            )
            a.add(
                "open-domain",
                "person_expertise",
                c["who"],
                q,
                f"Likely, {c['p']} is {c['x']['a_title']}.",
                c["intro"] + c["detail"],
            )


# ---------------------------------------------------------------- adversarial
ATTRIBUTE: dict[str, str] = {
    "home_city": "Why did {me} move to {x[city]}?",
    "job": "When did {me} start working as {x[a_title]}?",
    "pet": "What is the name of {me}'s {x[kind]}?",
    "diet": "Why did {me} give up being {x[diet]}?",
    "hobby": "How long has {me} been doing {x[hobby]}?",
    "fav_food": "Why is {x[dish]} {me}'s favourite dish?",
    "trip": "When did {me} go to {x[place]}?",
    "instrument": "How long has {me} played the {x[inst]}?",
    "language": "Why is {me} learning {x[lang]}?",
}


def adversarial(a: Asker) -> None:
    d = a.d
    for who, key, kind, fact in _facts(d):
        if key == "hobby2" or kind not in T.ASK["en"] or (1 - who, kind) in d.facts:
            continue  # only ask the other speaker about what they never said about themselves
        q = a.pick(T.ASK["en"][kind], 1 - who, v=fact["value"])
        ans = f"Not said about {a.name(1 - who)}; it was {a.name(who)}: {answer_of(kind, fact['value'])}."
        a.add("adversarial", f"wrong_speaker_{kind}", 1 - who, q, ans, fact["stated"])
    for ev in d.events:
        if ev["kind"] in ("trip_future", "trip_past", "concert", "exam", "purchase"):
            other = 1 - ev["who"]
            q = a.pick(WHEN[ev["kind"]], other, **_fields(ev))
            ans = f"Not {a.name(other)}; it was {a.name(ev['who'])}."
            a.add("adversarial", f"wrong_speaker_{ev['kind']}", other, q, ans, ev["turns"])
    for c in d.chains:
        if not any(o["who"] != c["who"] and o["rel"] == c["rel"] for o in d.chains) and c["detail"]:
            q = f"What does {a.name(1 - c['who'])}'s {c['rel']} do for a living?"
            ans = f"Not said; it is {a.name(c['who'])}'s {c['rel']} {c['p']} who is {c['x']['a_title']}."
            a.add(
                "adversarial",
                "wrong_speaker_person",
                1 - c["who"],
                q,
                ans,
                c["intro"] + c["detail"],
            )
    for x in d.distractors:
        q = ATTRIBUTE[x["kind"]].format(me=a.name(x["who"]), x=x["x"])
        a.add(
            "adversarial",
            f"third_party_{x['kind']}",
            x["who"],
            q,
            "Not about them: someone else (a third person) was mentioned.",
            x["turns"],
        )
    for who in (0, 1):
        for qt, key in a.rng.sample(P.NEVER_SAID, 2):
            a.add(
                "adversarial",
                f"never_said_{key}",
                who,
                qt.format(me=a.name(who)),
                "Not mentioned.",
                [],
            )


def _cap_adversarial(a: Asker, limit: int) -> None:
    """Near-miss questions are plentiful; keep a balanced sample of them."""
    third = [q for q in a.out if q["kind"].startswith("third_party")]
    if len(third) <= limit:
        return
    keep = {id(q) for q in a.rng.sample(third, limit)}
    a.out = [q for q in a.out if not q["kind"].startswith("third_party") or id(q) in keep]
    for i, q in enumerate(a.out):
        q["id"] = f"{a.d.cid}-q{i + 1:03d}"


def build_questions(d: Dialogue) -> list[V]:
    a = Asker(d)
    for fn in (single_hop, multi_hop, temporal, open_domain, adversarial):
        fn(a)
    _cap_adversarial(a, 14)
    return a.out


# ---------------------------------------------------------------- ground-truth facts
def build_facts(d: Dialogue) -> list[V]:
    out: list[V] = []
    for who, _key, kind, fact in _facts(d):
        item = {
            "subject": d.people[who].name,
            "key": kind,
            "value": answer_of(kind, fact["value"]),
            "type": P.FACT_TYPES[kind],
            "stated": fact["stated"],
            "restated": fact["restated"],
            "changed": [
                {"value": answer_of(kind, c["value"]), "turns": c["turns"]} for c in fact["changed"]
            ],
        }
        if kind in ("home_city", "hobby", "fav_food", "diet") and fact["value"].get("zh"):
            item["value_zh"] = fact["value"]["zh"]  # what a Chinese turn calls it
        if fact.get("added"):
            item["added"] = [
                {"value": answer_of(kind, x["value"]), "turns": x["turns"]} for x in fact["added"]
            ]
        out.append(item)
    for c in d.chains:
        rel = c["rel"].replace(" ", "_")
        name = d.people[c["who"]].name
        out.append({"subject": name, "key": f"{rel}_name", "value": c["p"], "type": "attribute",
                    "stated": c["intro"], "restated": [], "changed": []})  # fmt: skip
        if c["detail"]:
            out.append({"subject": c["p"], "relation_of": name, "key": "job", "value": c["x"]["title"],
                        "type": "attribute", "stated": c["detail"], "restated": [], "changed": []})  # fmt: skip
    for p in d.passing:
        out.append({"subject": d.people[p["who"]].name, "key": p["key"], "value": p["x"], "type": "passing",
                    "passing": True, "stated": p["turns"], "restated": [], "changed": []})  # fmt: skip
    out += _distractor_facts(d)
    out += X.facts(d, [x for _, x in sorted(d.extras.items()) if "turns" in x])
    return out


def _session(tid: str) -> str:
    return tid.split(":")[0]


def _distractor_facts(d: Dialogue) -> list[V]:
    """What the near-miss mentions (generate.ep_distract) really say. Most are about someone else;
    "I'm not a huge fan of X" is the speaker's own dislike — a stable preference, restated when said
    again in a later session (seed 000 §3.3: stated likes and dislikes are what to remember);
    "I tried X once … and hated it" is one past experience; "My cousin P …" names a cousin."""
    out: list[V] = []
    own: dict[tuple[int, str, str], V] = {}

    def stable(who: int, key: str, value: str, type_: str, turns: list[str]) -> None:
        f = own.get((who, key, value))
        if f is None:
            own[(who, key, value)] = f = {"subject": d.people[who].name, "key": key, "value": value,
                                          "type": type_, "stated": list(turns), "restated": [], "changed": []}  # fmt: skip
            out.append(f)
        elif _session(turns[0]) == _session(f["stated"][0]):
            f["stated"] += turns
        else:
            f["restated"] += turns

    for x in d.distractors:
        speaker = d.people[x["who"]].name
        value = str(x["x"].get(_primary(x["kind"]), ""))
        if x["text"].startswith("I'm not a huge fan of"):
            stable(x["who"], "dislike_food", value, "preference", x["turns"])
            continue
        if x["text"].startswith("I tried"):
            out.append({"subject": speaker, "mentioned_by": speaker, "key": x["kind"], "value": value,
                        "type": "past", "stated": x["turns"], "restated": [], "changed": []})  # fmt: skip
            continue
        if x["text"].startswith("My cousin {p}"):
            stable(x["who"], "cousin_name", x["p"], "attribute", x["turns"])
        subject = x["p"] if "{p}" in x["text"] else "(someone else)"
        out.append({"subject": subject, "mentioned_by": speaker, "key": x["kind"], "value": value,
                    "type": "third_party", "stated": x["turns"], "restated": [], "changed": []})  # fmt: skip
    return out


def _primary(kind: str) -> str:
    return P.PRIMARY[kind]
