"""Route a query to the layers that can answer it (seed 000 §4.3), Chinese and English.

Routing only ever *adds* layers: facts and events (``DEFAULT``) are always searched, and a query
that sounds like a preference, a procedure or a "where were we" adds its layer. A rule that
fired wrongly therefore never hides the layer that holds the answer ("do I like the flat I
moved into last week?" is both a preference and an event)."""

from __future__ import annotations

import re

from gateway.core.model.models import Layer

_RULES: tuple[tuple[Layer, re.Pattern[str]], ...] = (
    (
        Layer.EPISODIC,
        re.compile(
            r"\b(?:last (?:time|week|month|year|session)|yesterday|earlier|previously|ago|"
            r"before|when did|what happened|history)\b|上次|上周|上个月|之前|以前|昨天|前天|那次|去年|刚刚发生",
            re.IGNORECASE,
        ),
    ),
    (
        Layer.SEMANTIC,
        re.compile(
            r"\b(?:prefer\w*|like[sd]?|dislike[sd]?|favou?rite|hate[sd]?|allerg\w*|usually|"
            r"always|never|style|who am i|my name)\b|喜欢|偏好|不喜欢|觉得|爱吃|不吃|习惯|口味|风格|讨厌|过敏",
            re.IGNORECASE,
        ),
    ),
    (
        Layer.WORKING,
        re.compile(
            r"\b(?:continue|go on|where were we|carry on|as i just said|just now)\b|接着|继续|刚才|接下来",
            re.IGNORECASE,
        ),
    ),
    (
        Layer.PROCEDURAL,
        re.compile(
            r"\b(?:how (?:do|can|should) i|how to|steps to|procedure|workflow|skill)\b|帮我把|怎么做|如何|流程|步骤",
            re.IGNORECASE,
        ),
    ),
)

#: Always searched: facts and events (the cheap long-term layers).
DEFAULT = (Layer.SEMANTIC, Layer.EPISODIC)


def route(query: str) -> tuple[Layer, ...]:
    fired = (layer for layer, pattern in _RULES if pattern.search(query))
    return tuple(dict.fromkeys((*DEFAULT, *fired)))
