"""Whether two statements are about the same person, read from their structure
(``subjects.py``): the person a subject is about ("sven's dentist" is Sven's, "noah's brother" is
someone else), two subjects that meet (one names a thing of the person's, the other only them),
and what a user's own turn can be about (it states something, of them or of someone of theirs it
names). ``recall/newer_first.py`` orders what meets; the judge decides what changes what."""

from __future__ import annotations

import re

from gateway.core.truth.relations import CALLED_ZH, RELATIONS, RELATIONS_SAID_ZH, RELATIONS_ZH
from gateway.core.truth.subjects import USER

#: the subject of a statement that does not start with it ("At Marcus's review the GP raised his
#: dose…"): it meets a statement about a person it names (``mentions``)
UNREAD = "?"
_WORD = re.compile(r"[A-Za-z][A-Za-z'’]*")
_CJK = re.compile(r"[\u3400-\u9fff]")


def person(subj: str) -> str:
    """Whom a subject is about: the possessor of a thing ("sven's dentist" → "sven"), but a
    relative or a colleague is someone else ("noah's brother" stays "noah's brother")."""
    head, sep, tail = subj.partition("'s ")
    if sep:
        words = {w.removesuffix("'s").removesuffix("’s") for w in tail.split()}
        return subj if words & RELATIONS else head  # "leo's manager's birthday": the manager
    head, sep, tail = subj.partition("的")
    if sep:
        return subj if tail.startswith(RELATIONS_ZH) else head
    return subj


def _split(subj: str) -> tuple[str, str]:
    who = person(subj)
    return who, subj[len(who) :].removeprefix("'s ").removeprefix("的")


def subjects_meet(older: str, newer: str, texts: tuple[str, str], own: set[str]) -> bool:
    """The same subject, or the same person where one of the two names a thing of theirs and the
    other only them ("Sven's dentist is Dr. Holm" / "Sven sees Dr. Berg for his teeth"), or one
    thing named more fully ("Dan's flight" / "Dan's Lisbon flight"); two different things of
    theirs ("Lukas's work laptop", "Lukas's home laptop") never meet. A statement whose subject
    is unread meets one about a person it names."""
    if UNREAD in (older, newer):
        known, text = (newer, texts[0]) if older == UNREAD else (older, texts[1])
        return known != UNREAD and mentions(text, _split(known)[0], own)
    if older == newer:
        return True
    (p_old, t_old), (p_new, t_new) = _split(older), _split(newer)
    if not same_person(p_old, p_new):
        return False
    if not (t_old and t_new):
        return True
    a, b = set(t_old.split()), set(t_new.split())  # "flight" / "lisbon flight"
    return a <= b or b <= a if " " in t_old + t_new else t_old in t_new or t_new in t_old


def same_person(a: str, b: str) -> bool:
    """Equal, or a Chinese name read with one character more in one of the two ("孙杰" /
    "孙杰考了…": a given name of one or two characters is not always told from the verb)."""
    if a == b:
        return True
    short, long = sorted((a, b), key=len)
    return (
        len(short) >= 2
        and bool(_CJK.match(short))
        and long.startswith(short)
        and (len(long) - len(short) == 1)
    )


def mentions(text: str, who: str, own: set[str]) -> bool:
    """Whether ``text`` names the person ``who`` (the user: one of their names or "the user")."""
    low = text.lower()
    names = (own | {"the user"}) if who == USER else {who}
    for name in names:
        if _CJK.match(name):
            if name in text:
                return True
        elif re.search(rf"\b{re.escape(name)}\b", low):
            return True
    return False


def turn_meets(fact_subject: str, turn: str) -> bool:
    """A user's turn that states something (``states``) may change a fact about the user or,
    in their own namespace, about a person it names without a relation (a namespace
    ``user/lina`` whose notes say 李娜), or about someone of theirs the turn names ("my
    daughter's party is on the 9th, not the 2nd"): the judge decides."""
    if not states(turn):
        return False
    who, _ = _split(fact_subject)
    if someone_elses_turn(turn) and not ("'s " in who or "的" in who):
        return False  # "my mum's on levothyroxine too" says nothing of the user's dose
    if "'s " in who or "的" in who:
        return names_them(fact_subject, turn)
    return True


def names_them(fact_subject: str, turn: str) -> bool:
    """Whether the turn names the someone a fact is about: their relation or their name
    ("Theo's in Year 3" of "Owen's son Theo"; "闺女" of "张丽的女儿")."""
    if "'s " in fact_subject:
        tail = fact_subject.split("'s ", 1)[1]
        words = {w.removesuffix("'s") for w in _WORD.findall(turn.lower())}
        return bool(set(tail.split()) & words)
    tail = fact_subject.split("的", 1)[1]
    relation = next((r for r in RELATIONS_ZH if tail.startswith(r)), tail)
    return any(c in turn for c in CALLED_ZH.get(relation, (relation,)))


_LEAD_WORDS = 5


def someone_elses_turn(turn: str) -> bool:
    """A turn that opens on someone of the speaker's ("my dad's on metformin too", "我室友生日是
    5月21号", "我闺蜜刚领养了一只英短"): it states something of them."""
    if _CJK.search(turn):
        head = turn.lstrip()[:4]
        return head.startswith(("我", "俺")) and any(r in head[1:4] for r in RELATIONS_SAID_ZH)
    words = [w.lower().removesuffix("'s").removesuffix("’s") for w in _WORD.findall(turn)]
    return any(w in RELATIONS for w in words[:_LEAD_WORDS])


#: a turn that asks rather than states ("got any stretches for sore forearms?", "要多喝水吗")
_QUESTION = re.compile(r"[?？]\s*$|[吗呢]\s*[。!！]?\s*$")


def states(turn: str) -> bool:
    """Whether a turn can state a change: not a question, and more than a few words ("ugh
    mondays", "嗨", "啊不对" state nothing)."""
    if _QUESTION.search(turn):
        return False
    if _CJK.search(turn):
        return len(_CJK.findall(turn)) >= 6
    return len(turn.split()) >= 5
