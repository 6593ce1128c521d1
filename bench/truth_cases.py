"""The cases of the knowledge-update benchmark (``bench/truth_eval.py``), generated from a seed:
English and Chinese; single updates, chains of three, corrections, updates in the other
language, restatements in the other language (one fact), look-alikes that must both stay (other
person, other object, multi-valued attributes, negation of another attribute, another
attribute) and as-of questions. Each case lives in a namespace of its own.

A case: ``writes`` (text, day offset or None for "now"), ``question``, and what must hold:
``current`` (the index of the write that must be current), ``stale`` (writes that must no longer
be current), ``both`` (look-alikes: every write stays its own active fact), ``same`` (one fact),
``as_of`` ((day, index of the write true then))."""

from __future__ import annotations

import random
from dataclasses import dataclass, field

NAMES = [
    "Alice",
    "Bob",
    "Carol",
    "Dan",
    "Erin",
    "Frank",
    "Grace",
    "Hiro",
    "Ines",
    "Jun",
    "Maya",
    "Omar",
    "Priya",
    "Sven",
    "Tara",
    "Lukas",
]
ZH_NAMES = ["小王", "李娜", "张伟", "老陈", "王芳", "刘洋"]
CITIES = [
    ("Berlin", "柏林"),
    ("Hamburg", "汉堡"),
    ("Munich", "慕尼黑"),
    ("Shanghai", "上海"),
    ("Shenzhen", "深圳"),
    ("Beijing", "北京"),
    ("London", "伦敦"),
    ("Paris", "巴黎"),
    ("Tokyo", "东京"),
    ("Singapore", "新加坡"),
    ("Hangzhou", "杭州"),
    ("Lisbon", "里斯本"),
]
COMPANIES = [
    "Siemens",
    "SAP",
    "Bosch",
    "Tencent",
    "Alibaba",
    "Spotify",
    "Zalando",
    "Huawei",
    "Stripe",
    "Shopify",
]
MANAGERS = ["Tom", "Priya", "Wang Lei", "Sara", "Mehmet", "Julia", "Ken", "Lena"]
COLOURS = [
    ("green", "绿色"),
    ("blue", "蓝色"),
    ("red", "红色"),
    ("purple", "紫色"),
    ("yellow", "黄色"),
    ("black", "黑色"),
]
CARS = ["Tesla", "Volvo", "Toyota", "BMW", "Golf", "Prius"]
NUMS = [("two", "两", 2), ("three", "三", 3), ("four", "四", 4)]
HOBBIES = [
    ("jazz", "爵士乐"),
    ("hiking", "徒步"),
    ("tennis", "网球"),
    ("sushi", "寿司"),
    ("coffee", "咖啡"),
    ("chess", "国际象棋"),
]
JOBS = [
    ("nurse", "护士"),
    ("teacher", "老师"),
    ("software engineer", "程序员"),
    ("designer", "设计师"),
    ("lawyer", "律师"),
    ("accountant", "会计"),
]
QUESTION = {
    "residence": ("Where does {s} live?", "{s}住在哪里？"),
    "employer": ("Where does {s} work?", "{s}在哪里工作？"),
    "manager": ("Who is {s}'s manager?", "{s}的经理是谁？"),
    "kids": ("How many kids does {s} have?", "{s}有几个孩子？"),
    "colour": ("What is {s}'s favourite colour?", "{s}最喜欢什么颜色？"),
    "car": ("What car does {s} drive?", "{s}开什么车？"),
    "likes": ("Does {s} like {x}?", "{s}喜欢{x}吗？"),
    "diet": ("Is {s} vegetarian?", "{s}吃素吗？"),
    "role": ("What does {s} do for a living?", "{s}是做什么工作的？"),
}


@dataclass
class Case:
    id: str
    kind: str
    lang: str
    writes: list[tuple[str, int | None]]
    question: str
    current: int | None = None
    stale: list[int] = field(default_factory=list)
    both: bool = False
    same: bool = False
    as_of: list[tuple[int, int]] = field(default_factory=list)
    user_ns: bool = False  # the subject is the namespace's own user ("the user"/"用户")
    #: said in dialogue instead of written: one user turn per session, each session ended
    #: (formation forms the facts); ``values``: (old, new) words the recall must (not) show
    sessions: list[str] = field(default_factory=list)
    values: tuple[str, str] = ("", "")


