"""Namespaces and who may touch them (seed 004 §4.2, §4.4).

- ``agent/<id>``: private to one agent instance (and readable by the master);
- ``user/<id>``: shared facts about a user;
- ``global``: shared rules and conventions;
- ``task/<id>``: scratch of one batch task.

A sub-agent writes its own private namespace directly; its writes to shared namespaces are
proposals the master (or a master-set policy) commits. The master writes anywhere.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from gateway.core.access import write_policy as wp
from gateway.core.model.errors import InvalidArgument, PermissionDenied
from gateway.core.model.refusals import refuse_sensitive_id

_ID = r"[A-Za-z0-9][A-Za-z0-9._:@-]{0,127}"
# fullmatch (not ``$``, which also matches before a trailing newline)
_NAMESPACE = re.compile(rf"(?:global|(?P<kind>agent|user|task)/(?P<id>{_ID}))")
AGENT_ID = re.compile(_ID)


class Access(enum.Enum):
    DIRECT = "direct"
    PROPOSAL = "proposal"


@dataclass(frozen=True, slots=True)
class Namespace:
    kind: str  # agent | user | task | global
    owner: str  # the id after the slash ("" for global)

    @property
    def shared(self) -> bool:
        return self.kind != "agent"

    def __str__(self) -> str:
        return "global" if self.kind == "global" else f"{self.kind}/{self.owner}"


def parse(namespace: str, field: str = "namespace") -> Namespace:
    m = _NAMESPACE.fullmatch(namespace or "")
    if not m:
        raise InvalidArgument(
            f"{field} {namespace!r} is malformed: use agent/<id>, user/<id>, task/<id> or global "
            "(ids: letters, digits, . _ : @ -, at most 128 chars)",
            field=field,
        )
    if m.group("kind") is None:
        return Namespace("global", "")
    return Namespace(m.group("kind"), m.group("id"))


def check_agent_id(agent_id: str) -> str:
    if not AGENT_ID.fullmatch(agent_id or ""):
        raise InvalidArgument(
            "agent id is missing or malformed: send metadata x-agent-id "
            "(letters, digits, . _ : @ -, at most 128 chars)",
            field="x-agent-id",
        )
    return agent_id


def check_id(value: str, field: str, required: bool = False) -> str:
    """A session or task id: letters, digits, . _ : @ - (starting with a letter or digit),
    at most 128 chars; "" is allowed unless ``required``."""
    if not value and not required:
        return value
    if not AGENT_ID.fullmatch(value or ""):
        raise InvalidArgument(
            f"{field} {value[:40]!r} is malformed: use 1..128 letters, digits, . _ : @ - "
            "(starting with a letter or digit)",
            field=field,
        )
    refuse_sensitive_id(value, field)
    return value


def can_read(agent_id: str, ns: Namespace, master: str) -> bool:
    return ns.shared or agent_id == master or ns.owner == agent_id


def check_read(agent_id: str, ns: Namespace, master: str) -> None:
    if not can_read(agent_id, ns, master):
        raise PermissionDenied(
            f"agent {agent_id!r} may not read {ns}: it is private to agent {ns.owner!r}",
            field="namespace",
        )


def write_access(agent_id: str, ns: Namespace, master: str) -> Access:
    """How a long-term write of ``agent_id`` into ``ns`` is committed; raises when it is not
    allowed. The rule is the ``memory`` row of ``write_policy.TABLE``."""
    outcome = wp.require(wp.Target.MEMORY, agent_id, ns, master)
    return Access.PROPOSAL if outcome is wp.Outcome.PROPOSAL else Access.DIRECT


POLICY_KEY = "shared_write_policy"


@dataclass(frozen=True, slots=True)
class SharedWritePolicy:
    """Namespaces (or ``user/*``, ``task/*``) where a sub-agent's proposals commit without the
    master, when their confidence is at least ``min_confidence``. Set by the master."""

    auto_approve: tuple[str, ...] = ()
    min_confidence: float = 0.0

    @staticmethod
    def checked(auto_approve: Sequence[str], min_confidence: float) -> SharedWritePolicy:
        for pattern in auto_approve:
            if pattern.endswith("/*"):
                if pattern[:-2] not in ("user", "task"):
                    raise InvalidArgument(
                        f"auto_approve pattern {pattern!r}: use user/*, task/* or a namespace",
                        field="auto_approve",
                    )
            else:
                parse(pattern, "auto_approve")
        if not 0 <= min_confidence <= 1:
            raise InvalidArgument("min_confidence must be between 0 and 1", field="min_confidence")
        return SharedWritePolicy(tuple(auto_approve), float(min_confidence))

    def approves(self, namespace: str, confidence: float) -> bool:
        if confidence < self.min_confidence:
            return False
        return any(
            p == namespace or (p.endswith("*") and namespace.startswith(p[:-1]))
            for p in self.auto_approve
        )

    def to_dict(self) -> dict[str, Any]:
        return {"auto_approve": list(self.auto_approve), "min_confidence": self.min_confidence}


class SettingStore(Protocol):
    async def put_setting(self, key: str, value: dict[str, Any]) -> None: ...
    async def get_setting(self, key: str) -> dict[str, Any] | None: ...


class SharedWritePolicies:
    """The master's policy, read from the ledger once and kept; ``replace`` stores a new one."""

    def __init__(self, store: SettingStore) -> None:
        self._store = store
        self._current: SharedWritePolicy | None = None

    async def current(self) -> SharedWritePolicy:
        if self._current is None:
            stored = await self._store.get_setting(POLICY_KEY) or {}
            self._current = SharedWritePolicy(
                tuple(stored.get("auto_approve", ())), float(stored.get("min_confidence", 0.0))
            )
        return self._current

    async def replace(self, policy: SharedWritePolicy) -> None:
        await self._store.put_setting(POLICY_KEY, policy.to_dict())
        self._current = policy
