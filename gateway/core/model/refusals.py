"""Refusing a free-text field that reads as a prompt injection, for the fields that have no review
queue to quarantine into (session state, step output and error, relation properties): the call
fails with INVALID_ARGUMENT naming the field and nothing is stored."""

from __future__ import annotations

from gateway.core.model.errors import InvalidArgument
from gateway.core.screening import injection


def refuse_injection(text: str, field: str) -> None:
    """INVALID_ARGUMENT naming ``field`` when ``text`` looks like a prompt injection: for the
    free-text fields that have no review queue to quarantine into (session state, step output
    and error, relation properties; issue 33 M5). Nothing is stored."""
    phrase = injection.find(text)
    if phrase:
        raise InvalidArgument(
            f"{field} looks like a prompt injection ({phrase[:60]!r}): not stored; send data, "
            "not instructions to the model",
            field=field,
        )
