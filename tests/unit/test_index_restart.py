"""The vector index across starts that fail: a gateway refused a data dir in use must not touch
the files of the one using it, and a start that fails before the index is rebuilt leaves it to
be rebuilt at the next start (the index is derived: the records are the truth)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gateway.core.model.errors import FailedPrecondition
from gateway.core.usecases.service import MemoryService
from gateway.core.writing.inputs import WriteInput
from gateway.settings import Settings
from gateway.wiring import build_service

NS = "user/ana"


def settings(data_dir: Path) -> Settings:
    return Settings(data_dir=data_dir, embedder="hash", injection_embedder="", decay_interval_s=0)


async def write_facts(svc: MemoryService, n: int) -> None:
    facts = [WriteInput(namespace=NS, layer="semantic", content=f"fact {i}") for i in range(n)]
    await svc.writer.write("master", facts, wait=True)


async def indexed_after_restart(data_dir: Path) -> int:
    svc = build_service(settings(data_dir))
    await svc.start()
    try:
        return await svc.stores.index.count()
    finally:
        await svc.close()


async def test_a_gateway_refused_a_data_dir_in_use_leaves_its_index_alone(tmp_path: Path) -> None:
    first = build_service(settings(tmp_path))
    await first.start()
    try:
        await write_facts(first, 20)
        await first.stores.index.flush()
        second = build_service(settings(tmp_path))
        with pytest.raises(FailedPrecondition, match="in use by memgate"):
            await second.start()
        await second.close()  # as the server does after a failed start
        assert await first.stores.index.count() == 20
    finally:
        await first.close()
    # before the fix, the refused gateway's close wrote an empty index over the first one's
    # files, and the first one's clean close then vouched for it: dense recall found nothing
    assert await indexed_after_restart(tmp_path) == 20


async def test_a_start_that_fails_before_the_rebuild_leaves_the_index_to_rebuild(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    svc = build_service(settings(tmp_path))
    await svc.start()
    try:
        await write_facts(svc, 12)
    finally:
        await svc.close()  # clean: the next start trusts the files
    (tmp_path / "faiss" / "manifest.json").unlink()  # the index files are lost

    broken = build_service(settings(tmp_path))

    async def fails() -> None:
        raise RuntimeError("a backend check failed")

    monkeypatch.setattr(broken.runtime, "_check_durability", fails)
    with pytest.raises(RuntimeError, match="backend check failed"):
        await broken.start()
    await broken.close()  # writes the index it had: empty, as nothing rebuilt it
    assert await indexed_after_restart(tmp_path) == 12
