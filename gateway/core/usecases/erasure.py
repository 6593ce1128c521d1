"""Erasure use cases (master only): ``ForgetNamespace`` erases everything a namespace holds;
``ForgetSubject`` erases a user — the ``user/<id>`` namespace, every event in any namespace that
names the user, and the user's graph node. Both go through the journal like every write; what
applying them does to each store is ``core/apply/eraser.py``. See docs/SECURITY.md "Erasure"."""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from gateway.core.access import namespaces as nsp
from gateway.core.journal.write_path import WritePath
from gateway.core.model.commands import EraseWorking, ForgetNamespace, ForgetSubject
from gateway.core.model.control import NewEntry
from gateway.core.model.errors import InvalidArgument
from gateway.core.writing.proposals import require_master

#: the longest reason an erasure keeps (its "why")
MAX_REASON_CHARS = 500


@dataclass(frozen=True, slots=True)
class Erased:
    erase_id: str  # the write id of the erasure command (in the audit log as its target)
    applied: bool


def check_reason(reason: str) -> str:
    if len(reason) > MAX_REASON_CHARS:
        raise InvalidArgument(
            f"reason is {len(reason)} characters; at most {MAX_REASON_CHARS}: shorten it",
            field="reason",
        )
    return reason


class Erasure:
    def __init__(self, write_path: WritePath, master: str) -> None:
        self._write_path = write_path
        self._master = master

    async def forget_namespace(self, agent: str, namespace: str, reason: str, wait: bool) -> Erased:
        require_master(agent, self._master, "erase a namespace (ForgetNamespace)")
        ns = nsp.parse(namespace)
        if str(ns) != namespace:  # e.g. a trailing newline the pattern let through
            raise InvalidArgument(f"namespace {namespace!r} is malformed", field="namespace")
        if ns.kind == "global":
            raise InvalidArgument(
                "global is shared by every agent and cannot be erased at once: forget its "
                "memories one by one with Forget",
                field="namespace",
            )
        cmd = ForgetNamespace(str(ns), check_reason(reason))
        return await self._commit(agent, cmd, wait)

    async def forget_subject(self, agent: str, user_id: str, reason: str, wait: bool) -> Erased:
        require_master(agent, self._master, "erase a user (ForgetSubject)")
        ns = nsp.parse(f"user/{user_id}", "user_id")
        if ns.owner != user_id:
            raise InvalidArgument(f"user_id {user_id!r} is malformed", field="user_id")
        return await self._commit(agent, ForgetSubject(ns.owner, check_reason(reason)), wait)

    async def _commit(self, agent: str, cmd: ForgetNamespace | ForgetSubject, wait: bool) -> Erased:
        # the working lane drops the sessions after every turn acknowledged before this call
        entries = [
            NewEntry(uuid.uuid4().hex, agent, "", EraseWorking(cmd.namespace)),
            NewEntry(uuid.uuid4().hex, agent, "", cmd),
        ]
        out = await self._write_path.commit(
            entries, wait, action=cmd.kind, details=["working memory", cmd.reason]
        )
        return Erased(out[1].write_id, out[1].applied)
