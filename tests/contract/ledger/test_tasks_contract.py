"""TaskLedger contract: a batch task's steps, never undoing a done step, kept across a restart."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from gateway.core.ports.control_ports import TaskLedger
from tests.contract.ledger.opening import Opens, opened


class TaskStore(TaskLedger, Opens, Protocol):
    """A task adapter as the suite opens it."""


async def test_task_steps_never_undo_a_done_step(ledger: TaskLedger) -> None:
    await ledger.start_task("t1", ["fetch", "parse"])
    await ledger.start_task("t1", ["fetch", "parse"])  # idempotent
    assert [(s.index, s.name, s.state) for s in await ledger.task_steps("t1")] == [
        (0, "fetch", "pending"),
        (1, "parse", "pending"),
    ]
    assert await ledger.update_step("t1", 0, "running", "", "")
    assert await ledger.update_step("t1", 0, "done", "ok", "")
    assert await ledger.update_step("t1", 0, "failed", "", "late")  # ignored: done stays done
    step = (await ledger.task_steps("t1"))[0]
    assert (step.state, step.output, step.attempts) == ("done", "ok", 1)
    assert not await ledger.update_step("t1", 5, "done", "", "")
    assert await ledger.task_steps("nope") == []


async def test_task_steps_survive_a_restart(make_ledger: Callable[[], TaskStore]) -> None:
    async with opened(make_ledger) as ledger:
        await ledger.start_task("t1", ["fetch", "parse"])
        await ledger.update_step("t1", 0, "running", "", "")
        await ledger.update_step("t1", 0, "done", "fetched", "")
        await ledger.update_step("t1", 1, "running", "", "")
        await ledger.update_step("t1", 1, "failed", "", "bad page")
    async with opened(make_ledger) as ledger:
        steps = await ledger.task_steps("t1")
        assert [(s.state, s.output, s.error, s.attempts) for s in steps] == [
            ("done", "fetched", "", 1),
            ("failed", "", "bad page", 1),
        ]
        await ledger.start_task("t1", ["fetch", "parse"])  # a restarted task keeps its steps
        assert await ledger.update_step("t1", 0, "failed", "", "late")
        assert (await ledger.task_steps("t1"))[0].state == "done"
