"""Personal-data detectors (email, IBAN, PRC ID, payment card, SSN, passport, phone, IP): the redaction
rules and their validators (ID checksum and birth date, Luhn, number plans)."""

from __future__ import annotations

import ipaddress
import re
from datetime import date
from re import Match

from gateway.core.screening.redaction import DIGIT, NUMBERISH, Rule, luhn

# PRC administrative-division prefixes (province level) that start a resident ID.
_PROVINCE = r"(?:1[1-5]|2[1-3]|3[1-7]|4[1-6]|5[0-4]|6[1-5]|71|8[1-3])"
_ID_WEIGHTS = (7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2)
_ID_CHECK = "10X98765432"
_SEPARATED = re.compile(r"[ -]")


def _valid_date(y: int, m: int, d: int) -> bool:
    try:
        born = date(y, m, d)
    except ValueError:
        return False
    return born <= date.today()


def _cn_id18(value: str, _: Match[str]) -> bool:
    """18-digit resident ID: a real birth date and the ISO 7064 MOD 11-2 check character."""
    if not _valid_date(int(value[6:10]), int(value[10:12]), int(value[12:14])):
        return False
    total = sum(int(c) * w for c, w in zip(value[:17], _ID_WEIGHTS, strict=True))
    return _ID_CHECK[total % 11] == value[17].upper()


def _cn_id15(value: str, _: Match[str]) -> bool:
    """15-digit (pre-1999) resident ID: no check digit, so the 19YYMMDD birth date must be real."""
    return _valid_date(1900 + int(value[6:8]), int(value[8:10]), int(value[10:12]))


def _card(value: str, m: Match[str]) -> bool:
    """13-19 digits in one run or in the printed groups (4-4-4-4[-3], Amex 4-6-5, Diners 4-6-4),
    passing Luhn, and not a slice of a longer grouped number."""
    text = m.string
    if m.end() + 1 < len(text) and text[m.end()] in " -" and text[m.end() + 1].isdigit():
        return False
    if m.start() >= 2 and text[m.start() - 1] in " -" and text[m.start() - 2].isdigit():
        return False
    seps = set(_SEPARATED.findall(value))
    groups = _SEPARATED.split(value)
    digits = "".join(groups)
    if not 13 <= len(digits) <= 19 or len(seps) > 1:
        return False
    if len(groups) > 1:
        sizes = [len(g) for g in groups]
        four = all(s == 4 for s in sizes[:-1]) and 1 <= sizes[-1] <= 4
        if not (four or sizes in ([4, 6, 5], [4, 6, 4])):
            return False
    return luhn(digits)


def _nanp(value: str, _: Match[str]) -> bool:
    """North-American number: area code and exchange start 2-9, the area code is not N11."""
    digits = re.sub(r"\D", "", value)[-10:]
    return digits[1:3] != "11" and digits[4:6] != "11"


def _intl_phone(value: str, m: Match[str]) -> bool:
    end = m.end()
    if end < len(m.string) and m.string[end].isdigit():
        return False
    return 8 <= sum(c.isdigit() for c in value) <= 15


def _ipv4(value: str, _: Match[str]) -> bool:
    """Any address but loopback (127/8) and 0.0.0.0: they identify no one."""
    return not (value.startswith("127.") or value == "0.0.0.0")


def _ipv6(value: str, _: Match[str]) -> bool:
    try:
        addr = ipaddress.IPv6Address(value)
    except ValueError:
        return False
    groups = [g for g in value.split(":") if g]
    return len(groups) >= 3 and not (addr.is_loopback or addr.is_unspecified)


def _passport_number(value: str, _: Match[str]) -> bool:
    return sum(c.isdigit() for c in value) >= 6


_DOT = r"(?i:\(dot\)|\[dot\]|\{dot\}| dot )"
_TLDS = (
    r"com|org|net|edu|gov|io|co|de|uk|fr|cn|jp|info|biz|me|ai|dev|app|us|ca|au|nl|ch|es|it|se"
    r"|no|ru|in|br|eu"
)


