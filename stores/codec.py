"""Value encodings every adapter shares: exact UTC times as epoch microseconds, compact JSON."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import TypeVar

T = TypeVar("T")

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICRO = timedelta(microseconds=1)


def to_micros(at: datetime) -> int:
    """Microseconds since the epoch, UTC (exact and sortable); a naive datetime is taken as UTC."""
    if at.tzinfo is None:
        at = at.replace(tzinfo=UTC)
    return (at - _EPOCH) // _MICRO


def from_micros(us: int) -> datetime:
    return _EPOCH + timedelta(microseconds=int(us))


def dump_json(value: object, sort_keys: bool = False) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=sort_keys)


def load_json(text: str | None, default: T) -> T:
    if not text:
        return default
    return json.loads(text)  # type: ignore[no-any-return]
