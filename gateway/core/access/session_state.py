"""Limits of session state (UpdateSessionState), checked at the edge: per update (keys set,
keys removed, key and value size) and per session (total keys, total bytes). Keys and values
are screened (secrets and personal data redacted) before they are stored; per agent across
sessions (``reserve_agent_state``), counted by the working store."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol

from gateway.core.model.errors import InvalidArgument, QuotaExceeded
from gateway.core.model.limits import Limits
from gateway.core.model.refusals import refuse_injection
from gateway.core.model.state_budget import StateShare, StateTotals
from gateway.core.screening.screening import redact


class StateBudgetStore(Protocol):
    """The part of the working store that counts session state per agent."""

    async def reserve_state(
        self, share: StateShare, max_keys: int, max_bytes: int
    ) -> StateTotals: ...


def _size(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


def check_state_update(
    updates: Mapping[str, str], remove: Sequence[str], limits: Limits
) -> tuple[dict[str, str], list[str]]:
    """The screened updates and the de-duplicated removals, or INVALID_ARGUMENT naming the
    field and the limit."""
    if len(updates) > limits.max_state_set_keys:
        raise InvalidArgument(
            f"set has {len(updates)} keys, the limit per update is {limits.max_state_set_keys}",
            field="set",
        )
    if len(remove) > limits.max_state_remove_keys:
        raise InvalidArgument(
            f"remove has {len(remove)} keys, the limit per update is "
            f"{limits.max_state_remove_keys}",
            field="remove",
        )
    clean: dict[str, str] = {}
    for key, value in updates.items():
        if not key or len(key) > limits.max_state_key_chars:
            raise InvalidArgument(
                f"set key {key[:40]!r} must be 1..{limits.max_state_key_chars} chars", field="set"
            )
        if _size(value) > limits.max_state_value_bytes:
            raise InvalidArgument(
                f"set[{key[:40]!r}] is {_size(value)} bytes, the limit is "
                f"{limits.max_state_value_bytes}",
                field="set",
            )
        refuse_injection(key, "set")
        refuse_injection(value, "set")
        clean[redact(key)[0]] = redact(value)[0]
    for key in remove:
        if not key or len(key) > limits.max_state_key_chars:
            raise InvalidArgument(
                f"remove key {key[:40]!r} must be 1..{limits.max_state_key_chars} chars",
                field="remove",
            )
    return clean, list(dict.fromkeys(redact(k)[0] for k in remove))


def check_state_total(
    current: Mapping[str, str],
    updates: Mapping[str, str],
    remove: Sequence[str],
    limits: Limits,
) -> tuple[int, int]:
    """The session's state after the update must stay within the per-session limits; returns
    its keys and bytes after the update."""
    after = {k: v for k, v in current.items() if k not in set(remove)} | dict(updates)
    if len(after) > limits.max_state_keys and len(after) > len(current):
        raise InvalidArgument(
            f"the session would hold {len(after)} state keys, the limit is "
            f"{limits.max_state_keys}: remove some first",
            field="set",
        )
    total = sum(_size(k) + _size(v) for k, v in after.items())
    before = sum(_size(k) + _size(v) for k, v in current.items())
    if total > limits.max_state_bytes and total > before:
        raise InvalidArgument(
            f"the session state would be {total} bytes, the limit is {limits.max_state_bytes}: "
            "remove some keys first",
            field="set",
        )
    return len(after), total


async def reserve_agent_state(store: StateBudgetStore, share: StateShare, limits: Limits) -> None:
    """Session state per agent, across sessions (issue 33 M8): the update's share is counted by
    the working store, shared by every gateway process on it (replicas, restarts); one that would
    take the agent over ``max_agent_state_keys`` or ``max_agent_state_bytes`` while growing its
    share is RESOURCE_EXHAUSTED, and nothing is counted."""
    got = await store.reserve_state(
        share, limits.max_agent_state_keys, limits.max_agent_state_bytes
    )
    if not got.refused:
        return
    held, limit = (
        (f"{got.keys} session state keys", limits.max_agent_state_keys)
        if got.refused == "keys"
        else (f"{got.size} bytes of session state", limits.max_agent_state_bytes)
    )
    raise QuotaExceeded(
        f"agent {share.agent!r} would hold {held} across its sessions, the limit per agent is "
        f"{limit}: remove some (or let sessions expire) first",
        field="set",
    )
