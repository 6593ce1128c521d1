"""Stopping the gateway always ends: each shutdown step is bounded (``runtime.bounded``)."""

from __future__ import annotations

import asyncio
import logging

import pytest

from gateway.core.usecases import runtime


def test_a_step_that_never_finishes_is_logged_and_left_behind(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(runtime, "CLOSE_STEP_S", 0.05)

    async def run() -> None:
        never = asyncio.get_running_loop().create_future()
        await runtime.bounded("a stuck store", never)
        assert never.cancelled()  # not awaited forever: cancelled and left

    with caplog.at_level(logging.ERROR, logger="memgate.runtime"):
        asyncio.run(asyncio.wait_for(run(), 5))
    assert "a stuck store did not finish" in caplog.text


def test_a_cancelled_loop_counts_as_done_and_an_error_is_raised() -> None:
    async def run() -> None:
        loop_task = asyncio.ensure_future(asyncio.sleep(3600))
        loop_task.cancel()
        await runtime.bounded("a loop", loop_task)

        async def failing() -> None:
            raise OSError("disk gone")

        with pytest.raises(OSError, match="disk gone"):
            await runtime.bounded("a store", failing())

    asyncio.run(asyncio.wait_for(run(), 5))
