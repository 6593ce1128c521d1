"""A memory's versions as differences: each version's text against the one before, word by word
(a Chinese character is a word), and the fields that changed. Returns escaped HTML."""

from __future__ import annotations

import difflib
import html
import re
from collections.abc import Sequence
from datetime import datetime

from gateway.client import types as t

_TOKEN = re.compile(r"\s+|[\u3400-\u9fff]|[^\s\u3400-\u9fff]+")
FIELDS = (
    "status",
    "layer",
    "type",
    "confidence",
    "importance",
    "slot",
    "slot_value",
    "source_agent",
    "task_id",
)


def _h(text: str) -> str:
    return html.escape(text, quote=True)


def text_diff(old: str, new: str) -> str:
    """``new`` with what was removed from ``old`` in <del> and what was added in <ins>."""
    a, b = _TOKEN.findall(old), _TOKEN.findall(new)
    out: list[str] = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if op == "equal":
            out.append(_h("".join(a[i1:i2])))
            continue
        if i2 > i1:
            out.append(f"<del>{_h(''.join(a[i1:i2]))}</del>")
        if j2 > j1:
            out.append(f"<ins>{_h(''.join(b[j1:j2]))}</ins>")
    return "".join(out)


def _value(m: t.Memory, name: str) -> str:
    value = getattr(m, name)
    return f"{value:.2f}" if isinstance(value, float) else str(value or "")


def field_changes(old: t.Memory, new: t.Memory) -> list[tuple[str, str, str]]:
    return [
        (name, _value(old, name), _value(new, name))
        for name in FIELDS
        if _value(old, name) != _value(new, name)
    ]


def _stamp(value: datetime | None) -> str:
    return value.strftime("%Y-%m-%d %H:%M:%S") if value else "now"


def versions(history: Sequence[t.Memory]) -> str:
    """Every version, oldest first, one below the other (never cut off): the first in full, each
    later one as its difference from the one before."""
    parts = []
    previous: t.Memory | None = None
    for v in history:
        held = f"held {_stamp(v.valid_from or v.created_at)} → {_stamp(v.valid_to)}"
        body = _h(v.content) if previous is None else text_diff(previous.content, v.content)
        changes = (
            ""
            if previous is None
            else "".join(
                f"<li>{_h(name)}: <del>{_h(a) or '—'}</del> → <ins>{_h(b) or '—'}</ins></li>"
                for name, a, b in field_changes(previous, v)
            )
        )
        parts.append(
            f'<section class="version" id="version-{v.version}">'
            f"<h3>version {v.version} <span class='meta'>{_h(v.status)} · {_h(held)} · "
            f"by {_h(v.source_agent)}</span></h3>"
            f'<div class="content diff">{body}</div>'
            + (f'<ul class="changes">{changes}</ul>' if changes else "")
            + "</section>"
        )
        previous = v
    return "".join(parts)
