"""Screening findings of issue 33 L6: hex groups are not phones; IBANs and spelled-out e-mail
addresses are redacted; real phones still are."""

from __future__ import annotations

import pytest

from gateway.core.screening.screening import redact


@pytest.mark.parametrize(
    "text",
    [
        "build 639422 2122ad is green",
        "commit 415555 0123ff merged",
        "color #415 555 0123ab",
    ],
)
def test_hex_groups_are_not_phones(text: str) -> None:
    assert redact(text) == (text, [])


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("Pay to DE89 3704 0044 0532 0130 00 by Friday", "iban"),
        ("IBAN GB82WEST12345698765432", "iban"),
        ("FR14 2004 1010 0505 0001 3M02 606 is the account", "iban"),
        ("write to alice at example dot org", "email"),
        ("bob (at) mail (dot) com", "email"),
        ("carol [at] corp [dot] io please", "email"),
        ("call 415-555-0123 tomorrow", "phone"),
        ("call (415) 555 0123.", "phone"),
    ],
)
def test_redacted(text: str, kind: str) -> None:
    clean, kinds = redact(text)
    assert kind in kinds, (clean, kinds)


@pytest.mark.parametrize(
    "text",
    [
        "DE89 is the model number",  # too short for an IBAN
        "GB82 WEST 1234 5698 7654 31",  # fails mod-97
        "we met at home dot matrix show",
        "look at this dot plot",
        "arrive at noon",
    ],
)
def test_not_redacted(text: str) -> None:
    assert redact(text) == (text, [])


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("login with admin:S3cr3t!x please", "admin:"),
        ("creds bob.smith:P@ssw0rd99", "bob.smith:"),
    ],
)
def test_login_pairs_lose_their_password(text: str, kept: str) -> None:
    clean, kinds = redact(text)
    assert "password" in kinds and kept + "[PASSWORD]" in clean, clean


@pytest.mark.parametrize(
    "text",
    [
        "version:1.2.3-beta",
        "build:2024-01-01",
        "meet at 10:30 today",
        "contact:joe1@example.com",
        "ratio:3.5x",
        "note: call me at 5pm!",
    ],
)
def test_colon_pairs_that_are_not_logins(text: str) -> None:
    assert "password" not in redact(text)[1]
