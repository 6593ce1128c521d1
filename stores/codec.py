"""Value encodings every adapter shares: exact UTC times as epoch microseconds, compact JSON."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar

from gateway.core.model.models import Layer, Status

T = TypeVar("T")
#: stored value -> enum member: a dict lookup is 10x cheaper than calling the enum
LAYER_OF: dict[str, Layer] = {x.value: x for x in Layer}
STATUS_OF: dict[str, Status] = {x.value: x for x in Status}

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICRO = timedelta(microseconds=1)


def to_micros(at: datetime) -> int:
    """Microseconds since the epoch, UTC (exact and sortable); a naive datetime is taken as UTC."""
    if at.tzinfo is None:
        at = at.replace(tzinfo=UTC)
    return (at - _EPOCH) // _MICRO


def from_micros(us: int) -> datetime:
    return _EPOCH + _MICRO * int(us)  # 2x faster than timedelta(microseconds=us), as exact


# JSON. Each store keeps the format it has always written, byte for byte: Lua scripts compare
# stored strings, digests cover encoded bytes, and rows written by an older memgate stay as they
# are. Three formats, each pinned by tests/unit/test_codec.py:


def dump_json(value: object, sort_keys: bool = False) -> str:
    """Compact, non-ASCII kept: ``{"a":"é"}`` — rows, Redis values and Lua arguments."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=sort_keys)


def dump_json_ascii(value: object, sort_keys: bool = False) -> str:
    """``json.dumps``'s own format: ``{"a": "\\u00e9"}`` (spaced, non-ASCII escaped) — ledger
    settings, a pending fact's sessions, working-memory erasure lists, change-stream ids, the
    vector index's manifest and sidecars (their digests cover these bytes)."""
    return json.dumps(value, sort_keys=sort_keys)


def dump_json_spaced(value: object) -> str:
    """Spaced, non-ASCII kept: ``{"a": "é"}`` — the formation transcript's turn metadata."""
    return json.dumps(value, ensure_ascii=False)


def parse_json(raw: str | bytes) -> Any:
    """``json.loads`` of text or bytes: one JSON value, or ``ValueError`` (empty text too: for
    values that are never empty; ``load_json`` gives a default for those that may be)."""
    return json.loads(raw)


_SCAN = json.JSONDecoder().scan_once  # type: ignore[attr-defined]  # the C scanner of json.loads


def load_json(text: str | None, default: T) -> T:
    """``json.loads``, 2.5x faster on what ``dump_json`` wrote (a row holds three JSON fields):
    the scanner is called directly; anything it does not take whole goes to ``json.loads``."""
    if not text:
        return default
    try:
        value, end = _SCAN(text, 0)
    except StopIteration:
        end = -1
    if end != len(text):
        return json.loads(text)  # type: ignore[no-any-return]
    return value  # type: ignore[no-any-return]
