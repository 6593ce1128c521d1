"""A fact's slot: who or what it is about (the subject, resolved within the namespace), the
attribute it sets, and the value — in English and Chinese, one vocabulary. "Alice moved to
Hamburg last month" and "用户已经搬到深圳了" in ``user/alice`` both set ``user / residence``;
"Bob has two kids" sets ``bob / count:child`` = 2, "Bob has two dogs" ``bob / count:dog``.

Precision over recall: a text that sets two different slots, or whose subject cannot be told,
has no slot (it is kept as a plain note, deduplicated by similarity as before)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from gateway.core.truth import vocabulary as vocab

#: words that say the fact is an update of an earlier one (they strengthen a supersede)
_UPDATE_CUES = re.compile(
    r"\b(?:now|no longer|any ?more|switched|moved|relocated|changed|new|since|these days|"
    r"recently|just|started|became|has become|instead|correction|actually|I meant|"
    r"from now on|not any more)\b|现在|已经|不再|换成|改成|换了|搬|新的|最近|开始|其实|更正|改为",
    re.I,
)
_NEGATION = re.compile(
    r"\b(?:not|no longer|never|doesn't|does not|don't|do not|isn't|is not|can't|cannot|"
    r"won't|didn't|stopped)\b|不再|不|没有|没|别",
    re.I,
)

_EN_SUBJECT = r"(?P<s>the user|user|用户|I|he|she|(?-i:[A-Z][\w-]+(?:\s[A-Z][\w-]+)?))"
_EN_ADVERBS = (
    r"(?P<adv>(?:\s+(?:now|currently|still|also|recently|just|already|finally|officially|"
    r"actually|no longer|again|since|has|have|had|never|does not|doesn't|do not|don't|is not|isn't|"
    r"can't|cannot|has not|hasn't|since then))*)"
)
_ZH_SUBJECT = r"(?P<s>用户|我|他|她|[A-Za-z][A-Za-z-]*(?:\s[A-Z][A-Za-z-]*)?|(?!用户|我|他|她)[\u4e00-\u9fff]{1,3}?)"
_ZH_ADVERBS = (
    r"(?P<adv>(?:现在|目前|已经|还|也|刚|刚刚|最近|一直|终于|又|都|仍然|不再|从此|如今|"
    r"去年|今年|前年|上个月|这个月|上周|上个星期|昨天|前几天|年初|年底|月初|月底)*)"
)
#: a value: words up to a boundary (punctuation, a clause, a time phrase)
_EN_VALUE = r"(?P<v>(?:[^,.;:!?()（）]|\.(?=\w)){1,60}?)"
_EN_END = (
    r"(?=\s*(?:$|[,.;:!?()（）]|\s(?:now|since|last|next|this|these|for|because|as of|with|and|"
    r"but|from|starting|until|again|anymore|any more|there|instead|too|in \d{4}|in (?:january|"
    r"february|march|april|may|june|july|august|september|october|november|december))\b))"
)
_ZH_VALUE = r"(?P<v>[^，。,.;；！!？?、（）()了的]{1,12}?)"
_ZH_END = r"(?=$|[，。,.;；！!？?、（）()]|了|的|去|住|工作|上班|啦|呢|吧|啊)"

_NUM = r"(?P<n>\d+|no|zero|a|an|one|two|three|four|five|six|seven|eight|nine|ten)"
_ZH_NUM = r"(?P<n>\d+|[零一两二三四五六七八九十])"


def _en(pattern: str) -> re.Pattern[str]:
    return re.compile(
        pattern.replace("{S}", _EN_SUBJECT)
        .replace("{ADV}", _EN_ADVERBS)
        .replace("{V}", _EN_VALUE + _EN_END),
        re.I,
    )


def _zh(pattern: str) -> re.Pattern[str]:
    return re.compile(
        pattern.replace("{S}", _ZH_SUBJECT)
        .replace("{ADV}", _ZH_ADVERBS)
        .replace("{V}", _ZH_VALUE + _ZH_END)
    )


_POSSESSED_EN = "|".join(
    sorted((re.escape(k) for k in vocab.POSSESSED if k.isascii()), key=len, reverse=True)
)
_POSSESSED_ZH = "|".join(
    sorted((re.escape(k) for k in vocab.POSSESSED if not k.isascii()), key=len, reverse=True)
)
_VEHICLE_EN = "|".join(
    sorted((re.escape(k) for k in vocab.VEHICLES if k.isascii()), key=len, reverse=True)
)
_VEHICLE_ZH = "|".join(
    sorted((re.escape(k) for k in vocab.VEHICLES if not k.isascii()), key=len, reverse=True)
)
_ROLE_EN = "|".join(sorted((re.escape(k) for k in vocab.ROLES), key=len, reverse=True))
_COUNTED_EN = "|".join(sorted((k for k in vocab.COUNTABLE if k.isascii()), key=len, reverse=True))
_COUNTED_ZH = "|".join(
    sorted((k for k in vocab.COUNTABLE if not k.isascii()), key=len, reverse=True)
)

#: (attribute, pattern); an attribute ending in ":" takes its object from the match (``o``)
_RULES: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "count:",
        _en(
            r"^{S}{ADV}\s+(?:has|have|has got|'s got|owns|is raising)\s+"
            + _NUM
            + r"\s+(?:(?:young|little|grown|adult|small)\s+)?(?P<o>"
            + _COUNTED_EN
            + r")\b"
        ),
    ),
    (
        "team",
        _en(
            r"^{S}{ADV}\s+(?:moved|switched|transferred|was moved|has moved|joined)\s+"
            r"(?:over\s+)?(?:to\s+)?the\s+(?P<v>[\w&-]+(?:\s[\w&-]+)?)\s+team\b"
        ),
    ),
    (
        "residence",
        _en(
            r"^{S}{ADV}\s+(?:lives?|is living|has been living|'s living|resides|"
            r"is based|'s based|is settled|settled|has settled)\s+(?:now\s+)?in\s+{V}"
        ),
    ),
    (
        "residence",
        _en(
            r"^{S}{ADV}\s+(?:moved|relocated|has moved|has relocated|'s moved|moved back|"
            r"made the move|has made the move|moved house)\s+"
            r"(?:(?:back|over|house)\s+)?(?:from\s+[^,.;]{1,40}?\s+)?to\s+{V}"
        ),
    ),
    ("residence", _en(r"^home for {S}\s+is\s+(?:now\s+)?(?:in\s+)?{V}")),
    ("role", _en(r"^{S}{ADV}\s+(?:works|work|is working|has been working)\s+as\s+(?:an?\s+)?{V}")),
    (
        "role",
        _en(
            r"^{S}{ADV}\s+(?:is|became|has become|retrained as|trained as|qualified as)\s+"
            r"(?:now\s+)?(?:an?\s+)?(?:(?:qualified|certified|full-time|part-time|senior|junior)\s+)?"
            r"(?P<v>" + _ROLE_EN + r")\b"
        ),
    ),
    (
        "employer",
        _en(
            r"^{S}{ADV}\s+(?:works|work|is working|has been working|started working|"
            r"works full[- ]time)\s+(?:at|for)\s+{V}"
        ),
    ),
    (
        "employer",
        _en(
            r"^{S}{ADV}\s+(?:joined|got a job at|took a job at|is employed (?:at|by)|"
            r"took a (?:position|role|post) (?:at|with)|accepted (?:a|an) (?:offer|job) (?:from|at)|"
            r"started (?:a new job )?at)\s+{V}"
        ),
    ),
    ("manager", _en(r"^{S}{ADV}\s+(?:reports|reported) to\s+{V}")),
    (
        "manager",
        _en(
            r"^(?P<v>(?-i:[A-Z][\w-]+)(?:\s(?-i:[A-Z][\w-]+))?)\s+(?:became|is now|has become)\s+"
            + _EN_SUBJECT
            + r"'s\s+(?:new\s+)?(?:boss|manager|supervisor|line manager)\b"
        ),
    ),
    ("school", _en(r"^{S}{ADV}\s+(?:studies|is studying|studied) at\s+{V}")),
    (
        "partner",
        _en(
            r"^{S}{ADV}\s+(?:is married to|married|got married to|is dating|is engaged to|got engaged to)"
            r"\s+{V}"
        ),
    ),
    (
        "vehicle",
        _en(r"^{S}{ADV}\s+(?:drives|is driving)\s+(?:an?|the|her|his|their|my)\s+(?:new\s+)?{V}"),
    ),
    (
        "vehicle",
        _en(
            r"^{S}{ADV}\s+(?:bought|got|leased|traded (?:in )?(?:her|his|their|my|the) [\w -]{1,30}? for)"
            r"\s+(?:an?|the)\s+(?:new\s+|used\s+|second-hand\s+|electric\s+)?"
            r"(?P<v>(?:" + _VEHICLE_EN + r")(?:\s+(?:model\s+)?[\w-]{1,12})?)" + _EN_END
        ),
    ),
    (
        "allergic:",
        _en(
            r"^{S}{ADV}\s+(?:is|are|'s|has been|was)?\s*(?:not\s+|no longer\s+)?"
            r"(?:severely\s+|very\s+|mildly\s+)?allergic to\s+(?P<o>[^,.;:!?()]{1,40}?)" + _EN_END
        ),
    ),
    (
        "diet",
        _en(
            r"^{S}{ADV}\s+(?:is|'s|has become|became|went|has gone|is now)\s+"
            r"(?:(?:a|an|fully|strictly|no longer|not)\s+)*"
            r"(?P<v>vegetarian|vegan|pescatarian|keto)\b"
        ),
    ),
    (
        "eats:",
        _en(
            r"^{S}{ADV}\s+(?:eat|eats|drink|drinks|avoid|avoids|touch|touches|"
            r"started eating|started drinking|stopped eating|stopped drinking|gave up|"
            r"has given up|cut out)\s+(?P<o>[^,.;:!?()（）]{1,40}?)" + _EN_END
        ),
    ),
    (
        "likes:",
        _en(
            r"^{S}{ADV}\s+(?:like|likes|love|loves|enjoy|enjoys|adore|adores|dislike|"
            r"dislikes|hate|hates|can't stand|is into|is a fan of|is fond of)\s+"
            r"(?P<o>[^,.;:!?()（）]{1,40}?)" + _EN_END
        ),
    ),
    (
        "speaks:",
        _en(r"^{S}{ADV}\s+(?:speaks?|is fluent in|is learning)\s+(?P<o>[A-Z][a-z]+)" + _EN_END),
    ),
    (
        "plays:",
        _en(r"^{S}{ADV}\s+(?:plays?|is playing)\s+(?:the\s+)?(?P<o>[a-z][a-z ]{1,20}?)" + _EN_END),
    ),
    (
        "favourite:",
        _en(
            r"^{S}'s\s+(?:new\s+|current\s+|all-time\s+)?favou?rite\s+"
            r"(?P<o>[a-z]+(?:\s[a-z]+)?)\s+(?:is|are)\s+(?:now\s+|still\s+)?{V}"
        ),
    ),
    (
        "possessed",
        _en(
            r"^{S}'s\s+(?:new\s+|current\s+)?(?P<o>"
            + _POSSESSED_EN
            + r")\s+(?:is|are|has changed to|changed to|is now|moved to|was moved to|has moved to|"
            r"got moved to|was changed to|is moving to)\s+(?:now\s+|still\s+)?"
            r"(?:on\s+|at\s+|in\s+)?{V}"
        ),
    ),
    (
        "name",
        _en(
            r"^{S}{ADV}\s+(?:goes by|prefers to be called|is called|wants to be called)\s+"
            r"{V}"
        ),
    ),
    ("age", _en(r"^{S}{ADV}\s+(?:is|turned|'s)\s+(?P<v>\d{1,3})(?:\s+years?\s+old)?\b")),
    (
        "age",
        _en(
            r"^{S}{ADV}\s+(?:had|celebrated)\s+(?:her|his|their|my)\s+(?P<v>\d{1,3})"
            r"(?:st|nd|rd|th)\s+birthday\b"
        ),
    ),
    (
        "phone",
        _en(
            r"^{S}{ADV}\s+(?:got|has|have)\s+a\s+new\s+(?:phone\s+|mobile\s+|cell\s+)?number"
            r"[:,]?\s*(?:(?:it's|it is|which is)\s+)?(?P<v>\+?\d[\d ().-]{3,20}\d)"
        ),
    ),
    (
        "email",
        _en(
            r"^(?:please\s+|you can\s+)?(?:reach|contact|email|e-mail|write to)\s+{S}\s+at\s+"
            r"(?P<v>[\w.+-]+@[\w-]+(?:\.[\w-]+)+)"
        ),
    ),
    (
        "name",
        _en(
            r"^(?:please\s+)?(?:call|address)\s+(?P<s>the user|me|him|her|(?-i:[A-Z][\w-]+))\s+"
            r"(?P<v>(?-i:[A-Z][\w-]+))\b"
        ),
    ),
    # Chinese
    (
        "count:",
        _zh(
            r"^{S}(?:家里|家)?{ADV}(?:有|养了|养着|养|生了)"
            + _ZH_NUM
            + r"(?:个|只|条|辆|台|套|位)(?P<o>"
            + _COUNTED_ZH
            + r")"
        ),
    ),
    ("role", _zh(r"^{S}{ADV}在[^，。,]{1,12}?(?:做|当|担任)(?:一名|一个|一位)?{V}")),
    (
        "residence",
        _zh(
            r"^{S}{ADV}(?:住在|住|居住在|定居在|定居|生活在|搬到了|搬到|搬去了|搬去|"
            r"搬家到|迁到|搬回)了?{V}"
        ),
    ),
    ("employer", _zh(r"^{S}{ADV}(?:在|去)(?P<v>[^，。,.;；！!？?、]{1,12}?)(?:工作|上班|任职)")),
    (
        "employer",
        _zh(r"^{S}{ADV}(?:入职了|入职|加入了|加入|跳槽到了|跳槽到|跳槽去了|跳槽去)了?{V}"),
    ),
    (
        "role",
        _zh(
            r"^{S}{ADV}(?:转行)?(?:是|当了|当|成为了|成为|成了|做了|做)(?:一名|一个|一位)?"
            r"(?P<v>护士|医生|老师|教师|软件工程师|工程师|程序员|设计师|律师|会计师|会计|产品经理|"
            r"学生|记者|厨师|研究员|销售|药剂师|数据科学家)"
        ),
    ),
    ("manager", _zh(r"^{S}{ADV}(?:向|归)(?P<v>[^，。,]{1,8}?)汇报")),
    (
        "vehicle",
        _zh(
            r"^{S}{ADV}(?:开着|开的是|开|买了|换了|换成了|新买了)(?:一辆|一台|辆)?(?:新的?)?"
            r"(?P<v>" + _VEHICLE_ZH + r"|(?i:" + _VEHICLE_EN + r"))"
        ),
    ),
    ("allergic:", _zh(r"^{S}{ADV}(?:不)?对(?P<o>[^，。,]{1,10}?)过敏")),
    ("diet", _zh(r"^{S}{ADV}(?:开始)?(?P<v>吃素|纯素)")),
    (
        "eats:",
        _zh(
            r"^{S}{ADV}(?:不吃|不喝|不能吃|不能喝|忌口|戒了|开始吃|开始喝|又吃|又喝|能吃)"
            r"(?P<o>[^，。,.;；！!？?、（）()了]{1,8})"
        ),
    ),
    ("favourite:", _zh(r"^{S}(?:现在)?最喜欢的(?P<o>[\u4e00-\u9fff]{1,4}?)(?:现在)?是{V}")),
    (
        "likes:",
        _zh(
            r"^{S}{ADV}(?:不喜欢|不爱|讨厌|喜欢|热爱|爱上了|爱)(?!的)(?P<o>[^，。,.;；！!？?、（）()了]{1,8})"
        ),
    ),
    (
        "speaks:",
        _zh(r"^{S}{ADV}(?:会说|会讲|说|在学)(?P<o>[\u4e00-\u9fff]{1,4}?语|中文|英文|普通话)"),
    ),
    (
        "plays:",
        _zh(
            r"^{S}{ADV}(?:会弹|弹|会打|打|踢)(?P<o>钢琴|吉他|小提琴|网球|篮球|羽毛球|足球|"
            r"乒乓球|高尔夫)"
        ),
    ),
    (
        "possessed",
        _zh(
            r"^{S}(?:现在|目前)?的(?:新)?(?P<o>"
            + _POSSESSED_ZH
            + r")(?:现在|已经|目前)*(?P<vb>是|在|换成了|换成|改成了|改成|为|搬到了|搬到|搬去了|搬去)"
            r"{V}"
        ),
    ),
    ("name", _zh(r"^{S}{ADV}(?:叫|名叫)(?P<v>[^，。,.;；！!？?、（）()]{1,10})")),
    ("age", _zh(r"^{S}{ADV}(?:今年)?(?P<v>\d{1,3})岁")),
)

#: sentence ends ("." inside "alice@new.example" or "555.0199" is not one)
_SENTENCE_END = re.compile(r"[.;!?](?=\s|$)|[。；！？\n]")
#: a formed note in the user's words ("The user: my manager is Tom"): the user's attribute
_NOTE = re.compile(r"^(?:the user|用户)\s*[:：]\s*", re.I)
_MY = re.compile(r"^my\s+", re.I)
#: a second predicate joined to the first: the text states more than one fact
_CONJOINED = re.compile(
    r"\b(?:and|but|also)\s+(?:now\s+|also\s+|still\s+)?(?:works|lives|moved|has|is|likes|"
    r"loves|drives|speaks|plays|joined|reports|eats|drinks|owns)\b|[，,]\s*(?:还|也|并且|而且)(?!是)",
    re.I,
)
#: words before the statement itself: "Sorry, I meant …", "Correction: …", "更正：…"
_PREAMBLE = re.compile(
    r"^(?:(?:sorry|correction|update|actually|note|fyi|oops)\b[,:：]?\s*)*"
    r"(?:I meant\s*(?:that\s*)?[,:]?\s*)?(?:更正[:：]?|其实|注意[:：]?)?"
    r"(?:(?:these days|nowadays|now|currently|recently|lately|since then|as of now)\b,?\s*)?",
    re.I,
)
_ZH_CLAUSES = re.compile(r"[^，,.;!?。；！？\n]+")
_FIRST_PERSON = {"i", "me", "我", "the user", "user", "用户"}
_PRONOUNS = {"he", "she", "him", "her", "他", "她"}
#: attributes whose value is a person: "用户的丈夫在腾讯" says where he is, not who he is
_PERSON_ATTRIBUTES = {"partner", "manager", "doctor"}
#: the first name a text mentions: whom a later "he"/"she" means when no slot named anyone
_NAME = re.compile(r"\b(?-i:[A-Z][a-z][\w-]*)(?:'s)?\b")
_NOT_NAMES = {
    "I",
    "The",
    "A",
    "An",
    "My",
    "Our",
    "His",
    "Her",
    "Their",
    "Sorry",
    "Actually",
    "Correction",
    "Update",
    "Note",
    "Please",
    "Now",
    "These",
    "Since",
    "So",
    "And",
    "But",
}
#: the subject a joined predicate shares: a name, "I", "the user", "he"/"she" (not "X's …")
_LEADING_SUBJECT = re.compile(
    r"^((?-i:[A-Z][\w-]+)(?:\s(?-i:[A-Z][\w-]+))?|I|the user|he|she)\s", re.I
)
UNCLEAR = "?"
#: "I'm"/"I am" read as "I is", "I've" as "I have": one verb form for the rules
_FIRST_PERSON_VERB = re.compile(r"^I(?:'m|’m| am)\b")
_FIRST_PERSON_HAVE = re.compile(r"^I(?:'ve|’ve)\b")
_ARTICLE = re.compile(r"^(?:a|an|the|my|his|her|their|our|some)\s+", re.I)
_TRAILING = re.compile(
    r"\s+(?:now|these days|nowadays|at the moment|anymore|any more|too|as well|lately|"
    r"recently|there|city|instead)$",
    re.I,
)
#: a negation after the verb: "is no longer vegetarian", "is not allergic to", "不对花生过敏"
_NEGATED_STATE = re.compile(
    r"\b(?:is|are|'s)\s+(?:not|no longer)\s+(?:an?\s+)?(?:severely\s+|very\s+)?"
    r"(?:allergic|vegetarian|vegan|pescatarian)|不对|不再",
    re.I,
)
_POLAR = ("eats:", "likes:", "allergic:", "speaks:", "plays:")
_NEGATIVE_VERBS = re.compile(
    r"\b(?:avoids?|dislikes?|hates?|can't stand|stopped|gave up|has given up|cut out|quit)\b|"
    r"不吃|不喝|不能|忌口|戒了|不喜欢|不爱|讨厌|^不",
    re.I,
)


@dataclass(frozen=True, slots=True)
class Slot:
    """What a fact sets: ``subject`` ("user" for the namespace's own user), ``attribute``
    (``residence``, ``count:child``, ``eats:cilantro``…) and ``value`` (one name per value,
    whatever the language); ``cue``: the text says it is an update."""

    subject: str
    attribute: str
    value: str
    cue: bool = False

    @property
    def key(self) -> str:
        """The fact key: one active fact per key and namespace. A single-valued attribute's
        key leaves the value out (a new value supersedes); a multi-valued one keeps it."""
        base = f"slot:{self.subject}:{self.attribute}"
        return base if single_valued(self.attribute) else f"{base}={self.value}"

    @property
    def label(self) -> str:
        return f"{self.subject} / {self.attribute}"


def single_valued(attribute: str) -> bool:
    return attribute in vocab.SINGLE_VALUED or attribute.startswith(vocab.PER_OBJECT)


def canonical(value: str) -> str:
    """The one name of a value: case, articles, trailing filler and language do not count."""
    v = " ".join(value.strip().lower().split()).strip(" .,!?;:。，！？；：\"'“”")
    v = _ARTICLE.sub("", v)
    v = _TRAILING.sub("", v).strip()
    if v in vocab.VALUE_NAMES:
        return vocab.VALUE_NAMES[v]
    if v.endswith("s") and len(v) > 3 and v[:-1] in vocab.VALUE_NAMES.values():
        return v[:-1]
    return vocab.VALUE_NAMES.get(v.rstrip("s"), v) if v.endswith("s") and len(v) > 3 else v


def parse(text: str, namespace: str = "") -> Slot | None:
    """The slot ``text`` sets, or None (no rule matches, the subject is unclear, or the text
    sets two different slots). ``namespace``'s user (``user/alice``) is the subject "user"
    whether named ("Alice"), in the first person or as "用户"."""
    found: dict[str, Slot] = {}
    last_named = ""
    clauses = _clauses(text)
    if clauses is None:
        return None  # "lives in Berlin, 还在SAP工作": two facts in one memory
    mentioned = _mentioned(text)
    for clause in clauses:
        slot = _parse_clause(clause, namespace, last_named or mentioned)
        if slot is None:
            continue
        last_named = slot.subject
        found.setdefault(slot.attribute, slot)
        if len(found) > 1:
            return None
    if not found:
        return None
    slot = next(iter(found.values()))
    cue = bool(_UPDATE_CUES.search(text))
    return Slot(slot.subject, slot.attribute, slot.value, cue)


def _clauses(text: str) -> list[str] | None:
    """Sentences, and for Chinese their comma-separated clauses; a parenthesised aside (a
    translation: "Alice does not eat cilantro (不吃香菜)") is left out. A second predicate
    joined to the first ("Alice retrained and is a paramedic") is a clause of its own with the
    same subject; None when that subject cannot be told ("Alice's sister … and is …") or the
    text is Chinese (then each would need its own subject)."""
    text = re.sub(r"\([^)]*\)|（[^）]*）", " ", text)
    out: list[str] = []
    for sentence in _SENTENCE_END.split(text):
        sentence = sentence.strip()
        if re.search(r"[\u4e00-\u9fff]", sentence):
            if _CONJOINED.search(sentence):
                return None
            out.extend(c.strip() for c in _ZH_CLAUSES.findall(sentence) if c.strip())
            continue
        for part in re.split(
            r";|, and |, but | but |, so |,?\s+and\s+(?=(?:I|he|she)(?:'m|'ve)?\s)|"
            r",\s+(?=(?:I|he|she)(?:'m|'ve)?\s)",
            sentence,
        ):
            part = part.strip()
            joined = _CONJOINED.search(part)
            if joined is None:
                out.append(part) if part else None
                continue
            subject = _LEADING_SUBJECT.match(_PREAMBLE.sub("", part))
            if subject is None:
                return None
            out.append(part[: joined.start()].strip())
            rest = part[joined.start() :]
            rest = re.sub(r"^(?:and|but|also)\s+", "", rest, flags=re.I)
            out.append(f"{subject.group(1)} {rest}")
    return [c for c in out if c]


def _mentioned(text: str) -> str:
    """Whom "he"/"she" means when no earlier clause named anyone: the one person the text names
    (not as an owner: "Bob's sister … she" is not Bob); "" when it names none, ``UNCLEAR`` when
    it names several or only an owner."""
    names = {m.group(0) for m in _NAME.finditer(text) if m.group(0).split("'")[0] not in _NOT_NAMES}
    if not names:
        return ""
    name = names.pop()
    return UNCLEAR if names or name.endswith("'s") else name.lower()


def _parse_clause(clause: str, namespace: str, last_named: str) -> Slot | None:
    clause = _PREAMBLE.sub("", clause.strip())
    clause = _MY.sub("The user's ", _NOTE.sub("", clause))
    clause = _FIRST_PERSON_HAVE.sub("I have", _FIRST_PERSON_VERB.sub("I is", clause))
    for attribute, pattern in _RULES:
        m = pattern.search(clause)
        if m is None:
            continue
        subject = _subject(m.group("s"), namespace, last_named)
        if not subject:
            continue
        groups = m.groupdict()
        adverbs = groups.get("adv") or ""
        negated = bool(_NEGATION.search(adverbs)) or bool(_NEGATED_STATE.search(clause))
        slot = _build(attribute, groups, negated, clause)
        if slot is not None:
            return Slot(subject, *slot)
    return None


def _build(
    attribute: str, groups: dict[str, str | None], negated: bool, clause: str
) -> tuple[str, str] | None:
    obj = groups.get("o") or ""
    value = groups.get("v") or ""
    if attribute == "count:":
        noun = vocab.COUNTABLE.get(obj.lower())
        n = groups.get("n") or ""
        count = int(n) if n.isdigit() else vocab.NUMBERS.get(n.lower())
        if noun is None or count is None:
            return None
        return f"count:{noun}", str(count)
    if attribute in _POLAR:
        name = canonical(obj)
        if not name or len(name.split()) > 4:
            return None
        negative = negated or bool(_NEGATIVE_VERBS.search(clause))
        if attribute == "eats:" and re.search(r"\b(?:started|开始|又)", clause):
            negative = negated and not re.search(r"\bstarted\b|开始|又", clause)
        return f"{attribute}{name}", "no" if negative else "yes"
    if attribute == "favourite:":
        thing = canonical(obj)
        return (f"favourite:{thing}", canonical(value)) if thing and value else None
    if attribute == "possessed":
        attribute = vocab.POSSESSED.get(obj.lower(), vocab.POSSESSED.get(obj, ""))
        if not attribute or (attribute in _PERSON_ATTRIBUTES and groups.get("vb") == "在"):
            return None
    if attribute == "diet":
        value = value.replace("吃素", "素")
    value = canonical(value)
    if not value or len(value) > 60:
        return None
    if negated and attribute in vocab.SINGLE_VALUED:
        value = f"not {value}"
    return attribute, value


def _subject(said: str, namespace: str, last_named: str) -> str:
    """Who a clause is about: "user" for the namespace's user or the first person; a pronoun
    is the last subject named in the same text (else the namespace's user); a name is itself."""
    word = said.strip()
    low = word.lower()
    if low in _FIRST_PERSON:
        return "user"
    if low in _PRONOUNS:
        if last_named == UNCLEAR:
            return ""
        if last_named:
            return _subject(last_named, namespace, "") if last_named not in _PRONOUNS else ""
        return "user" if namespace.startswith("user/") else ""
    if re.fullmatch(r"[\u4e00-\u9fff]+", word) and len(word) == 1:
        return ""  # a lone CJK character before a verb is not a name
    owner = namespace.split("/", 1)[1].lower() if namespace.startswith("user/") else ""
    first = low.split()[0] if low.split() else ""
    if owner and (
        low == owner
        or first == owner
        or owner.startswith(first + "_")
        or owner.startswith(first + "-")
        or owner.startswith(first + ".")
    ):
        return "user"
    return re.sub(r"\s+", "_", low)
