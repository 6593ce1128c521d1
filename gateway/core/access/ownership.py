"""Who owns a batch task: the agent that started it. A sub-agent may update the steps of, and
relate graph nodes of, only the tasks it started; the master may touch any. Kept in the ledger's
settings (``task_owner:<id>``)."""

from __future__ import annotations

from typing import Protocol

from gateway.core.model.errors import PermissionDenied

_KEY = "task_owner:"


class SettingStore(Protocol):
    async def put_setting(self, key: str, value: dict[str, str]) -> None: ...
    async def get_setting(self, key: str) -> dict[str, str] | None: ...


class TaskOwners:
    def __init__(self, store: SettingStore, master: str) -> None:
        self._store = store
        self._master = master

    async def owner(self, task_id: str) -> str:
        row = await self._store.get_setting(_KEY + task_id)
        return str(row.get("agent", "")) if row else ""

    async def claim(self, agent: str, task_id: str) -> None:
        """``agent`` starts ``task_id``: it becomes the owner, unless another agent already is
        (the master never takes ownership away; it may act on any task anyway)."""
        owner = await self.owner(task_id)
        if not owner:
            if agent != self._master:
                await self._store.put_setting(_KEY + task_id, {"agent": agent})
            return
        self.check(agent, task_id, owner)

    async def require(self, agent: str, task_id: str) -> None:
        """PERMISSION_DENIED unless ``agent`` is the master, the owner, or nobody owns it."""
        if agent == self._master:
            return
        owner = await self.owner(task_id)
        if owner:
            self.check(agent, task_id, owner)

    def check(self, agent: str, task_id: str, owner: str) -> None:
        if agent not in (owner, self._master):
            raise PermissionDenied(
                f"task {task_id!r} was started by another agent: only it and the master may "
                "change it; start a task of your own",
                field="task_id",
            )