def _values(rng: random.Random, pool: list, n: int) -> list:  # type: ignore[type-arg]
    return rng.sample(pool, n)


def _en_update(attr: str, s: str, pr: str, a: str, b: str, rng: random.Random) -> tuple[str, str]:
    """An English first statement and an update of it."""
    first = {
        "residence": [
            f"{s} lives in {a}.",
            f"{s} is based in {a}.",
            f"{s} has been living in {a} for a few years.",
        ],
        "employer": [
            f"{s} works at {a}.",
            f"{s} works for {a} as an analyst.",
            f"{s} is employed by {a}.",
        ],
        "manager": [f"{s}'s manager is {a}.", f"{s} reports to {a}."],
        "colour": [f"{s}'s favourite colour is {a}.", f"{s}'s favorite color is {a}."],
        "car": [f"{s} drives a {a}.", f"{s} drives an old {a}."],
        "role": [f"{s} works as a {a}.", f"{s}'s job is {a}."],
    }[attr]
    update = {
        "residence": [
            f"{s} moved to {b} last month; {pr} lives there now.",
            f"{s} relocated to {b} in the spring.",
            f"{s} now lives in {b}.",
            f"{s} just moved to {b} for a new job.",
            f"{s} lives in {b} now.",
        ],
        "employer": [
            f"{s} joined {b} in March.",
            f"{s} now works at {b}.",
            f"{s} started a new job at {b}.",
            f"{s} works for {b} these days.",
        ],
        "manager": [
            f"{s}'s manager is now {b}.",
            f"{s} reports to {b} now.",
            f"{s}'s new manager is {b}.",
        ],
        "colour": [f"{s}'s favourite colour is now {b}.", f"{s}'s new favourite colour is {b}."],
        "car": [f"{s} now drives a {b}.", f"{s} bought a {b} and sold the old car."],
        "role": [f"{s} now works as a {b}.", f"{s} works as a {b} since the summer."],
    }[attr]
    return rng.choice(first), rng.choice(update)


def _zh_update(attr: str, s: str, a: str, b: str, rng: random.Random) -> tuple[str, str]:
    first = {
        "residence": [f"{s}住在{a}。", f"{s}目前住在{a}。", f"{s}一直住在{a}。"],
        "employer": [f"{s}在{a}工作。", f"{s}在{a}上班。"],
        "manager": [f"{s}的经理是{a}。", f"{s}的领导是{a}。"],
        "colour": [f"{s}最喜欢的颜色是{a}。"],
        "role": [f"{s}是一名{a}。", f"{s}在一家公司做{a}。"],
    }[attr]
    update = {
        "residence": [
            f"{s}已经搬到{b}了，现在住在{b}。",
            f"{s}上个月搬去了{b}。",
            f"{s}现在住在{b}。",
            f"{s}搬到{b}了。",
        ],
        "employer": [f"{s}跳槽到了{b}。", f"{s}现在在{b}上班。", f"{s}已经入职{b}了。"],
        "manager": [f"{s}的经理现在是{b}。", f"{s}的新经理是{b}。"],
        "colour": [f"{s}现在最喜欢的颜色是{b}。"],
        "role": [f"{s}现在是一名{b}。", f"{s}已经当了{b}。"],
    }[attr]
    return rng.choice(first), rng.choice(update)


