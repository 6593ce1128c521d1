"""Credential detectors (private keys, JWTs, vendor API keys, passwords, labelled and random-looking
secrets): the redaction rules that run before the personal-data rules in ``pii.py``."""

from __future__ import annotations

import re
from re import Match

from gateway.core.screening.redaction import (
    LONG_TOKEN,
    Rule,
    class_switches,
    entropy,
    mixed,
    word_coverage,
)

# A token boundary for key-like strings: not preceded/followed by another token character.
_TOK = r"A-Za-z0-9_\-"
_PEM_BEGIN = r"-----BEGIN (?:[A-Z0-9]+ ){0,3}PRIVATE KEY(?: BLOCK)?-----"
_PEM_END = r"-----END (?:[A-Z0-9]+ ){0,3}PRIVATE KEY(?: BLOCK)?-----"

_VENDOR_PREFIXES = (
    *("sk-ant-", "sk_live_", "sk_test_", "rk_live_", "rk_test_", "ghp_", "gho_", "ghu_", "ghs_"),
    *("ghr_", "github_pat_", "xox", "aiza", "glpat-", "akia", "asia", "abia", "acca", "agpa"),
    *("aida", "aroa", "aipa", "anpa", "anva", "apka", "hf_"),
)

# Placeholders already in the text (a re-screened value) are never secrets themselves.
_NOT_PLACEHOLDER = r"(?![\"']?\[[A-Z_]+\])"


def _looks_like_password(value: str, _: Match[str]) -> bool:
    """After a weak label ("my password is …"): not a plain word — a digit, a symbol or MiXed case."""
    if len(value) < 4:
        return False
    upper, lower, digit = mixed(value)
    symbol = any(not c.isalnum() for c in value)
    return digit or symbol or (upper and lower and not value[1:].islower())


def _looks_like_secret(value: str, _: Match[str]) -> bool:
    """After a label such as ``api_key=``: long enough and not a plain word."""
    upper, lower, digit = mixed(value)
    if len(value) >= 8 and digit and (upper or lower):
        return True
    return len(value) >= 16 and upper and lower


def _aws_secret(value: str, _: Match[str]) -> bool:
    upper, lower, digit = mixed(value)
    return upper and lower and digit and class_switches(value) >= 0.3 and word_coverage(value) < 0.6


def _random_token(value: str, _: Match[str]) -> bool:
    """A generic secret: >= 24 chars mixing upper, lower and digits (so never pure hex), random-
    looking: random base62 switches character class on ~60 % of adjacent pairs, carries ~4.2
    bits/char and is mostly not made of word-like pieces; camelCase identifiers, words with a
    number, ids and slugs fail at least one bar. Random 24-char tokens pass ~96 % of the time,
    32+ chars ~99 %."""
    upper, lower, digit = mixed(value)
    if not (upper and lower and digit):
        return False
    core = value.strip("=_-")
    if len(core) < 24:
        return False
    return class_switches(core) >= 0.35 and entropy(core) >= 3.5 and word_coverage(core) < 0.6


def _sk_key(value: str, _: Match[str]) -> bool:
    tail = value.split("-", 1)[1] if value.startswith("sk-") else value
    upper, lower, digit = mixed(tail)
    return digit and (upper or lower)


