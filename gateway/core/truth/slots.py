"""A fact's slot: who or what it is about (the subject, resolved within the namespace), the
attribute it sets, and the value — in English and Chinese, one vocabulary. "Alice moved to
Hamburg last month" and "用户已经搬到深圳了" in ``user/alice`` both set ``user / residence``;
"Bob has two kids" sets ``bob / count:child`` = 2, "Bob has two dogs" ``bob / count:dog``.

Precision over recall: a text that sets two different slots, or whose subject cannot be told,
has no slot (it is kept as a plain note, deduplicated by similarity as before)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from gateway.core.truth import values
from gateway.core.truth import vocabulary as vocab
from gateway.core.truth.slot_rules import RULES

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
    if v in values.VALUE_NAMES:
        return values.VALUE_NAMES[v]
    if v.endswith("s") and len(v) > 3 and v[:-1] in values.VALUE_NAMES.values():
        return v[:-1]
    return values.VALUE_NAMES.get(v.rstrip("s"), v) if v.endswith("s") and len(v) > 3 else v


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
    for attribute, pattern in RULES:
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
