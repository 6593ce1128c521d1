"""A reply read against the question before it (issue 27): "have you served a mission?" —
"I haven't" says "I haven't served a mission"; "is bio your major?" — "yup" says "my major is
bio"; "what instrument do you play?" — "clarinet mostly" says "I play clarinet mostly". The other
speaker's question is turned into the replying speaker's own first-person statement, which the
observation rules then rewrite like anything the speaker said. Only plain questions about the
one replying: none that offers a choice ("… or …?"), asks about "anything", points at something
unnamed ("it", "that"), or speaks of the asker ("my", "me")."""

from __future__ import annotations

import re

from gateway.extractors.grammar import past

#: the question's opening chatter ("so", "oh cool!", "haha")
_OPENING = re.compile(
    r"^(?:(?:so|and|also|but|oh|ok|okay|well|haha\w*|lol|nice|cool|wow|hey|then|i take it|"
    r"i assume|i guess|i presume|just curious|out of curiosity)\b[\s,!.]*)+",
    re.I,
)
#: a question after a statement in the same sentence, behind a comma
_ASKING = re.compile(
    r",\s*((?:do|does|did|are|is|have|has|what|where|when|which|how)\s+[^,]*\?)$", re.I
)
_YES = re.compile(
    r"^(?:(?:haha\w*|lol|oh+|well|um+|hmm+|ha)\W+)*(?:yes+|yeah+|yep+|yup+|yea|ya|yas|yess+|"
    r"sure|definitely|absolutely|of course|totally|for sure|indeed|correct|i do|i am|i have|"
    r"i did|mhm|yeppers|yessir|yes sir)\b(?!\s+(?:but|not)\b)",
    re.I,
)
_NO = re.compile(
    r"^(?:(?:haha\w*|lol|oh+|well|um+|hmm+|ha)\W+)*(?:no+|nope|nah|not really|not yet|i don't|"
    r"i haven't|i have not|i didn't|i did not|i'm not|i am not)\b(?!\s+(?:way|problem|worries|"
    r"prob|idea|clue|doubt|wonder)\b)",
    re.I,
)
#: not a plain question about the one replying
_UNPLAIN = re.compile(
    r"\b(?:anything|something|anyone|someone|any|anywhere|i|me|my|mine|we|us|our|it|that|"
    r"this|those|these|them|there|he|she|they|his|her|would|could|should|else)\b",
    re.I,
)
_POLAR = [  # (question, what "yes" says, what "no" says); {v} the verb, {r} the rest
    (re.compile(r"^(?:do|does) you (?P<v>[a-z]+)(?P<r>(?: [^?]+)?)\?$", re.I), "I {v}{r}",
     "I don't {v}{r}"),
    (re.compile(r"^did you (?P<v>[a-z]+)(?P<r>(?: [^?]+)?)\?$", re.I), "I {past}{r}",
     "I didn't {v}{r}"),
    (re.compile(r"^(?:are|r) (?:you|u) (?P<v>)(?P<r>[^?]+)\?$", re.I), "I'm {r}", "I'm not {r}"),
    (re.compile(r"^have you (?:ever )?(?P<v>[a-z]+)(?P<r>(?: [^?]+)?)\?$", re.I), "I've {v}{r}",
     "I haven't {v}{r}"),
    (re.compile(r"^is (?P<r>[a-z][\w ]{0,30}?) (?:your|ur) (?P<v>[a-z]+(?: [a-z]+)?)\?$", re.I),
     "my {v} is {r}", "my {v} isn't {r}"),
    (re.compile(r"^(?:you've|you have) (?P<v>[a-z]+)(?P<r>(?: [^?]+)?)\?$", re.I), "I've {v}{r}",
     "I haven't {v}{r}"),
    (re.compile(r"^(?:you're|you are) (?P<v>)(?P<r>[^?]+)\?$", re.I), "I'm {r}", "I'm not {r}"),
    (re.compile(r"^you (?P<v>want|like|love|play|live|work|study|know|have|need|go)(?P<r> [^?]+)"
                r"\?$", re.I), "I {v}{r}", "I don't {v}{r}"),
    (re.compile(r"^you (?P<v>)(?P<r>(?:a|an|much of a|into|from|still|also) [^?]+)\?$", re.I),
     "I'm {r}", "I'm not {r}"),
]  # fmt: skip
_WH = [  # (question, the statement its answer {a} completes)
    (re.compile(r"^what (?:(?:kind|sort|type) of )?(?P<n>[a-z]+ )?(?:do|does) you "
                r"(?P<v>[a-z]+)(?P<r>(?: [^?]+)?)\?$", re.I), "I {v} {a}{r}"),
    (re.compile(r"^what (?:(?:kind|sort|type) of )?(?P<n>[a-z]+ )?did you "
                r"(?P<v>[a-z]+)(?P<r>(?: [^?]+)?)\?$", re.I), "I {past} {a}{r}"),
    (re.compile(r"^what (?:(?:kind|sort|type) of )?(?P<n>[a-z]+ )?(?:are|r) (?:you|u) "
                r"(?P<v>[a-z]+ing)(?P<r>(?: [^?]+)?)\?$", re.I), "I'm {v} {a}{r}"),
    (re.compile(r"^where (?:do|does) you (?P<v>[a-z]+)(?P<r>(?: [^?]+)?)\?$", re.I),
     "I {v}{r} {at}"),
    (re.compile(r"^where did you (?P<v>[a-z]+)(?P<r>(?: [^?]+)?)\?$", re.I), "I {past}{r} {at}"),
    (re.compile(r"^where (?:are|r) (?:you|u) (?P<v>[a-z]+ing)(?P<r>(?: [^?]+)?)\?$", re.I),
     "I'm {v}{r} {at}"),
    (re.compile(r"^when (?:do|does) you (?P<v>[a-z]+)(?P<r>(?: [^?]+)?)\?$", re.I),
     "I'll {v}{r} {a}"),
    (re.compile(r"^when did you (?P<v>[a-z]+)(?P<r>(?: [^?]+)?)\?$", re.I), "I {past}{r} {a}"),
    (re.compile(r"^when (?:are|r) (?:you|u) (?P<v>[a-z]+ing)(?P<r>(?: [^?]+)?)\?$", re.I),
     "I'm {v}{r} {a}"),
]  # fmt: skip
_PREPOSITION = re.compile(r"^(?:in|at|on|to|near|from|by|outside|inside|around)\b", re.I)
_ANSWER_END = re.compile(
    r"\s*(?:,|\bbut\b|\band\b|\bso\b|\bthough\b|\bi think\b|\bi guess\b|\bprobably\b|\bi'm\b|"
    r"\bi\b|\bhaha\w*|\blol\b|[.!?])",
    re.I,
)
_SHORT = 6  # words: a longer fragment says more than the answer
#: an answer's first word that is no name ("Sometime after May 15th" → "sometime after …")
_LOWER = frozenset(
    [
        "sometime",
        "sometimes",
        "probably",
        "maybe",
        "mostly",
        "usually",
        "just",
        "only",
        "about",
        "around",
        "in",
        "at",
        "on",
        "to",
        "near",
        "from",
        "by",
        "the",
        "a",
        "an",
        "every",
        "each",
        "next",
        "last",
        "this",
    ]
)


