"""An apply lane and a journal entry it cannot read back: a corrupt one is marked dead and the
writes after it apply; one written by a newer memgate holds the lane (nothing after it applies
out of order, nothing is dropped) with an error that says to upgrade, until a gateway that
reads it comes."""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

from gateway.core.journal.lanes import Lane, Lanes
from gateway.core.model import commands
from gateway.core.model.commands import CODEC_VERSION, MemoryWrite
from gateway.core.model.control import Accepted, JournalEntry, NewEntry
from gateway.core.model.errors import MemgateError
from gateway.core.model.models import Layer
from stores.sqlite_journal import SqliteJournal


def _entry(wid: str, content: str) -> NewEntry:
    return NewEntry(wid, "a", "", MemoryWrite("user/u", Layer.SEMANTIC, content))


async def _until(check: Callable[[], bool]) -> None:
    for _ in range(200):
        if check():
            return
        await asyncio.sleep(0.02)
    raise AssertionError("timed out")


@dataclass
class _Running:
    journal: SqliteJournal
    acc: list[Accepted]
    applied: list[str]
    lanes: Lanes

    @property
    def lane(self) -> Lane:
        return self.lanes.all[0]


@contextlib.asynccontextmanager
async def _lane_over(tmp_path: Path, middle: str, kind: str = "memory") -> AsyncIterator[_Running]:
    """A journal with w1, w2 (content ``middle``, journaled as ``kind``), w3, and a lane
    applying its memories (write ids recorded in ``applied``), with the stray-kind watcher."""
    journal = SqliteJournal(tmp_path / "j.db")
    await journal.start()
    acc = await journal.append([_entry("w1", "a"), _entry("w2", middle), _entry("w3", "b")])
    if kind != "memory":  # as a newer memgate journals a kind of its own
        db = sqlite3.connect(tmp_path / "j.db")
        with db:
            db.execute("UPDATE journal SET kind = ? WHERE seq = ?", (kind, acc[1].seq))
        db.close()
    applied: list[str] = []

    async def apply(entries: Sequence[JournalEntry], upcoming: object) -> None:
        applied.extend(e.write_id for e in entries)

    lanes = Lanes([Lane("memories", ("memory",), journal, apply, batch=10)], journal, 0.02)
    lanes.start()
    try:
        yield _Running(journal, acc, applied, lanes)
    finally:
        await lanes.close()
        await journal.close()


@pytest.mark.usefixtures("odd_payloads")
async def test_a_corrupt_entry_is_marked_dead_and_the_writes_after_it_apply(
    tmp_path: Path,
) -> None:
    async with _lane_over(tmp_path, "corrupt") as r:
        with pytest.raises(MemgateError, match="could not be read back"):
            await r.lane.wait_applied([r.acc[1].seq], timeout=5)
        await r.lane.wait_applied([r.acc[2].seq], timeout=5)
        assert r.applied == ["w1", "w3"]
        assert await r.journal.states([a.seq for a in r.acc]) == {
            r.acc[0].seq: 1,
            r.acc[1].seq: 2,
            r.acc[2].seq: 1,
        }
        assert r.lane._task is not None and not r.lane._task.done()


@pytest.mark.usefixtures("odd_payloads")
async def test_an_entry_from_a_newer_memgate_holds_the_lane_until_it_can_be_read(
    tmp_path: Path,
) -> None:
    async with _lane_over(tmp_path, "newer") as r:
        lane, acc = r.lane, r.acc
        await _until(lambda: "upgrade this gateway" in lane.last_error)
        assert f"journal entry {acc[1].seq}" in lane.last_error
        await asyncio.sleep(0.2)  # a few retries: still held, nothing applied past it or dropped
        assert r.applied == ["w1"]
        assert await r.journal.states([acc[1].seq, acc[2].seq]) == {acc[1].seq: 0, acc[2].seq: 0}
        # what an upgraded gateway does: it reads the entry (here: rewritten at this version)
        db = sqlite3.connect(tmp_path / "j.db")
        with db:
            db.execute(
                "UPDATE journal SET payload = ? WHERE seq = ?",
                (
                    commands.dumps(MemoryWrite("user/u", Layer.SEMANTIC, "read")),
                    acc[1].seq,
                ),
            )
        db.close()
        lane.kick()
        await lane.wait_applied([acc[2].seq], timeout=10)
        assert r.applied == ["w1", "w2", "w3"]
        await _until(lambda: lane.last_error == "")


