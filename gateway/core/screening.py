"""Content screening before anything is stored (seed 002 §3.1, §5.4): PII is redacted, never
stored raw; prompt-injection content is detected so the caller can reject or quarantine it."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

# Order matters: longer digit patterns (ID card, bank card) before phone numbers.
_PII: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("email", re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}")),
    # PRC resident ID: 6 region digits, birth date YYYYMMDD, 3 digits, check digit or X
    (
        "id_card",
        re.compile(
            r"(?<!\d)\d{6}(?:18|19|20)\d{2}(?:0[1-9]|1[0-2])(?:0[1-9]|[12]\d|3[01])\d{3}[\dXx](?!\d)"
        ),
    ),
    # bank card: 16-19 digits, optionally grouped by spaces or dashes
    ("bank_card", re.compile(r"(?<!\d)(?:\d[ -]?){15,18}\d(?!\d)")),
    # Chinese mobile: optional +86, 1[3-9]x xxxx xxxx
    ("phone", re.compile(r"(?<!\d)(?:\+?86[ -]?)?1[3-9]\d(?:[ -]?\d{4}){2}(?!\d)")),
    # international / western phone numbers: +CC and 7+ digits, or (xxx) xxx-xxxx
    ("phone", re.compile(r"(?<![\w+])\+\d{1,3}[ -]?(?:\(?\d{1,4}\)?[ -]?){2,4}\d{2,4}(?!\d)")),
    ("phone", re.compile(r"(?<!\d)\(?\d{3}\)?[ .-]\d{3}[ .-]\d{4}(?!\d)")),
)

_INJECTION = tuple(
    re.compile(p, re.IGNORECASE)
    for p in (
        r"ignore (?:all |any )?(?:the )?(?:previous|prior|above|earlier) (?:instructions|rules|prompts)",
        r"disregard (?:all |any )?(?:the )?(?:previous|prior|above|system) (?:instructions|rules|prompt)",
        r"(?:you are|act as) (?:now )?(?:in )?(?:developer|dan|jailbreak) mode",
        r"(?:reveal|print|show) (?:me )?(?:your|the) system prompt",
        r"override (?:the )?(?:system|safety) (?:prompt|rules|restrictions)",
        r"忽略(?:之前|以上|前面|所有|一切)?的?(?:所有)?(?:指令|指示|规则|系统限制|限制|提示)",
        r"(?:无视|绕过)(?:系统|安全)?(?:限制|规则|指令)",
        r"以后(?:所有|每次)?(?:的)?回答都(?:忽略|无视|不要遵守)",
    )
)


@dataclass(frozen=True, slots=True)
class Screened:
    text: str
    redactions: list[str] = field(default_factory=list)
    injection: str = ""  # the matched phrase, when the text tries to steer the model


def redact(text: str) -> tuple[str, list[str]]:
    kinds: list[str] = []
    for kind, pattern in _PII:
        text, n = pattern.subn(f"[{kind.upper()}]", text)
        if n and kind not in kinds:
            kinds.append(kind)
    return text, kinds


def find_injection(text: str) -> str:
    for pattern in _INJECTION:
        m = pattern.search(text)
        if m:
            return m.group(0)
    return ""


def screen(text: str) -> Screened:
    injection = find_injection(text)
    clean, kinds = redact(text)
    return Screened(text=clean, redactions=kinds, injection=injection)
