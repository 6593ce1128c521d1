"""Content screening before anything is stored (seed 002 §3.1, §5.4): secrets and PII are redacted,
never stored raw; prompt injection is detected on normalised text so the caller can quarantine it;
``escape_block`` keeps recalled content from closing the ``<memory>`` block.

Redaction runs the rules of ``credentials.py`` then ``pii.py`` in order, then the generic
random-token rule; each validated match becomes ``[KIND]``. ``KINDS`` below is the reference table
(docs/SECURITY.md repeats it). Deliberately left alone: dates, times, prices, versions with fewer
than four parts, hex strings of any length (UUIDs, SHA digests, commit ids: ids, not secrets, unless
labelled ``token=``/``api_key=``...) with the digit runs inside them, digit runs that fail their
check, loopback addresses.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from gateway.core.screening import credentials, injection, pii, redaction

_RULES: tuple[redaction.Rule, ...] = (*credentials.RULES, *pii.RULES, credentials.RANDOM_TOKEN)

# kind -> (what is matched, how a match is validated). The placeholder is "[KIND]".
KINDS: dict[str, tuple[str, str]] = {
    "private_key": (
        "PEM block -----BEGIN … PRIVATE KEY----- … -----END … PRIVATE KEY----- (RSA, EC, DSA, "
        "OPENSSH, ENCRYPTED, PGP … BLOCK), multi-line; a header without END takes the base64 lines "
        "after it",
        "none (the header is unambiguous)",
    ),
    "jwt": ("eyJ<base64url>.<base64url>.<base64url or empty>", "none (header must start eyJ)"),
    "api_key": (
        "OpenAI sk-/sk-proj-…, Anthropic sk-ant-…, AWS key id AKIA/ASIA/… + 16, GitHub ghp_/gho_/"
        "ghu_/ghs_/ghr_/github_pat_, Slack xoxb-/xoxp-/…, Stripe sk_live_/rk_live_, Google AIza…, "
        "GitLab glpat-",
        "OpenAI: the tail holds a digit and a letter; others: the prefix",
    ),
    "password": (
        "value after password/passwd/passcode/passphrase/pwd/密码/口令 + ':' '=' '：' (label kept); "
        "'password is X' / '密码是X'; the password in scheme://user:PASSWORD@host; a bare login "
        "pair user:PASSWORD",
        "after 'is'/'是': at least 4 chars with a digit, a symbol or mixed case (not a plain word); "
        "bare pair: 6-64 chars with a letter, a digit and one of !@#$%^&*?~+=, not an e-mail",
    ),
    "secret": (
        "value after aws_secret_access_key/secret_key/client_secret/api_key/access_token/token/"
        "secret/Bearer + ':' '=' (label kept); a lone 40-char base64 string (AWS secret key); "
        "any other token >= 24 chars of [A-Za-z0-9+=_-]",
        "labelled: >= 8 chars with a digit and a letter, or >= 16 mixed-case; 40-char and "
        "generic: upper, lower and a digit (so never pure hex), upper/lower/digit class switches "
        "on >= 30 % (40-char) / 35 % (generic) of adjacent pairs, < 60 % word-like pieces (so not "
        "camelCase identifiers); generic also Shannon entropy >= 3.5 bits/char",
    ),
    "email": (
        "local@domain.tld; spelled out: local at domain dot tld, (at)/[at]/{at} and (dot)/[dot]",
        "spelled out: a common TLD (com, org, net, io, de, cn, …)",
    ),
    "iban": (
        "IBAN: 2 letters, 2 check digits, 11-30 letters/digits, plain or in groups of 4",
        "15-34 characters; ISO 13616 MOD 97-10 check",
    ),
    "cn_id": (
        "PRC resident ID: 18 digits (region, YYYYMMDD, sequence, check 0-9/X) or 15 digits "
        "(region, YYMMDD, sequence)",
        "province code 11-82; real birth date not in the future; 18-digit: MOD 11-2 check character",
    ),
    "card": (
        "payment card, 13-19 digits starting 2-6, plain or grouped 4-4-4-4(-3), 4-6-5, 4-6-4 by "
        "one kind of separator (space or dash)",
        "Luhn; not a slice of a longer grouped number",
    ),
    "ssn": (
        "US SSN AAA-GG-SSSS; 'AAA GG SSSS'/9 digits right after 'SSN'",
        "no 000/666/9xx, 00, 0000",
    ),
    "passport": (
        "PRC passport E + 8 digits, E + letter + 7 digits, G + 8 digits; after 'passport'/'护照' "
        "(within 24 chars): 6-9 letters/digits",
        "after the word: at least 6 digits",
    ),
    "phone": (
        "PRC mobile (+86/0086) 1[3-9]X XXXX XXXX; PRC landline 0XX(X)-XXXXXXX(X) or (0XX) …; "
        "North America (415) 555-0123, 415-555-0123, 415.555.0123, 4155550123, +1 …; "
        "other +CC numbers",
        "NANP: area code and exchange start 2-9, not N11; +CC: 8-15 digits",
    ),
    "ip": (
        "IPv4 dotted quad (so a four-part version 10.0.0.1 is redacted too); IPv6 full or '::' "
        "compressed",
        "IPv4: each octet <= 255, loopback 127/8 and 0.0.0.0 kept; IPv6: parses (ipaddress), "
        ">= 3 groups, not ::1 or ::",
    ),
}


@dataclass(frozen=True, slots=True)
class Screened:
    text: str
    redactions: list[str] = field(default_factory=list)  # kinds found, in rule order
    injection: str = ""  # the matched phrase (normalised), when the text tries to steer the model


# Full-width digits, letters and @ + - . (typed by CJK input methods) and their ASCII twins.
_WIDE = {c: c - 0xFEE0 for c in (*range(0xFF10, 0xFF1B), *range(0xFF20, 0xFF3B))}
_WIDE.update({c: c - 0xFEE0 for c in (*range(0xFF41, 0xFF5B), 0xFF0B, 0xFF0D, 0xFF0E)})
_WIDE_ALNUM = re.compile("[\uff10-\uff19\uff21-\uff3a\uff41-\uff5a]")


def redact(text: str) -> tuple[str, list[str]]:
    """``text`` with every secret and piece of personal data replaced by ``[KIND]``, and the
    kinds found.

    A value typed in full-width characters (``１３８１２３４５６７８``) is found too: when the text
    holds any, it is screened again with them folded to ASCII, and if that finds more, the folded
    text is the one returned (full-width digits and letters become ASCII; other text is kept).
    """
    kinds: list[str] = []
    clean = redaction.apply(_RULES, text, kinds)
    if text.isascii() or not _WIDE_ALNUM.search(clean):
        return clean, kinds
    folded = clean.translate(_WIDE)
    more = list(kinds)
    again = redaction.apply(_RULES, folded, more)
    return (again, more) if again != folded else (clean, kinds)


def find_injection(text: str) -> str:
    """The prompt-injection phrase in ``text`` after normalisation, or "" when there is none."""
    return injection.find(text)


def clean(text: str) -> str:
    """``text`` with secrets and personal data redacted: the one helper for every free-text field
    that is not content (names, properties, reasons, step output, state, audit text)."""
    return redact(text)[0]


def clean_map(values: Mapping[str, str]) -> dict[str, str]:
    """Keys and values of ``values`` cleaned (two keys that clean alike: the last one wins)."""
    return {clean(k): clean(v) for k, v in values.items()}


def screen_all(texts: Iterable[str]) -> tuple[list[str], list[str], str]:
    """Screen several texts as one field: the cleaned texts, the kinds redacted, the first
    injection phrase found ("" when none)."""
    out: list[str] = []
    kinds: list[str] = []
    found = ""
    for text in texts:
        s = screen(text)
        out.append(s.text)
        kinds += [k for k in s.redactions if k not in kinds]
        found = found or s.injection
    return out, kinds, found


def screen(text: str) -> Screened:
    found = find_injection(text)
    clean, kinds = redact(text)
    return Screened(text=clean, redactions=kinds, injection=found)


# <memory>, </memory>, < / Memory >, <memory id="x">, a zero-width character inside the name,
# full-width or Cyrillic/Greek look-alike letters, full-width brackets, an unclosed "</memory".
_ZW = "[\u00ad\u200b-\u200f\u2060\ufeff]*"
_LOOKALIKE = {"m": "мМ", "e": "еЕ", "o": "оОοΟ", "y": "уУ"}
_NAME = _ZW.join(
    f"[{c}{c.upper()}{chr(ord(c) + 0xFEE0)}{chr(ord(c.upper()) + 0xFEE0)}{_LOOKALIKE.get(c, '')}]"
    for c in "memory"
)
_MEMORY_TAG = re.compile(
    r"[<＜]" + _ZW + r"\s*(/?)\s*" + _ZW + _NAME + r"(?![A-Za-z0-9_\-])([^<>＜＞\n]{0,80})([>＞]?)"
)


def escape_block(text: str) -> str:
    """Neutralise memory-block delimiters inside content: ``</memory>`` becomes ``‹/memory›``
    (single angle quotation marks), still readable, no longer a tag."""
    return _MEMORY_TAG.sub(_escaped_tag, text)


def _escaped_tag(m: re.Match[str]) -> str:
    return f"‹{m.group(1)}memory{m.group(2)}{'›' if m.group(3) else ''}"


#: every character ``str.splitlines`` breaks a line at (CR LF counts once)
_LINE_BREAK = re.compile(r"\r\n|[\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029]")
#: what a line break inside a memory's content becomes in the memory block
LINE_BREAK_MARK = " ⏎ "


def one_line(text: str) -> str:
    """Content on one line of the memory block: every line break becomes `` ⏎ ``, so stored text
    cannot start a line that looks like another item (``- [semantic · global · …]``) or the
    block's own header or footer (issue 33 M3)."""
    return _LINE_BREAK.sub(LINE_BREAK_MARK, text)