def question(asked: str) -> str:
    """The other speaker's last sentence when it is a question, its opening chatter dropped."""
    sentences = [s.strip() for s in re.split(r"(?<=[.!?])\s+|\n", asked.strip()) if s.strip()]
    if not sentences or not sentences[-1].endswith("?"):
        return ""
    last = sentences[-1]
    asking = _ASKING.search(last)  # "He liked it a lot, have you served a mission?"
    return _OPENING.sub("", last[asking.start(1) :] if asking else last).strip()


_TOPIC = re.compile(
    r"^(?:how do you like|do you (?:like|love|enjoy)|are you (?:liking|loving|enjoying)|"
    r"what do you think (?:of|about)|how (?:is|was|are|were))\s+(?P<x>[^?]+?)"
    r"(?:\s+so far|\s+then|\s+too)?\?$",
    re.I,
)


def topic(asked: str) -> str:
    """What the other speaker asked the one replying to judge ("How do you like BYU so far?"
    → "BYU"), for the "it" of "I'm loving it"; '' when none is named."""
    q = question(asked)
    m = _TOPIC.match(q) if q else None
    if m is None or _UNPLAIN.search(_body(m.group("x"))) or len(m.group("x").split()) > 5:
        return ""
    return _mine(m.group("x"))


#: what repeats the yes or no ("no I haven't", "yes I do")
_ECHO = re.compile(
    r"^\W*i(?:'m| am| do| did| have| haven't| don't| didn't|'m not| am not| have not)?\W*$", re.I
)


