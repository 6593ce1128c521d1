"""Refusing what may not be stored at all, with INVALID_ARGUMENT naming the field (nothing is
stored): a free-text field that reads as a prompt injection where there is no review queue to
quarantine into (session state, step output and error, relation properties), and an id that
holds a secret or a government/bank number (ids are stored and exported as they are)."""

from __future__ import annotations

from gateway.core.model.errors import InvalidArgument
from gateway.core.screening import injection
from gateway.core.screening.screening import redact


def refuse_injection(text: str, field: str) -> None:
    """INVALID_ARGUMENT naming ``field`` when ``text`` looks like a prompt injection: for the
    free-text fields that have no review queue to quarantine into (session state, step output
    and error, relation properties; issue 33 M5). Nothing is stored."""
    phrase = injection.find(text)
    if phrase:
        raise injection_refused(field, repr(phrase[:60]))


def injection_refused(field: str, why: str) -> InvalidArgument:
    """The refusal of a free-text field that reads as a prompt injection; ``why`` is the phrase
    the rules found (quoted) or the second screen's reason (``similar to a known attack, …``)."""
    return InvalidArgument(
        f"{field} looks like a prompt injection ({why}): not stored; send data, not "
        "instructions to the model",
        field=field,
    )


#: kinds an id must never be: a reference that is a secret or a government/bank number would be
#: stored, exported and logged raw (ids are not rewritten); e-mail, phone and IP stay allowed
#: as user ids (issue 33 M4)
ID_REFUSED_KINDS = frozenset(
    {"private_key", "jwt", "api_key", "password", "iban", "cn_id", "card", "ssn", "passport"}
)


def refuse_sensitive_id(value: str, field: str) -> None:
    """INVALID_ARGUMENT naming ``field`` when the id holds a secret or such a number."""
    if not value:
        return
    found = sorted(set(redact(value)[1]) & ID_REFUSED_KINDS)
    if found:
        raise InvalidArgument(
            f"{field} holds what looks like a {'/'.join(found)}: ids are stored and exported as "
            "they are, so use an opaque id (a uuid) instead",
            field=field,
        )
