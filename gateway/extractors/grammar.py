"""English for observations: a first-person statement in the third person with the speaker's
name ("I really love my dog" → "Sam really loves Sam's dog"), and the words that carry no content."""

from __future__ import annotations

import re

#: words that carry no content of their own (a statement needs some besides these)
STOP = frozenset(
    [
        "a",
        "actually",
        "all",
        "also",
        "am",
        "an",
        "and",
        "any",
        "are",
        "as",
        "at",
        "be",
        "been",
        "being",
        "but",
        "by",
        "can",
        "could",
        "definitely",
        "did",
        "do",
        "does",
        "even",
        "for",
        "from",
        "get",
        "go",
        "going",
        "got",
        "ha",
        "had",
        "haha",
        "hahaha",
        "has",
        "have",
        "he",
        "hehe",
        "her",
        "here",
        "him",
        "his",
        "honestly",
        "how",
        "i",
        "in",
        "is",
        "it",
        "its",
        "just",
        "kind",
        "kinda",
        "like",
        "literally",
        "lmao",
        "lol",
        "lot",
        "lots",
        "many",
        "maybe",
        "me",
        "mine",
        "more",
        "most",
        "much",
        "my",
        "myself",
        "no",
        "not",
        "now",
        "of",
        "omg",
        "on",
        "only",
        "or",
        "our",
        "pretty",
        "probably",
        "really",
        "she",
        "should",
        "so",
        "some",
        "sort",
        "still",
        "stuff",
        "super",
        "than",
        "that",
        "the",
        "their",
        "them",
        "then",
        "there",
        "these",
        "they",
        "thing",
        "things",
        "this",
        "those",
        "to",
        "too",
        "us",
        "very",
        "was",
        "we",
        "went",
        "were",
        "what",
        "when",
        "where",
        "which",
        "who",
        "whom",
        "why",
        "will",
        "with",
        "would",
        "yeah",
        "yes",
        "you",
        "your",
    ]
)
#: what follows "I" and is no present-tense verb to agree ("I was", "I never", "I gotta")
_NOT_VERBS = frozenset(
    [
        "absolutely",
        "actually",
        "almost",
        "already",
        "also",
        "always",
        "barely",
        "basically",
        "can",
        "could",
        "currently",
        "definitely",
        "did",
        "even",
        "ever",
        "finally",
        "gonna",
        "gotta",
        "had",
        "hardly",
        "honestly",
        "just",
        "kind",
        "kinda",
        "literally",
        "may",
        "might",
        "mostly",
        "must",
        "never",
        "often",
        "once",
        "only",
        "personally",
        "really",
        "recently",
        "seriously",
        "should",
        "sometimes",
        "sort",
        "still",
        "totally",
        "used",
        "usually",
        "wanna",
        "was",
        "will",
        "would",
    ]
)
IRREGULAR_PAST = frozenset(
    [
        "ate",
        "awoke",
        "beat",
        "became",
        "began",
        "bent",
        "bet",
        "bit",
        "blew",
        "bore",
        "bought",
        "broke",
        "brought",
        "built",
        "burst",
        "came",
        "cast",
        "caught",
        "chose",
        "clung",
        "cost",
        "crept",
        "cut",
        "dealt",
        "drank",
        "drew",
        "drove",
        "dug",
        "fed",
        "fell",
        "felt",
        "fled",
        "flew",
        "flung",
        "forgave",
        "forgot",
        "fought",
        "found",
        "froze",
        "gave",
        "got",
        "grew",
        "heard",
        "held",
        "hid",
        "hit",
        "hung",
        "hurt",
        "kept",
        "knelt",
        "knew",
        "laid",
        "lay",
        "leapt",
        "led",
        "left",
        "lent",
        "let",
        "lit",
        "lost",
        "made",
        "meant",
        "met",
        "overcame",
        "paid",
        "put",
        "quit",
        "ran",
        "rang",
        "read",
        "rode",
        "rose",
        "said",
        "sang",
        "sank",
        "sat",
        "saw",
        "sent",
        "set",
        "shone",
        "shook",
        "shot",
        "shut",
        "slept",
        "slid",
        "sold",
        "sought",
        "spent",
        "split",
        "spoke",
        "sprang",
        "spread",
        "spun",
        "stole",
        "stood",
        "struck",
        "stuck",
        "stung",
        "swam",
        "swept",
        "swore",
        "swung",
        "taught",
        "thought",
        "threw",
        "told",
        "took",
        "tore",
        "understood",
        "went",
        "wept",
        "withdrew",
        "woke",
        "won",
        "wore",
        "wound",
        "wrote",
    ]
)
_PRESENT_3RD = {"have": "has", "do": "does", "go": "goes", "be": "is", "am": "is"}
_CONTRACTIONS = [
    (r"\bi'm not\b|\bim not\b|\bi am not\b", "{n} is not"),
    (r"\bi'm\b|\bim\b|\bi am\b", "{n} is"),
    (r"\bi've\b|\bive\b|\bi have\b", "{n} has"),
    (r"\bi'll\b|\bi will\b", "{n} will"),
    (
        r"\bi(\s+(?:\w+ly|just|really|still|also|actually|totally|even)\s+|\s+)(?:don't|dont|do not)\b",
        "{n}\\1does not",
    ),
    (
        r"\bi(\s+(?:\w+ly|just|really|still|also|actually|totally|even)\s+|\s+)(?:didnt)\b",
        "{n}\\1didn't",
    ),
    (
        r"\bi(\s+(?:\w+ly|just|really|still|also|actually|totally|even)\s+|\s+)(?:cant)\b",
        "{n}\\1can't",
    ),
    (r"\bi haven't\b|\bi havent\b", "{n} has not"),
    (r"\bi was\b", "{n} was"),
    (r"\bmyself\b", "{n}"),
    (r"\bmy\b", "{n}'s"),
    (r"\bmine\b", "{n}'s"),
    (r"\bme\b", "{n}"),
]
_ADVERB = (
    r"(?:just|really|still|always|never|also|actually|usually|totally|definitely|kinda|even|"
    r"sure|real|def|deff|prolly|sorta|lowkey|legit|"
    r"only|sometimes|often|literally|absolutely|seriously|honestly|ever|hardly|barely|almost|"
    r"\w+ly)"
)