def polar(asked: str, reply: str) -> str:
    """The reply's "yes"/"no" to a yes-no question about the one replying, as their own
    statement ("have you seen Avengers?" — "yep!" → "I've seen Avengers"); '' when it is none."""
    q = question(asked)
    if not q or _UNPLAIN.search(_body(q)):
        return ""
    answered = _YES.match(reply) or _NO.match(reply)
    if answered is None:
        return ""
    said = "yes" if answered.re is _YES else "no"
    rest = re.split(r"[.!?\n]", reply[answered.end() :], maxsplit=1)[0]
    if re.match(r"^\W*(?:i|i'm|i've|i'd|i'll|my)\b", rest, re.I) and not _ECHO.match(rest):
        return ""  # "yes I love it": the speaker's own words say it (and say it better)
    for pattern, yes, no in _POLAR:
        m = pattern.match(q)
        if m is None:
            continue
        verb, rest = m.group("v"), _mine(m.group("r"))
        if said == "no":
            rest = re.sub(r"^\s*ever\b", "", rest)
        if said == "yes":
            rest = re.sub(r"^\s*much of an? ", " a ", rest)  # "you much of a fan?" — "yes"
        text = (yes if said == "yes" else no).format(v=verb, r=rest, past=past(verb))
        return re.sub(r"\s+", " ", text).strip()
    return ""


def fills(asked: str, reply: str) -> str:
    """A short reply that fills the gap of a wh-question about the one replying ("what
    instrument do you play?" — "clarinet mostly" → "I play clarinet mostly"); '' otherwise."""
    q = question(asked)
    if not q or _UNPLAIN.search(_body(q)) or re.search(r"\bor\b", q, re.I):
        return ""  # no choice offered either ("cats or dogs?")
    lines = [line.strip() for line in reply.strip().split("\n") if line.strip()] or [""]
    answer = _ANSWER_END.split(lines[0], maxsplit=1)[0].strip(" .!,")
    placed = re.search(r"(?:^|[.!]\s+)i(?:'m| am) ((?:in|at|on) [^.!?,]{2,40})\W*$", lines[0], re.I)
    for pattern, template in _WH:
        m = pattern.match(q)
        if m is None:
            continue
        noun = (m.groupdict().get("n") or "").strip().lower()
        echo = [x for x in lines[1:] if noun and re.search(rf"\b{noun}s?[.!]*$", x, re.I)]
        if echo and len(echo[0].split()) <= _SHORT and not re.match(r"^(?:my|i)\b", echo[0], re.I):
            answer = echo[0].strip(" .!,")  # a later line that names what was asked: "… major"
        if placed and template.endswith("{at}"):  # "where are you rooming?" — "I'm in Heritage"
            answer = placed.group(1)
        if not answer or len(answer.split()) > _SHORT or re.match(r"^(?:my|i)\b", answer, re.I):
            return ""
        if answer.split()[0].lower() in _LOWER:
            answer = answer[0].lower() + answer[1:]
        verb, rest = m.group("v"), _mine(m.group("r"))
        at = answer if _PREPOSITION.match(answer) else f"in {answer}"
        text = template.format(v=verb, r=rest, a=answer, at=at, past=past(verb))
        return re.sub(r"\s+", " ", text).strip()
    return ""


def _body(q: str) -> str:
    """The question without its "you"/"your" (those are the one replying) and its opener."""
    return re.sub(r"\b(?:you|your|yours|yourself|you're|you've|u|ur)\b", " ", q, flags=re.I)


def _mine(rest: str) -> str:
    """The question's words about "you" as the replying speaker's own ("your" → "my")."""
    swaps = {
        "your": "my",
        "ur": "my",
        "yours": "mine",
        "yourself": "myself",
        "you're": "I'm",
        "you've": "I've",
        "you": "I",
        "u": "I",
    }
    return re.sub(
        r"\b(?:your|ur|yours|yourself|you're|you've|you|u)\b",
        lambda m: swaps[m.group(0).lower()],
        rest,
        flags=re.I,
    )
