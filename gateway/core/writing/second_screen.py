"""The second injection screen applied to a request (issue 33 M5): every free-text field the rules
screen, and that the rules let through, is judged by the ``InjectionScreen`` in one call per
request. A hit counts as a rule hit does: a write or turn is quarantined, a field with no review
queue (session state, step output, relation properties) is refused."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from gateway.core.model.commands import MemoryWrite
from gateway.core.model.refusals import injection_refused
from gateway.core.ports.injection_screen import InjectionScreen
from gateway.core.writing.inputs import Prepared, WriteInput


def screened_texts(item: WriteInput) -> list[str]:
    """The fields of a write that the injection rules screen (``inputs.prepare``)."""
    return [item.content, *item.evidence, *item.metadata.values()]


async def quarantine_similar(
    screen: InjectionScreen, items: Sequence[WriteInput], prepared: Sequence[Prepared]
) -> list[Prepared]:
    """``prepared`` with every item the screen flags quarantined; items already quarantined by
    the rules, or not stored at all (small talk), are not sent to it."""
    out = list(prepared)
    owners: list[int] = []
    texts: list[str] = []
    for i, (item, p) in enumerate(zip(items, prepared, strict=True)):
        if not p.quarantined and not p.skipped:
            fields = screened_texts(item)
            owners += [i] * len(fields)
            texts += fields
    if not texts:
        return out
    for i, reason in zip(owners, await screen.find(texts), strict=True):
        if reason and not out[i].quarantined:
            out[i] = _quarantined(out[i], reason)
    return out


def unscreened(p: Prepared) -> Prepared:
    """``p`` acknowledged before the screen judged it: the applier screens it
    (``apply/late_screen.py``). A write the rules quarantined or that is not stored needs no
    second verdict."""
    if p.quarantined or p.skipped or not isinstance(p.command, MemoryWrite):
        return p
    return replace(p, command=replace(p.command, unscreened=True))


def _quarantined(p: Prepared, reason: str) -> Prepared:
    command = p.command
    if isinstance(command, MemoryWrite):
        command = replace(command, quarantined=True)
    return replace(p, command=command, quarantined=True, injection=reason, similar=True)


async def refuse_similar(screen: InjectionScreen, fields: Sequence[tuple[str, str]]) -> None:
    """INVALID_ARGUMENT naming the first ``(field, text)`` the screen flags (nothing is stored)."""
    if not fields:
        return
    for (field, _), reason in zip(fields, await screen.find([t for _, t in fields]), strict=True):
        if reason:
            raise injection_refused(field, reason)