def generate(seed: int = 7, per_kind: int = 0) -> list[Case]:  # noqa: C901 - one table
    """Every case, deterministic for ``seed``; ``per_kind`` > 0 keeps that many of each kind
    and language (the reduced set of the CI floor)."""
    rng = random.Random(seed)
    cases: list[Case] = []

    def add(case: Case) -> None:
        case.id = f"{case.kind}-{case.lang}-{len(cases)}"
        cases.append(case)

    pools = {
        "residence": CITIES,
        "employer": COMPANIES,
        "manager": MANAGERS,
        "colour": COLOURS,
        "car": CARS,
        "role": JOBS,
    }
    # single updates (English), with and without the time they state
    for i in range(60):
        attr = ["residence", "employer", "manager", "colour", "car", "role"][i % 6]
        s = rng.choice(NAMES)
        a, b = _values(rng, pools[attr], 2)
        a, b = (a[0] if isinstance(a, tuple) else a), (b[0] if isinstance(b, tuple) else b)
        first, update = _en_update(attr, s, rng.choice(["she", "he"]), a, b, rng)
        dated = i % 2 == 0
        add(
            Case(
                "",
                "update",
                "en",
                [(first, 0 if dated else None), (update, 30 if dated else None)],
                QUESTION[attr][0].format(s=s),
                current=1,
                stale=[0],
                as_of=[(10, 0), (40, 1)] if dated else [],
            )
        )
    # counts: "has two kids" -> "now has three kids"
    for i in range(16):
        s = rng.choice(NAMES)
        (a, za, _), (b, zb, _) = sorted(_values(rng, NUMS, 2), key=lambda x: x[2])
        if i % 2:
            writes = [(f"{s}有{za}个孩子。", 0), (f"{s}现在有{zb}个孩子了。", 30)]
            add(
                Case(
                    "",
                    "update",
                    "zh",
                    writes,
                    QUESTION["kids"][1].format(s=s),
                    1,
                    [0],
                    as_of=[(5, 0), (31, 1)],
                )
            )
        else:
            writes = [
                (f"{s} has {a} kids.", 0),
                (f"{s} now has {b} kids since the baby arrived.", 30),
            ]
            add(
                Case(
                    "",
                    "update",
                    "en",
                    writes,
                    QUESTION["kids"][0].format(s=s),
                    1,
                    [0],
                    as_of=[(5, 0), (31, 1)],
                )
            )
    # single updates (Chinese)
    for i in range(50):
        attr = ["residence", "employer", "manager", "colour", "role"][i % 5]
        s = rng.choice(ZH_NAMES + ["用户"])
        a, b = _values(rng, pools[attr], 2)
        a, b = (a[1] if isinstance(a, tuple) else a), (b[1] if isinstance(b, tuple) else b)
        first, update = _zh_update(attr, s, a, b, rng)
        dated = i % 2 == 1
        add(
            Case(
                "",
                "update",
                "zh",
                [(first, 0 if dated else None), (update, 30 if dated else None)],
                QUESTION[attr][1].format(s=s),
                current=1,
                stale=[0],
                user_ns=s == "用户",
                as_of=[(12, 0), (45, 1)] if dated else [],
            )
        )
    # chains of three updates
    for i in range(24):
        attr = ["residence", "employer", "manager"][i % 3]
        zh = i % 4 == 3
        s = rng.choice(ZH_NAMES if zh else NAMES)
        vals = _values(rng, pools[attr], 3)
        vals = [(v[1] if zh else v[0]) if isinstance(v, tuple) else v for v in vals]
        if zh:
            first, u1 = _zh_update(attr, s, vals[0], vals[1], rng)
            _, u2 = _zh_update(attr, s, vals[1], vals[2], rng)
        else:
            first, u1 = _en_update(attr, s, "she", vals[0], vals[1], rng)
            _, u2 = _en_update(attr, s, "she", vals[1], vals[2], rng)
        add(
            Case(
                "",
                "chain",
                "zh" if zh else "en",
                [(first, 0), (u1, 30), (u2, 60)],
                QUESTION[attr][1 if zh else 0].format(s=s),
                current=2,
                stale=[0, 1],
                as_of=[(15, 0), (45, 1), (70, 2)],
            )
        )
    # corrections
    for i in range(24):
        s = rng.choice(NAMES)
        zh = i % 3 == 2
        if zh:
            (_, a), (_, b) = _values(rng, CITIES, 2)
            writes = [(f"{s}住在{a}。", None), (f"更正：{s}住在{b}，不是{a}。", None)]
            q = QUESTION["residence"][1].format(s=s)
        elif i % 3 == 0:
            (a, _), (b, _) = _values(rng, CITIES, 2)
            writes = [
                (f"{s} lives in {a}.", None),
                (f"Sorry, I meant {s} lives in {b}, not {a}.", None),
            ]
            q = QUESTION["residence"][0].format(s=s)
        else:
            a, b = _values(rng, MANAGERS, 2)
            writes = [
                (f"{s}'s manager is {a}.", None),
                (f"Correction: {s}'s manager is {b}.", None),
            ]
            q = QUESTION["manager"][0].format(s=s)
        add(Case("", "correction", "zh" if zh else "en", writes, q, current=1, stale=[0]))
    # preferences that flip
    for i in range(20):
        s = rng.choice(NAMES)
        x, zx = rng.choice(HOBBIES)
        if i % 2:
            writes = [(f"{s}喜欢{zx}。", 0), (f"{s}不再喜欢{zx}了。", 30)]
            add(Case("", "update", "zh", writes, QUESTION["likes"][1].format(s=s, x=zx), 1, [0]))
        else:
            writes = [(f"{s} likes {x}.", 0), (f"{s} doesn't like {x} anymore.", 30)]
            add(Case("", "update", "en", writes, QUESTION["likes"][0].format(s=s, x=x), 1, [0]))
    for _ in range(8):
        s = rng.choice(NAMES)
        writes = [(f"{s} is vegetarian.", 0), (f"{s} is no longer vegetarian.", 30)]
        add(Case("", "update", "en", writes, QUESTION["diet"][0].format(s=s), 1, [0]))
    # an update in the other language (the user of the namespace)
    for i in range(20):
        (a, za), (b, zb) = _values(rng, CITIES, 2)
        if i % 2:
            writes = [("The user lives in " + a + ".", 0), (f"用户已经搬到{zb}了。", 30)]
            q = "用户住在哪里？"
        else:
            writes = [(f"用户住在{za}。", 0), (f"The user moved to {b} last month.", 30)]
            q = "Where does the user live?"
        add(
            Case(
                "",
                "cross-update",
                "mixed",
                writes,
                q,
                1,
                [0],
                user_ns=True,
                as_of=[(10, 0), (40, 1)],
            )
        )
    # one fact in two languages: merged
    same_pairs = [
        ("用户不吃香菜。", "The user does not eat cilantro."),
        ("用户住在{zc}。", "The user lives in {c}."),
        ("用户对花生过敏。", "The user is allergic to peanuts."),
        ("用户会说德语。", "The user speaks German."),
        ("用户最喜欢的颜色是{zk}。", "The user's favourite colour is {k}."),
        ("用户有{zn}个孩子。", "The user has {n} kids."),
        ("用户喜欢{zh}。", "The user likes {h}."),
        ("用户是一名{zj}。", "The user works as a {j}."),
    ]
    for i in range(24):
        zh_t, en_t = same_pairs[i % len(same_pairs)]
        (c, zc), (k, zk), (n, zn, _), (h, zh_), (j, zj) = (
            rng.choice(CITIES),
            rng.choice(COLOURS),
            rng.choice(NUMS),
            rng.choice(HOBBIES),
            rng.choice(JOBS),
        )
        fill = dict(c=c, zc=zc, k=k, zk=zk, n=n, zn=zn, h=h, zh=zh_, j=j, zj=zj)
        pair = [zh_t.format(**fill), en_t.format(**fill)]
        if i % 2:
            pair.reverse()
        add(
            Case(
                "",
                "same",
                "mixed",
                [(pair[0], None), (pair[1], None)],
                pair[1],
                same=True,
                user_ns=True,
            )
        )
    # updates said in dialogue, formed at the session's end
    for i in range(24):
        (a, za), (b, zb) = _values(rng, CITIES, 2)
        c1, c2 = _values(rng, COMPANIES, 2)
        said = [
            (
                "en",
                f"Remember: I live in {a}.",
                rng.choice(
                    [
                        f"Actually, I moved to {b} last month, I live there now.",
                        f"Sorry, I meant I live in {b}.",
                        f"Actually, I live in {b} now.",
                    ]
                ),
                "Where does the user live?",
                (a, b),
            ),
            (
                "en",
                f"Remember that I work at {c1}.",
                f"Actually, I work at {c2} now.",
                "Where does the user work?",
                (c1, c2),
            ),
            ("zh", f"记住：我住在{za}。", f"记住：我现在住在{zb}。", "用户住在哪里？", (za, zb)),
            (
                "zh",
                f"记住：我在{c1}工作。",
                f"记住：我现在在{c2}工作。",
                "用户在哪里工作？",
                (c1, c2),
            ),
        ][i % 4]
        lang, first, update, q, values = said
        add(
            Case("", "dialogue", lang, [], q, user_ns=True, sessions=[first, update], values=values)
        )
    # look-alikes that must both stay
    look = []
    for _ in range(12):
        s1, s2 = _values(rng, NAMES, 2)
        (a, _), (b, _) = _values(rng, CITIES, 2)
        look.append(("other-person", "en", [f"{s1} lives in {a}.", f"{s2} lives in {b}."]))
    for _ in range(6):
        s1, s2 = _values(rng, ZH_NAMES, 2)
        (_, a), (_, b) = _values(rng, CITIES, 2)
        look.append(("other-person", "zh", [f"{s1}住在{a}。", f"{s2}住在{b}。"]))
    objects = [
        ("kids", "dogs"),
        ("kids", "cats"),
        ("dogs", "cats"),
        ("sisters", "brothers"),
        ("cars", "bikes"),
    ]
    for _ in range(12):
        s = rng.choice(NAMES)
        o1, o2 = rng.choice(objects)
        n1, n2 = rng.choice(NUMS)[0], rng.choice(NUMS)[0]
        look.append(("other-object", "en", [f"{s} has {n1} {o1}.", f"{s} has {n2} {o2}."]))
    for _ in range(6):
        s = rng.choice(ZH_NAMES)
        look.append(("other-object", "zh", [f"{s}有两个孩子。", f"{s}养了两只猫。"]))
    langs = [("French", "法语"), ("German", "德语"), ("Spanish", "西班牙语"), ("Japanese", "日语")]
    for i in range(12):
        s = rng.choice(NAMES)
        (l1, z1), (l2, z2) = _values(rng, langs, 2)
        if i % 3 == 2:
            look.append(("multi-valued", "zh", [f"{s}会说{z1}。", f"{s}会说{z2}。"]))
        elif i % 3 == 1:
            look.append(
                (
                    "multi-valued",
                    "en",
                    [f"{s} is allergic to peanuts.", f"{s} is allergic to shellfish."],
                )
            )
        else:
            look.append(("multi-valued", "en", [f"{s} speaks {l1}.", f"{s} speaks {l2}."]))
    for i in range(12):
        s = rng.choice(NAMES)
        pairs = [
            (f"{s} doesn't eat meat.", f"{s} doesn't drink coffee."),
            (f"{s} likes jazz.", f"{s} doesn't like rock music."),
            (f"{s}不吃香菜。", f"{s}不吃辣。"),
        ]
        a, b = pairs[i % 3]
        look.append(("negation-other", "zh" if i % 3 == 2 else "en", [a, b]))
    for _ in range(12):
        s = rng.choice(NAMES)
        (a, _), (b, _) = _values(rng, CITIES, 2)
        c = rng.choice(COMPANIES)
        look.append(
            (
                "other-attribute",
                "en",
                rng.choice(
                    [
                        [f"{s} lives in {a}.", f"{s} works at {c}."],
                        [f"{s} lives in {a}.", f"{s}'s office is in {b}."],
                        [f"{s} lives in {a}.", f"{s} was born in {b}."],
                        [f"{s}'s manager is Tom.", f"{s}'s doctor is Dr. Weber."],
                    ]
                ),
            )
        )
    for kind, lang, texts in look:
        add(Case("", f"lookalike-{kind}", lang, [(t, None) for t in texts], texts[1], both=True))
    if per_kind:
        kept: dict[tuple[str, str], int] = {}
        out = []
        for case in cases:
            n = kept.get((case.kind, case.lang), 0)
            if n < per_kind:
                kept[(case.kind, case.lang)] = n + 1
                out.append(case)
        return out
    return cases
