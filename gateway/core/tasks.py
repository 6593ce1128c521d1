"""Batch tasks (seed 004 §4.4): each step is a record (pending/running/done/failed); a retry
resumes at the first step that is not done and never repeats a done one. Steps are mirrored into
the episodic graph as (step)-[:STEP_OF]->(task)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from gateway.core import namespaces as nsp
from gateway.core.control import AuditEntry, TaskStep
from gateway.core.episodes import Episodes
from gateway.core.errors import FailedPrecondition, InvalidArgument, NotFound
from gateway.core.ports import Ledger

STEP_STATES = ("pending", "running", "done", "failed")
MAX_STEPS = 1000


@dataclass(slots=True)
class Task:
    id: str
    steps: list[TaskStep]
    resume_at: int
    state: str


def task_of(task_id: str, steps: list[TaskStep]) -> Task:
    resume_at = next((s.index for s in steps if s.state != "done"), len(steps))
    if resume_at == len(steps):
        state = "done"
    elif any(s.state == "failed" for s in steps):
        state = "failed"
    elif any(s.state != "pending" for s in steps):
        state = "running"
    else:
        state = "pending"
    return Task(task_id, steps, resume_at, state)


class Tasks:
    def __init__(self, ledger: Ledger, episodes: Episodes) -> None:
        self._ledger = ledger
        self._episodes = episodes

    async def start(self, agent: str, task_id: str, steps: Sequence[str]) -> Task:
        nsp.check_agent_id(agent)
        nsp.parse(f"task/{task_id}", "id")
        if not steps or len(steps) > MAX_STEPS or any(not s.strip() for s in steps):
            raise InvalidArgument(f"steps must be 1..{MAX_STEPS} non-empty names", field="steps")
        existing = await self._ledger.task_steps(task_id)
        if existing and [s.name for s in existing] != list(steps):
            raise FailedPrecondition(f"task {task_id} exists with other steps; use a new task id")
        await self._ledger.start_task(task_id, steps)
        task = await self.get(agent, task_id)
        for step in task.steps:
            await self._mirror(agent, task_id, step)
        return task

    async def get(self, agent: str, task_id: str) -> Task:
        nsp.check_agent_id(agent)
        steps = await self._ledger.task_steps(task_id)
        if not steps:
            raise NotFound(f"task {task_id!r} does not exist: start it first")
        return task_of(task_id, steps)

    async def update_step(
        self, agent: str, task_id: str, index: int, state: str, output: str, error: str
    ) -> Task:
        """A retry resumes at the first step that is not done; a done step never runs again."""
        if state not in STEP_STATES:
            raise InvalidArgument(f"state must be one of {', '.join(STEP_STATES)}", field="state")
        task = await self.get(agent, task_id)
        if not 0 <= index < len(task.steps):
            raise InvalidArgument(f"index must be 0..{len(task.steps) - 1}", field="index")
        if task.steps[index].state == "done":
            if state == "done":
                return task  # a retried completion is harmless
            raise FailedPrecondition(
                f"step {index} of task {task_id} is done and is never repeated; resume at step "
                f"{task.resume_at}"
            )
        await self._ledger.update_step(task_id, index, state, output[:4000], error[:2000])
        await self._ledger.audit(
            [AuditEntry(agent, f"step:{state}", f"task/{task_id}", str(index), error[:200])]
        )
        task = await self.get(agent, task_id)
        await self._mirror(agent, task_id, task.steps[index])
        return task

    async def _mirror(self, agent: str, task_id: str, step: TaskStep) -> None:
        """The ledger holds the authoritative state; the graph mirror is journaled (durable)."""
        await self._episodes.relate(
            agent,
            ("step", f"{task_id}#{step.index}"),
            "STEP_OF",
            ("task", task_id),
            None,
            {"name": step.name, "index": str(step.index), "state": step.state},
            wait=False,
        )
