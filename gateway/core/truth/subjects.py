"""Who or what a statement is about, read from its structure, not from a vocabulary of attributes:
the leading person (a name, "the user", or the speaker for "I"), and the thing of theirs it
names when it starts with a possessive ("Noah's brother", "Lukas's work laptop", "小周的妹妹",
"赵磊的自行车"). Two statements compete only when their subjects are the same: "Noah lives in
Leeds" and "Noah's brother lives in Bristol" never do, "Omar's team meeting is on Mondays" and
"Omar's team meeting was moved to Wednesday" do. "" when the start is not a subject this can
read (a pronoun other than I/we, a clause): such a statement competes with nothing."""

from __future__ import annotations

import re

from gateway.core.truth import cjk_names

USER = "@user"

_FIRST_PERSON = re.compile(
    r"^(?:i|i'm|i’m|i've|i’ve|i'd|i’d|i'll|i’ll|we|we're|we’re|we've|my|our)$"
)
_EN_WORD = re.compile(r"[A-Za-z][A-Za-z\-\.]*(?:['’]s)?|\S")
#: words that end a possessed noun phrase: verbs that carry the statement, and adverbs that
#: come before them ("Omar's team meeting *was* moved", "Lukas's home laptop *is* …")
_EN_STOP = frozenset(
    [
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "being",
        "has",
        "have",
        "had",
        "will",
        "would",
        "can",
        "could",
        "may",
        "might",
        "must",
        "shall",
        "should",
        "do",
        "does",
        "did",
        "now",
        "also",
        "just",
        "still",
        "already",
        "no",
        "longer",
        "not",
        "never",
        "always",
        "usually",
        "got",
        "gets",
        "goes",
        "went",
        "moved",
        "changed",
        "switched",
        "lives",
        "lived",
        "works",
        "worked",
        "likes",
        "liked",
        "loves",
        "uses",
        "used",
        "called",
        "named",
        "costs",
        "starts",
        "started",
        "ends",
        "ended",
        "runs",
        "ran",
        "sees",
        "saw",
    ]
)
_EN_PREPOSITIONS = frozenset(
    ["to", "for", "at", "in", "on", "of", "with", "from", "by", "about", "near"]
)
#: capitalised at the start of a sentence, but not a name
_NOT_NAMES = frozenset(
    [
        "the",
        "a",
        "an",
        "some",
        "all",
        "every",
        "each",
        "no",
        "one",
        "there",
        "these",
        "those",
        "what",
        "when",
        "where",
        "which",
        "who",
        "how",
        "if",
        "after",
        "before",
        "today",
        "yesterday",
        "tomorrow",
        "yes",
        "ok",
        "please",
        "since",
        "during",
        "until",
        "following",
        "last",
        "this",
        "next",
        "as",
        "once",
        "while",
    ]
)
_LEAD = frozenset(["correction", "update", "note", "fyi", "actually", "so", "well"])

#: a Chinese name or noun phrase ends before one of these (a verb, preposition, particle or time
#: word that starts the predicate)
_ZH_STOP = set(
    "的在是住对把每最还也又已现买去做会要有喜换跳搬改学坐骑上从和跟给被今明昨前后这那一不没很都就才刚正将用爱开养说"
)
_CJK = re.compile(r"[\u3400-\u9fff]")


def subject(text: str, speaker: str = "") -> str:
    """The statement's subject, normalised ("" when unreadable); ``speaker``: who said it, for
    a first-person statement (``USER`` for the user's own turns)."""
    text = text.strip()
    if not text:
        return ""
    if _CJK.match(text) or (text[:3].startswith(("更正", "我")) and _CJK.search(text[:3])):
        return _zh(text, speaker)
    return _en(text, speaker)


def _en(text: str, speaker: str) -> str:
    words = _EN_WORD.findall(text)
    while words and (words[0].lower().rstrip(":,") in _LEAD or not words[0][0].isalnum()):
        words = words[1:]  # "Correction: …", "FYI, …"
    if not words:
        return ""
    head = words[0]
    low = head.lower()
    if _FIRST_PERSON.match(low):
        who = speaker or USER
        owner = low in ("my", "our")
        rest = words[1:]
    elif low in ("the", "user") and (
        low == "user" or (len(words) > 1 and words[1].lower().startswith("user"))
    ):
        who = USER
        rest = words[1:] if low == "user" else words[2:]
        owner = words[0 if low == "user" else 1].lower().endswith(("'s", "’s"))
    elif (
        head[0].isupper()
        and low not in _NOT_NAMES
        and low not in _EN_PREPOSITIONS
        and low
        not in (
            "he",
            "she",
            "they",
            "it",
            "his",
            "her",
            "their",
            "its",
            "this",
            "that",
            "there",
        )
    ):
        name = [head]
        rest = words[1:]
        while rest and rest[0][:1].isupper() and not name[-1].endswith(("'s", "’s")):
            name.append(rest[0])
            rest = rest[1:]
        owner = name[-1].endswith(("'s", "’s"))
        who = " ".join(n.removesuffix("'s").removesuffix("’s") for n in name).lower()
    else:
        return ""
    if not owner:
        return who
    thing: list[str] = []
    for w in rest:
        lw = w.lower()
        if lw in _EN_STOP or lw in _EN_PREPOSITIONS or not w[:1].isalpha() or len(thing) == 3:
            break
        if thing and lw.endswith("s") and not lw.endswith("ss"):
            break  # "Dan's flight *leaves*": a verb after the noun
        thing.append(lw)
    return f"{who}'s {' '.join(thing)}" if thing else who


def _zh(text: str, speaker: str) -> str:
    text = re.sub(r"^更正[:：]?\s*", "", text)
    if text.startswith("我"):
        who, rest = speaker or USER, text[1:]
    else:
        named = cjk_names.spans(text[:8])
        if named and named[0][0] == 0:  # a surname and a given name ("王军毕业后…": 王军)
            n = named[0][1]
        else:
            n = 0
            while (
                n < len(text)
                and n < 4
                and _CJK.match(text[n])
                and (n < 2 or text[n] not in _ZH_STOP)
            ):
                n += 1
        if n < 2:
            return ""
        who, rest = text[:n], text[n:]
    if not rest.startswith("的"):
        return who
    thing = ""
    for ch in rest[1:]:
        if not _CJK.match(ch) or ch in _ZH_STOP or len(thing) == 4:
            break
        thing += ch
    return f"{who}的{thing}" if thing else who