async def test_an_entry_no_lane_applies_is_reported_until_a_gateway_that_knows_it_applies_it(
    tmp_path: Path,
) -> None:
    """An entry of a kind this version does not know (a newer replica shares the journal, or a
    gateway was downgraded): every lane passes it by, so the writes after it apply, and the
    lanes' errors (Stats, a full backlog's message) say which entry waits and what to do."""
    async with _lane_over(tmp_path, "elsewhere", kind="teleport") as r:
        lanes, acc = r.lanes, r.acc
        await r.lane.wait_applied([acc[0].seq, acc[2].seq], timeout=5)
        assert r.applied == ["w1", "w3"]
        await _until(lambda: bool(lanes.stray))
        assert lanes.errors() == [("journal", lanes.stray)]
        assert f"journal entry {acc[1].seq} (teleport)" in lanes.stray
        assert "upgrade" in lanes.stray
        assert await r.journal.states([acc[1].seq]) == {acc[1].seq: 0}  # waits, never dropped
        await r.journal.mark_applied([acc[1].seq])  # what a gateway that knows the kind does
        await _until(lambda: lanes.stray == "")
        assert lanes.errors() == []


@pytest.mark.usefixtures("odd_payloads")
async def test_a_newer_entry_of_a_kind_a_lane_applies_is_that_lanes_error_only(
    tmp_path: Path,
) -> None:
    async with _lane_over(tmp_path, "newer") as r:
        await _until(lambda: "upgrade this gateway" in r.lane.last_error)
        await r.lanes.check_strays()
        assert r.lanes.stray == "" and r.lanes.errors() == [("memories", r.lane.last_error)]


@pytest.mark.parametrize(
    ("kind", "payload", "newer"),
    [
        ("memory", '{"v":2,"namespace":"user/u"', False),  # cut short
        ("memory", "[1, 2]", False),
        ("memory", '{"v":true,"namespace":"user/u","layer":"semantic","content":"c"}', False),
        ("memory", '{"v":2,"namespace":"user/u","layer":"nowhere","content":"c"}', False),
        ("memory", '{"v":2,"layer":"semantic","content":"c"}', False),  # no namespace
        ("memory", f'{{"v":{CODEC_VERSION + 1},"namespace":"user/u"}}', True),
        ("teleport", '{"v":2}', True),  # a kind this version does not know
    ],
)
def test_a_payload_that_cannot_be_read_says_why_and_whether_a_newer_memgate_can(
    kind: str, payload: str, newer: bool
) -> None:
    with pytest.raises(commands.CommandUnreadable) as err:
        commands.loads(kind, payload)
    assert err.value.newer is newer and err.value.kind == kind


def test_random_payloads_are_read_or_refused_never_crash() -> None:
    """Fuzz: bytes, JSON of any shape, and valid payloads with one field's type changed."""
    import json
    import random

    rng = random.Random(7)
    good = json.loads(commands.dumps(MemoryWrite("user/u", Layer.SEMANTIC, "c", metadata={})))
    values: list[object] = [None, True, -1, 2.5, "x", [], {}, [1, "a"], {"a": 1}, "2026-13-40"]
    for i in range(3000):
        if i % 3 == 0:
            text = "".join(chr(rng.randrange(32, 0x2FF)) for _ in range(rng.randrange(40)))
        elif i % 3 == 1:
            text = json.dumps(rng.choice(values))
        else:
            data = dict(good)
            data[rng.choice(list(data))] = rng.choice(values)
            text = json.dumps(data)
        try:
            cmd = commands.loads(rng.choice(("memory", "turn", "forget", "relate")), text)
        except commands.CommandUnreadable:
            continue
        assert cmd.kind in commands.KINDS
