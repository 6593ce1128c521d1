"""Importance rules (seed 000 §4.4): explicit "remember" 0.9, a correction 0.8, a completed task
0.6, a plain request 0.3; small talk is not worth keeping long-term."""

from __future__ import annotations

import re

EXPLICIT = 0.9
CORRECTION = 0.8
TASK_DONE = 0.6
PLAIN = 0.3
SMALL_TALK = 0.05
#: Below this a long-term write is skipped (acknowledged, not stored).
KEEP_THRESHOLD = 0.1

_EXPLICIT = re.compile(
    r"\b(?:remember|don'?t forget|note that|keep in mind|from now on)\b|记住|记下|别忘了|以后都|请记得",
    re.IGNORECASE,
)
_CORRECTION = re.compile(
    r"\b(?:actually|correction|that'?s wrong|not right|i meant|instead)\b|不对|纠正|错了|应该是|其实是|不是.+而是",
    re.IGNORECASE,
)
_DONE = re.compile(
    r"\b(?:done|completed|finished|shipped|resolved)\b|完成了|已完成|搞定|做完",
    re.IGNORECASE,
)
_SMALL_TALK = re.compile(
    r"^\s*(?:hi|hello|hey|thanks|thank you|ok|okay|cool|nice|great|bye|good (?:morning|night)|lol|"
    r"你好|您好|谢谢|好的|嗯+|哈+|早上好|晚安|再见|收到)[\s!.,。！～~]*$",
    re.IGNORECASE,
)

_TYPE_SCORES = {"explicit": EXPLICIT, "correction": CORRECTION, "task_completed": TASK_DONE}


def score(content: str, type_: str = "") -> float:
    """Importance of a memory from its words and declared type."""
    if _SMALL_TALK.match(content):
        return SMALL_TALK
    if _EXPLICIT.search(content):
        return EXPLICIT
    if type_ in _TYPE_SCORES:
        return _TYPE_SCORES[type_]
    if _CORRECTION.search(content):
        return CORRECTION
    if _DONE.search(content):
        return TASK_DONE
    return PLAIN


def is_small_talk(content: str) -> bool:
    return bool(_SMALL_TALK.match(content))


def is_explicit(content: str) -> bool:
    return bool(_EXPLICIT.search(content))
