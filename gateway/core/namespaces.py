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
from dataclasses import dataclass

from gateway.core.errors import InvalidArgument, PermissionDenied

_ID = r"[A-Za-z0-9][A-Za-z0-9._:@-]{0,127}"
_NAMESPACE = re.compile(rf"^(?:global|(?P<kind>agent|user|task)/(?P<id>{_ID}))$")
AGENT_ID = re.compile(rf"^{_ID}$")


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
    m = _NAMESPACE.match(namespace or "")
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
    if not AGENT_ID.match(agent_id or ""):
        raise InvalidArgument(
            "agent id is missing or malformed: send metadata x-agent-id "
            "(letters, digits, . _ : @ -, at most 128 chars)",
            field="x-agent-id",
        )
    return agent_id


def can_read(agent_id: str, ns: Namespace, master: str) -> bool:
    return ns.shared or agent_id == master or ns.owner == agent_id


def check_read(agent_id: str, ns: Namespace, master: str) -> None:
    if not can_read(agent_id, ns, master):
        raise PermissionDenied(
            f"agent {agent_id!r} may not read {ns}: it is private to agent {ns.owner!r}",
            field="namespace",
        )


def write_access(agent_id: str, ns: Namespace, master: str) -> Access:
    """How a write of ``agent_id`` into ``ns`` is committed; raises when it is not allowed."""
    if agent_id == master:
        return Access.DIRECT
    if ns.kind == "agent":
        if ns.owner != agent_id:
            raise PermissionDenied(
                f"agent {agent_id!r} may not write {ns}: it is private to agent {ns.owner!r}",
                field="namespace",
            )
        return Access.DIRECT
    if ns.kind == "task":
        # task scratch is shared by the agents working on the task
        return Access.DIRECT
    return Access.PROPOSAL