def plural(text: str, name: str) -> str:
    """A statement of "we" as one of the speaker and others: "We won 3 of 4" → "Sam and others
    won 3 of 4"; "our" and "us" are theirs."""
    m = re.match(r"^we(?:'re|'ve|'ll)?\b", text, re.I)
    if m is None:
        return text
    verb = {"we're": " are", "we've": " have", "we'll": " will"}.get(m.group(0).lower(), "")
    rest = re.sub(r"\bour\b", "their", text[m.end() :], flags=re.I)
    rest = re.sub(r"\bus\b", "them", rest, flags=re.I)
    rest = re.sub(r"\bwe(?='re|'ve|'ll|\b)", "they", rest, flags=re.I)
    return f"{name} and others{verb}{rest}"


def third_person(text: str, name: str) -> str:
    """``text`` with the speaker as ``name``: "I really love my dog" → "Sam really loves
    Sam's dog"."""
    out = text
    for pattern, repl in _CONTRACTIONS:
        out = re.sub(pattern, repl.format(n=name), out, flags=re.I)
    return re.sub(rf"\bi\s+((?:{_ADVERB}\s+)*)([\w']+)", lambda m: _agree(m, name), out, flags=re.I)


#: present tenses that end like a past one ("I need" → "Sam needs")
_EED = frozenset(["need", "feed", "bleed", "breed", "speed", "proceed", "succeed", "exceed"])


def _agree(m: re.Match[str], name: str) -> str:
    adverbs, verb = m.group(1), m.group(2)
    low = verb.lower()
    if (
        low in _NOT_VERBS
        or low in IRREGULAR_PAST
        or (low.endswith(("ed", "n't", "'t", "s")) and not low.endswith("ss") and low not in _EED)
        or not low.isalpha()
    ):
        conj = verb
    elif low in _PRESENT_3RD:
        conj = _PRESENT_3RD[low]
    elif re.search(r"(?:ss|sh|ch|x|z|o)$", low):
        conj = verb + "es"
    elif re.search(r"[^aeiou]y$", low):
        conj = verb[:-1] + "ies"
    else:
        conj = verb + "s"
    return f"{name} {adverbs}{conj}"


#: the past tense of common irregular verbs (the rest add -ed)
_IRREGULAR = {
    "be": "was", "become": "became", "begin": "began", "break": "broke", "bring": "brought",
    "build": "built", "buy": "bought", "catch": "caught", "choose": "chose", "come": "came",
    "do": "did", "draw": "drew", "drink": "drank", "drive": "drove", "eat": "ate", "fall": "fell",
    "feel": "felt", "find": "found", "fly": "flew", "forget": "forgot", "get": "got",
    "give": "gave", "go": "went", "grow": "grew", "have": "had", "hear": "heard", "keep": "kept",
    "know": "knew", "leave": "left", "lose": "lost", "make": "made", "meet": "met", "pay": "paid",
    "put": "put", "read": "read", "ride": "rode", "run": "ran", "say": "said", "see": "saw",
    "sell": "sold", "send": "sent", "sing": "sang", "sit": "sat", "sleep": "slept",
    "speak": "spoke", "spend": "spent", "stand": "stood", "swim": "swam", "take": "took",
    "teach": "taught", "tell": "told", "think": "thought", "throw": "threw", "wear": "wore",
    "win": "won", "write": "wrote",
}  # fmt: skip


def past(verb: str) -> str:
    """The past tense of ``verb`` ("go" → "went", "visit" → "visited", "try" → "tried")."""
    low = verb.lower()
    if not low:
        return verb
    if low in _IRREGULAR:
        return _IRREGULAR[low]
    if low.endswith("e"):
        return verb + "d"
    if re.search(r"[^aeiou]y$", low):
        return verb[:-1] + "ied"
    if re.search(r"(?:^|[^aeiou])[aeiou][bdgmnpt]$", low) and len(low) <= 4:
        return verb + verb[-1] + "ed"  # stop → stopped, plan → planned
    return verb + "ed"
