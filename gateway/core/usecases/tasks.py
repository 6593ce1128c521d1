"""Batch tasks (seed 004 §4.4): each step is a record (pending/running/done/failed); a retry
resumes at the first step that is not done and never repeats a done one. Steps are mirrored into
the episodic graph as (step)-[:STEP_OF]->(task)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from gateway.core.access import namespaces as nsp
from gateway.core.access.ownership import TaskOwners
from gateway.core.model.control import AuditEntry, TaskStep
from gateway.core.model.errors import FailedPrecondition, InvalidArgument, NotFound
from gateway.core.model.limits import Limits
from gateway.core.model.refusals import refuse_injection
from gateway.core.ports.injection_screen import RULES_ONLY, InjectionScreen
from gateway.core.ports.ports import Ledger
from gateway.core.screening.screening import clean
from gateway.core.usecases.episodes import Episodes
from gateway.core.writing.second_screen import refuse_similar

STEP_STATES = ("pending", "running", "done", "failed")


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
    def __init__(
        self,
        ledger: Ledger,
        episodes: Episodes,
        owners: TaskOwners,
        limits: Limits,
        *,
        injection_screen: InjectionScreen = RULES_ONLY,
    ) -> None:
        self._ledger = ledger
        self._screen = injection_screen
        self._episodes = episodes
        self._owners = owners
        self._limits = limits

    async def start(self, agent: str, task_id: str, steps: Sequence[str]) -> Task:
        """Start (or, by its owner or the master, restart) a task; step names are screened."""
        nsp.check_agent_id(agent)
        nsp.check_id(task_id, "id", required=True)
        most, longest = self._limits.max_task_steps, self._limits.max_step_name_chars
        if not steps or len(steps) > most:
            raise InvalidArgument(f"steps must be 1..{most} names", field="steps")
        for i, name in enumerate(steps):
            if not name.strip() or len(name) > longest:
                raise InvalidArgument(f"steps[{i}] must be 1..{longest} chars", field="steps")
        steps = [clean(name) for name in steps]
        await self._owners.claim(agent, task_id)
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
        nsp.check_id(task_id, "id", required=True)
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
        for value, name, limit in (
            (output, "output", self._limits.max_step_output_chars),
            (error, "error", self._limits.max_step_error_chars),
        ):
            if len(value) > limit:
                raise InvalidArgument(
                    f"{name} is {len(value)} chars, the limit is {limit}", field=name
                )
        task = await self.get(agent, task_id)
        await self._owners.require(agent, task_id)
        refuse_injection(output, "output")
        refuse_injection(error, "error")
        await refuse_similar(self._screen, [("output", output), ("error", error)])
        output, error = clean(output), clean(error)
        if not 0 <= index < len(task.steps):
            raise InvalidArgument(f"index must be 0..{len(task.steps) - 1}", field="index")
        if task.steps[index].state == "done":
            if state == "done":
                return task  # a retried completion is harmless
            raise FailedPrecondition(
                f"step {index} of task {task_id} is done and is never repeated; resume at step "
                f"{task.resume_at}"
            )
        await self._ledger.update_step(task_id, index, state, output, error)
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
            second_screen=False,
        )