RULES: tuple[Rule, ...] = (
    # PEM private keys: the whole block, BEGIN to END (multi-line) ...
    Rule(
        "private_key",
        re.compile(_PEM_BEGIN + r"(?:[A-Za-z0-9+/=\s:,.]|-(?!----))*" + _PEM_END),
        gate=("private key",),
    ),
    # ... or a pasted key cut short: the header and the base64 lines that follow it.
    Rule(
        "private_key",
        re.compile(_PEM_BEGIN + r"(?:\s+(?:[A-Za-z0-9+/=]{16,}|[A-Za-z-]+: [^\n]*))*"),
        gate=("private key",),
    ),
    # JSON Web Token: base64url header starting {" (eyJ), payload, optional signature.
    Rule(
        "jwt",
        re.compile(rf"(?<![{_TOK}])eyJ[{_TOK}]{{8,}}\.[{_TOK}]{{8,}}\.[{_TOK}]*"),
        gate=("eyj",),
    ),
    # Vendor API keys with a recognisable prefix.
    Rule(
        "api_key",
        re.compile(
            rf"(?<![{_TOK}])(?:"
            r"sk-ant-[A-Za-z0-9_\-]{20,}"  # Anthropic
            r"|(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}"  # Stripe
            r"|(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA|APKA)[A-Z0-9]{16}"  # AWS key id
            r"|gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}"  # GitHub
            r"|xox[abposre]-[A-Za-z0-9\-]{10,}"  # Slack
            r"|AIza[A-Za-z0-9_\-]{35}"  # Google
            r"|glpat-[A-Za-z0-9_\-]{20,}"  # GitLab
            r"|hf_[A-Za-z0-9]{30,}"  # Hugging Face access token
            rf")(?![{_TOK}])"
        ),
        gate=_VENDOR_PREFIXES,
    ),
    # OpenAI (sk-, sk-proj-, sk-svcacct-, ...): the tail must hold a digit and a letter.
    Rule(
        "api_key",
        re.compile(rf"(?<![{_TOK}])sk-[A-Za-z0-9_\-]{{20,}}"),
        check=_sk_key,
        gate=("sk-",),
    ),
    # Credentials inside a URL: scheme://user:PASSWORD@host keeps the user and host.
    Rule(
        "password",
        re.compile(
            r"(?<![A-Za-z0-9+.\-])[A-Za-z][A-Za-z0-9+.\-]{1,15}://[^\s/:@]{1,64}:"
            rf"({_NOT_PLACEHOLDER}[^\s/@]{{1,128}})@"
        ),
        group=1,
        gate=("://",),
    ),
    # password: VALUE / passwd=VALUE / pwd: VALUE / 密码：VALUE — the label stays, the value goes.
    Rule(
        "password",
        re.compile(
            r"(?i:(?<![A-Za-z0-9_])(?:password|passwd|passcode|passphrase|pwd)"
            r"|(?:登录|支付|银行卡|账户|账号)?密码|口令)"
            rf"[\"']?[ \t]*[:=：][ \t]*[\"']?({_NOT_PLACEHOLDER}[!-~]{{1,128}})"
        ),
        group=1,
        trim=True,
        gate=("pass", "pwd", "密码", "口令"),
    ),
    # A bare login pair "user:P@ssw0rd!" (issue 33 L6): the user stays, the value goes when it has
    # a letter, a digit and one of !@#$%^&*?~+= (not a version, date, time or e-mail address).
    Rule(
        "password",
        re.compile(
            r"(?<![\w/@.:\-])[A-Za-z][\w.\-]{1,31}:"
            r"((?=[^\s:/]*[A-Za-z])(?=[^\s:/]*[0-9])(?=[^\s:/]*[!@#$%^&*?~+=])"
            r"(?![^\s:/]*@[A-Za-z0-9\-]+\.[A-Za-z])[^\s:/]{6,64})(?![^\s,;])"
        ),
        group=1,
        trim=True,
        gate=(":",),
    ),
    # "my password is hunter2" / "密码是abc123": only when the value is not a plain word.
    Rule(
        "password",
        re.compile(
            r"(?i:(?<![A-Za-z0-9_])(?:password|passwd|passcode|pwd)[ \t]+(?:is|was)[ \t]+"
            rf"|密码(?:是|为)[ \t]*)[\"']?({_NOT_PLACEHOLDER}[!-~]{{1,128}})"
        ),
        check=_looks_like_password,
        group=1,
        trim=True,
        gate=("pass", "pwd", "密码"),
    ),
    # Labelled secrets: aws_secret_access_key=…, api_key: …, client_secret=…, token=…, Bearer …
    Rule(
        "secret",
        re.compile(
            r"(?i:(?<![A-Za-z0-9])(?:aws_secret_access_key|secret_access_key|secret[_\-]?key"
            r"|client[_\-]?secret|api[_\-]?secret|api[_\-]?key|apikey|access[_\-]?token"
            r"|auth[_\-]?token|refresh[_\-]?token|private[_\-]?key|token|secret|bearer))"
            r"[\"']?(?:[ \t]*[:=：][ \t]*|[ \t]+(?=[A-Za-z0-9+/]{20,}))[\"']?"
            rf"({_NOT_PLACEHOLDER}[A-Za-z0-9+/=_.~\-]{{8,}})"
        ),
        check=_looks_like_secret,
        group=1,
        gate=("secret", "key", "token", "bearer"),
    ),
    # An AWS secret access key on its own: exactly 40 base64 characters, mixed, random-looking.
    Rule(
        "secret",
        re.compile(r"(?<![A-Za-z0-9+/=_\-])[A-Za-z0-9+/]{40}(?![A-Za-z0-9+/=_\-])"),
        check=_aws_secret,
        needs=LONG_TOKEN,
    ),
)

# The generic catch-all runs last, after the personal-data rules, on what is left.
RANDOM_TOKEN = Rule(
    "secret",
    re.compile(r"(?<![A-Za-z0-9+=_\-])[A-Za-z0-9+=_\-]{24,}(?![A-Za-z0-9+=_\-])"),
    check=_random_token,
    needs=LONG_TOKEN,
)
