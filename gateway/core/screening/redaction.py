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
# Pre-checks shared by several rules, run at most once per text.
DIGIT = re.compile(r"[0-9]")
NUMBERISH = re.compile(r"[0-9][0-9 ().\-]{5,}[0-9]")  # 7+ chars of digits and separators
LONG_TOKEN = re.compile(r"[A-Za-z0-9+/=_\-]{24}")


@dataclass(frozen=True, slots=True)
class Rule:
    """One detector.

    ``group`` is the part of the match that is replaced (0 = all of it; a label such as
    ``password:`` outside the group stays readable). ``check`` sees the group's text and the match
    and may veto it (Luhn, checksums, "looks random"). Two cheap pre-filters decide whether the
    rule runs at all: ``gate``, substrings of which the lower-cased text must hold one, and
    ``needs``, a pre-check pattern that must match somewhere (shared between rules and run once).
    ``trim`` gives trailing punctuation back to the sentence instead of swallowing it.
    ``not_in_hex`` keeps a digit run that sits inside a hex identifier (a memory id, a digest, a
    commit id: 16+ hex characters with a letter among them) as part of that identifier.
    """

    kind: str
    pattern: Pattern[str]
    check: Check | None = None
    group: int = 0
    gate: tuple[str, ...] = ()
    needs: Pattern[str] | None = None
    trim: bool = False
    not_in_hex: bool = False

    @property
    def placeholder(self) -> str:
        return f"[{self.kind.upper()}]"


def apply(rules: Sequence[Rule], text: str, kinds: list[str]) -> str:
    """Run ``rules`` in order over ``text``; append each kind found to ``kinds`` (once).

    The pre-filters look at the text as it came in: a rule whose pre-filter passed may find
    nothing once earlier rules have replaced its candidate, never the other way round (a
    placeholder holds no digits and no keyword other than its own kind).
    """
    lower = text.lower()
    seen: dict[Pattern[str], bool] = {}
    for rule in rules:
        if rule.gate and not any(g in lower for g in rule.gate):
            continue
        if rule.needs is not None:
            ok = seen.get(rule.needs)
            if ok is None:
                ok = seen[rule.needs] = rule.needs.search(text) is not None
            if not ok:
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
        if rule.not_in_hex and inside_hex_id(m.string, *m.span(rule.group)):
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

_HEX = frozenset("0123456789abcdefABCDEF")
_ALNUM = re.compile(r"[0-9A-Za-z]")
HEX_ID_CHARS = 16


def inside_hex_id(text: str, start: int, end: int) -> bool:
    """Whether ``text[start:end]`` is part of one token of 16+ hex characters holding a letter
    (``ae9d20a3f13812345678a82e...``): an identifier, whatever digit runs it happens to hold."""
    if (start == 0 or not _ALNUM.match(text[start - 1])) and (
        end == len(text) or not _ALNUM.match(text[end])
    ):
        return False  # stands on its own
    lo, hi = start, end
    while lo > 0 and _ALNUM.match(text[lo - 1]):
        lo -= 1
    while hi < len(text) and _ALNUM.match(text[hi]):
        hi += 1
    token = text[lo:hi]
    return len(token) >= HEX_ID_CHARS and _HEX.issuperset(token) and not token.isdigit()


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
