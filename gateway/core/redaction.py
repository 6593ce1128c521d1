"""The redaction engine: a ``Rule`` (kind, compiled pattern, optional validator) and the pass that
applies an ordered list of rules, replacing each validated match with ``[KIND]``."""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from re import Match, Pattern

Check = Callable[[str, Match[str]], bool]
_TRAILING = ".,;:!?)]}'\"`>"
_DIGIT = re.compile(r"[0-9]")


@dataclass(frozen=True, slots=True)
class Rule:
    """One detector.

    ``group`` is the part of the match that is replaced (0 = all of it; a label such as
    ``password:`` outside the group stays readable). ``check`` sees the group's text and the match
    and may veto it (Luhn, checksums, "looks random"). ``gate`` is a substring the text must
    contain for the rule to run at all (a cheap pre-filter); ``digits`` skips digit-free text.
    ``trim`` gives trailing punctuation back to the sentence instead of swallowing it.
    """

    kind: str
    pattern: Pattern[str]
    check: Check | None = None
    group: int = 0
    gate: str = ""
    digits: bool = False
    trim: bool = False

    @property
    def placeholder(self) -> str:
        return f"[{self.kind.upper()}]"


def apply(rules: Sequence[Rule], text: str, kinds: list[str]) -> str:
    """Run ``rules`` in order over ``text``; append each kind found to ``kinds`` (once)."""
    has_digit: bool | None = None
    for rule in rules:
        if rule.gate and rule.gate not in text:
            continue
        if rule.digits:
            if has_digit is None:
                has_digit = _DIGIT.search(text) is not None
            if not has_digit:
                continue
        text = rule.pattern.sub(_replacer(rule, kinds), text)
    return text


def _replacer(rule: Rule, kinds: list[str]) -> Callable[[Match[str]], str]:
    def replace(m: Match[str]) -> str:
        value = m.group(rule.group)
        tail = ""
        if rule.trim:
            stripped = value.rstrip(_TRAILING)
            tail, value = value[len(stripped) :], stripped
            if not value:
                return m.group(0)
        if rule.check is not None and not rule.check(value, m):
            return m.group(0)
        if rule.kind not in kinds:
            kinds.append(rule.kind)
        if rule.group == 0:
            return rule.placeholder + tail
        whole, start = m.group(0), m.start()
        s, e = m.span(rule.group)
        return whole[: s - start] + rule.placeholder + tail + whole[e - start :]

    return replace


# ---------------------------------------------------------------- shared validators


def luhn(digits: str) -> bool:
    """The Luhn (mod 10) check used by payment cards."""
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = ord(ch) - 48
        if i % 2:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


def entropy(s: str) -> float:
    """Shannon entropy in bits per character."""
    n = len(s)
    return -sum(c / n * math.log2(c / n) for c in Counter(s).values())


def class_switches(s: str) -> float:
    """Share of adjacent alphanumeric pairs that change class (upper/lower/digit).

    Random tokens switch about 60 % of the time; camelCase identifiers and words about 10-30 %.
    """
    prev = ""
    switches = pairs = 0
    for ch in s:
        cls = "u" if ch.isupper() else "l" if ch.islower() else "d" if ch.isdigit() else ""
        if not cls:
            continue
        if prev:
            pairs += 1
            switches += cls != prev
        prev = cls
    return switches / pairs if pairs else 0.0


_WORDISH = re.compile(r"[A-Z]?[a-z]{2,}|[A-Z]{2,}(?![a-z])")
_VOWELS = frozenset("aeiouyAEIOUY")


def word_coverage(s: str) -> float:
    """Share of ``s`` covered by word-like pieces (3+ letters, one case run, with a vowel).

    camelCase/PascalCase identifiers score 0.65-1.0; random base62 tokens about 0.25.
    """
    covered = sum(len(w) for w in _WORDISH.findall(s) if len(w) >= 3 and not _VOWELS.isdisjoint(w))
    return covered / len(s) if s else 0.0


def mixed(s: str) -> tuple[bool, bool, bool]:
    """(has an ASCII upper-case letter, a lower-case letter, a digit)."""
    return (
        any("A" <= c <= "Z" for c in s),
        any("a" <= c <= "z" for c in s),
        any("0" <= c <= "9" for c in s),
    )
