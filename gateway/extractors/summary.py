"""The extractive summariser (the default; seed 004 §3.3): of the rolled-off turns it keeps the
sentences that carry decisions, names, numbers, dates, instructions and preferences, drops small
talk, keeps their order, fits them in the token budget and ends with the note that the summary
was generated and may omit details ("本摘要由系统自动生成，可能存在信息遗漏")."""

from __future__ import annotations

import re
from collections.abc import Sequence

from gateway.core.model.models import Turn
from gateway.core.screening.importance import is_small_talk
from gateway.core.writing.working import SUMMARY_NOTE, said_line

NAME = "extractive/1"
NOTE = SUMMARY_NOTE
_SENTENCE = re.compile(r"[^.!?。！？\n]+[.!?。！？]*")
_KEEP = (
    # decisions and commitments
    r"\b(?:decided|decide|agreed|agree|let'?s|we'?ll|I'?ll|will|going to|plan|chose|choose|"
    r"confirmed|settled|deadline|due)\b|决定|确定|约定|计划|安排|截止",
    # instructions and constraints
    r"\b(?:please|must|always|never|don'?t|do not|remember|make sure|need to|should|"
    r"instead)\b|请|必须|不要|别|记住|以后|务必|需要",
    # preferences and facts about the user
    r"\b(?:I (?:like|love|hate|prefer|am|'m|live|work)|my|allergic|vegetarian|vegan)\b|"
    r"喜欢|不吃|过敏|我是|我住|我在",
    # numbers, dates and times
    r"\d|\b(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|today|tomorrow|"
    r"yesterday|tonight|next|last|january|february|march|april|may|june|july|august|"
    r"september|october|november|december)\b|[一二三四五六七八九十百千万]+[点号日月年天]|周[一二三四五六日]|明天|昨天|下周",
)
_KEEP_RE = [re.compile(p, re.I) for p in _KEEP]
#: a capitalised word after the first one of a sentence: most likely a name
_NAME = re.compile(r"(?<=\s)[A-Z][a-z]{2,}")
_CJK = re.compile(r"[\u4e00-\u9fff]")


def tokens(text: str) -> int:
    """A rough token count: a CJK character or a word (with its punctuation) is one token."""
    return len(_CJK.findall(text)) + len(re.findall(r"[A-Za-z0-9]+", text)) + 0


def score(sentence: str) -> int:
    return sum(bool(r.search(sentence)) for r in _KEEP_RE) + bool(_NAME.search(sentence))


class ExtractiveSummariser:
    """``Summariser`` without a model: the most informative sentences, in order, in budget."""

    name = NAME

    async def summarise(self, turns: Sequence[Turn], budget_tokens: int) -> str:
        return summarise(turns, budget_tokens)


def summarise(turns: Sequence[Turn], budget_tokens: int) -> str:
    room = max(0, budget_tokens - tokens(NOTE))
    picked: list[tuple[int, int, str]] = []  # (score, order, 'who said "sentence"')
    order = 0
    for t in turns:
        if is_small_talk(t.content):
            continue
        for m in _SENTENCE.finditer(t.content):
            s = " ".join(m.group(0).split())
            if not s or is_small_talk(s):
                continue
            order += 1
            n = score(s)
            if n:
                picked.append((n, order, said_line(t, s)))
    chosen: list[tuple[int, str]] = []
    used = 0
    for _n, i, line in sorted(picked, key=lambda x: (-x[0], x[1])):
        cost = tokens(line)
        if used + cost > room:
            continue
        chosen.append((i, line))
        used += cost
    body = "; ".join(line for _, line in sorted(chosen))
    return f"{body} {NOTE}" if body else NOTE
