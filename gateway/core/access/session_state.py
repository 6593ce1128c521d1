"""Limits of session state (UpdateSessionState), checked at the edge: per update (keys set,
keys removed, key and value size) and per session (total keys, total bytes). Keys and values
are screened (secrets and personal data redacted) before they are stored."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence

from gateway.core.model.errors import InvalidArgument, QuotaExceeded
from gateway.core.model.limits import Limits
from gateway.core.model.refusals import refuse_injection
from gateway.core.screening.screening import redact


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


class AgentStateBudgets:
    """Session state per agent, across sessions (issue 33 M8): each session's keys and bytes
    count for the agent that last changed its state, until its TTL runs out. An update that
    would take the agent over ``max_agent_state_keys`` or ``max_agent_state_bytes`` (and grows
    its share) is RESOURCE_EXHAUSTED. Kept by this gateway process (a restart, or another
    replica, starts from zero: the per-session limits still hold)."""

    def __init__(self, limits: Limits, clock: Callable[[], float] = time.monotonic) -> None:
        self._limits = limits
        self._clock = clock
        # agent -> (namespace, session) -> (keys, bytes, expires at)
        self._held: dict[str, dict[tuple[str, str], tuple[int, int, float]]] = {}

    def _now(self) -> float:
        return self._clock()

    def _live(self, agent: str) -> dict[tuple[str, str], tuple[int, int, float]]:
        now = self._now()
        held = self._held.get(agent, {})
        live = {k: v for k, v in held.items() if v[2] > now}
        if live:
            self._held[agent] = live
        else:
            self._held.pop(agent, None)
        return live

    def reserve(
        self, agent: str, session: tuple[str, str], keys: int, size: int, ttl_s: float
    ) -> None:
        """Check and record, with no await in between (one event loop: atomic)."""
        live = self._live(agent)
        others = [v for k, v in live.items() if k != session]
        before = live.get(session, (0, 0, 0.0))
        total_keys = keys + sum(v[0] for v in others)
        total_bytes = size + sum(v[1] for v in others)
        lim = self._limits
        if total_keys > lim.max_agent_state_keys and keys > before[0]:
            raise QuotaExceeded(
                f"agent {agent!r} would hold {total_keys} session state keys across its "
                f"sessions, the limit per agent is {lim.max_agent_state_keys}: remove some "
                "(or let sessions expire) first",
                field="set",
            )
        if total_bytes > lim.max_agent_state_bytes and size > before[1]:
            raise QuotaExceeded(
                f"agent {agent!r} would hold {total_bytes} bytes of session state across its "
                f"sessions, the limit per agent is {lim.max_agent_state_bytes}: remove some "
                "(or let sessions expire) first",
                field="set",
            )
        # the session now counts for this agent only (the last to change it)
        for held in self._held.values():
            held.pop(session, None)
        if keys or size:
            self._held.setdefault(agent, {})[session] = (keys, size, self._now() + ttl_s)

    def release(self, agent: str, session: tuple[str, str]) -> None:
        self._held.get(agent, {}).pop(session, None)