def _iban(value: str, _: Match[str]) -> bool:
    """ISO 13616: 15-34 characters, and the MOD 97-10 check (letters as 10..35) gives 1."""
    compact = value.replace(" ", "")
    if not 15 <= len(compact) <= 34:
        return False
    moved = compact[4:] + compact[:4]
    return int("".join(str(int(c, 36)) for c in moved)) % 97 == 1


_HEX_COLONS = re.compile(r"[0-9A-Fa-f]?:[0-9A-Fa-f]*:")
_OCTET = r"(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])"

RULES: tuple[Rule, ...] = (
    Rule(
        "email",
        re.compile(
            r"(?<![A-Za-z0-9._%+\-])[A-Za-z0-9._%+\-]{1,64}@"
            r"[A-Za-z0-9\-]{1,63}(?:\.[A-Za-z0-9\-]{1,63})*\.[A-Za-z]{2,24}(?![A-Za-z0-9\-])"
        ),
        gate=("@",),
    ),
    # an address spelled out against scrapers: "alice at example dot org", "bob (at) mail (dot) com"
    Rule(
        "email",
        re.compile(
            r"(?<![A-Za-z0-9._%+\-])[A-Za-z0-9._%+\-]{1,64} ?(?i:\(at\)|\[at\]|\{at\}| at ) ?"
            rf"[A-Za-z0-9\-]{{1,63}}(?: ?{_DOT} ?[A-Za-z0-9\-]{{1,63}}){{0,3}}? ?{_DOT} ?"
            rf"(?i:{_TLDS})(?![A-Za-z0-9])"
        ),
        gate=("at",),
    ),
    # IBAN: country, check digits, 11-30 letters/digits, plain or in groups of 4 (issue 33 L6)
    Rule(
        "iban",
        re.compile(
            r"(?<![A-Za-z0-9])[A-Z]{2}[0-9]{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,4})?"
            r"(?![A-Za-z0-9])"
        ),
        check=_iban,
        needs=DIGIT,
    ),
    # PRC resident ID, 18 digits: region, YYYYMMDD, sequence, check digit (0-9 or X).
    Rule(
        "cn_id",
        re.compile(
            rf"(?<![0-9]){_PROVINCE}[0-9]{{4}}(?:18|19|20)[0-9]{{2}}(?:0[1-9]|1[0-2])"
            r"(?:0[1-9]|[12][0-9]|3[01])[0-9]{3}[0-9Xx](?![0-9])"
        ),
        check=_cn_id18,
        needs=NUMBERISH,
        not_in_hex=True,
    ),
    # Payment cards: Visa 4, Mastercard 2/5, Amex 34/37, Discover/UnionPay 6, JCB/Diners 3.
    Rule(
        "card",
        re.compile(r"(?<![0-9])[2-6][0-9]{3}(?:[ -]?[0-9]){9,15}(?![0-9])"),
        check=_card,
        needs=NUMBERISH,
        not_in_hex=True,
    ),
    # PRC resident ID, 15 digits (issued before 1999): region, YYMMDD, sequence.
    Rule(
        "cn_id",
        re.compile(
            rf"(?<![0-9]){_PROVINCE}[0-9]{{6}}(?:0[1-9]|1[0-2])(?:0[1-9]|[12][0-9]|3[01])"
            r"[0-9]{3}(?![0-9])"
        ),
        check=_cn_id15,
        needs=NUMBERISH,
        not_in_hex=True,
    ),
    # US social security number: AAA-GG-SSSS (no 000/666/9xx area, 00 group, 0000 serial) ...
    Rule(
        "ssn",
        re.compile(r"(?<![0-9\-])(?!000|666|9)[0-9]{3}-(?!00)[0-9]{2}-(?!0000)[0-9]{4}(?![0-9\-])"),
        needs=NUMBERISH,
        not_in_hex=True,
    ),
    # ... or spaced / run together right after the word SSN.
    Rule(
        "ssn",
        re.compile(
            r"(?i:(?<![A-Za-z])(?:ssn|social security(?: number| no\.?)?))[^0-9\n]{0,12}?"
            r"((?!000|666|9)[0-9]{3} ?(?!00)[0-9]{2} ?(?!0000)[0-9]{4})(?![0-9])"
        ),
        group=1,
        gate=("ssn", "social security"),
        needs=NUMBERISH,
        not_in_hex=True,
    ),
    # Passports: PRC E/G series on their own; any 6-9 char number close after passport/护照.
    Rule(
        "passport",
        re.compile(r"(?<![A-Za-z0-9])(?:E[0-9]{8}|E[A-HJ-NP-Z][0-9]{7}|G[0-9]{8})(?![A-Za-z0-9])"),
        needs=NUMBERISH,
        not_in_hex=True,
    ),
    Rule(
        "passport",
        re.compile(
            r"(?i:passport|护照)[^\n0-9]{0,24}?(?<![A-Za-z0-9])([A-Z]{0,2}[0-9][A-Z0-9]{5,8})"
            r"(?![A-Za-z0-9])"
        ),
        check=_passport_number,
        group=1,
        gate=("passport", "护照"),
        needs=DIGIT,
    ),
    # PRC mobile: optional +86/0086, 1[3-9]X XXXX XXXX.
    Rule(
        "phone",
        re.compile(r"(?<![0-9])(?:(?:\+|00)86[ -]?)?1[3-9][0-9](?:[ -]?[0-9]{4}){2}(?![0-9])"),
        needs=NUMBERISH,
        not_in_hex=True,
    ),
    # PRC landline: area code 010/02X/0XXX with a dash or in brackets, then 7-8 digits.
    Rule(
        "phone",
        re.compile(
            r"(?<![0-9\-])(?:\(0(?:10|2[0-9]|[3-9][0-9]{2})\) ?|0(?:10|2[0-9]|[3-9][0-9]{2})-)"
            r"[0-9]{7,8}(?![0-9\-])"
        ),
        needs=NUMBERISH,
        not_in_hex=True,
    ),
    # North America: (415) 555-0123, 415-555-0123, 415.555.0123, 4155550123, +1 …
    Rule(
        "phone",
        re.compile(
            # not glued to letters: "639422 2122ad" is a hex group, not a phone (issue 33 L6)
            r"(?<![0-9A-Za-z\-])(?:\+?1[ .\-]?)?(?:\([2-9][0-9]{2}\)[ .\-]?|[2-9][0-9]{2}[ .\-]?)"
            r"[2-9][0-9]{2}[ .\-]?[0-9]{4}(?![0-9A-Za-z\-])"
        ),
        check=_nanp,
        needs=NUMBERISH,
        not_in_hex=True,
    ),
    # Other international numbers: +CC then 8-15 digits in groups.
    Rule(
        "phone",
        re.compile(r"(?<![A-Za-z0-9+])\+[1-9][0-9]{0,3}(?:[ .\-]?\(?[0-9]{1,5}\)?){1,5}"),
        check=_intl_phone,
        gate=("+",),
        needs=NUMBERISH,
        not_in_hex=True,
    ),
    Rule(
        "ip",
        re.compile(rf"(?<![A-Za-z0-9_.]){_OCTET}(?:\.{_OCTET}){{3}}(?![0-9]|\.[0-9])"),
        check=_ipv4,
        needs=NUMBERISH,
        not_in_hex=True,
    ),
    Rule(
        "ip",
        re.compile(
            r"(?<![A-Za-z0-9_:.])(?:[0-9A-Fa-f]{1,4}|:)(?::[0-9A-Fa-f]{0,4}){2,7}"
            r"(?![A-Za-z0-9_:])"
        ),
        check=_ipv6,
        gate=(":",),
        needs=_HEX_COLONS,
    ),
)
