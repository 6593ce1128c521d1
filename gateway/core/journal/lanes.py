"""Apply lanes: each drains its kinds of journal entries in order and in batches, retries with
backoff while a backend is down, and wakes the callers waiting for their writes. Three lanes
(working memory; long-term memories; memory formation: ``command_types.LANE_OF``) so a dead
Redis never holds up long-term writes, nor a slow model any write."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Sequence

from gateway.core.model.commands import CommandUnreadable
from gateway.core.model.control import EntryState, JournalEntry
from gateway.core.model.errors import BackendUnavailable, MemgateError, Unavailable
from gateway.core.ports.ports import Journal

log = logging.getLogger("memgate.lanes")

#: a waiting caller hears UNAVAILABLE this long after its lane's backend was found down
OUTAGE_GRACE_S = 0.5
#: how often the journal's oldest waiting entry is checked for a kind that no lane here applies
STRAY_CHECK_S = 10.0

#: applies a batch; the second argument returns the entries that follow it (for look-ahead)
ApplyBatch = Callable[
    [Sequence[JournalEntry], Callable[[], Awaitable[Sequence[JournalEntry]]] | None],
    Awaitable[None],
]


class Lane:
    """One apply loop over the journal entries of ``kinds``."""

    def __init__(
        self, name: str, kinds: tuple[str, ...], journal: Journal, apply: ApplyBatch, batch: int
    ) -> None:
        self.name = name
        self.kinds = kinds
        self._journal = journal
        self._apply = apply
        self._batch = batch
        self._wake = asyncio.Event()
        self._waiters: dict[int, list[asyncio.Future[None]]] = {}
        self._task: asyncio.Task[None] | None = None
        self.last_error = ""
        self.applied_total = 0
        self._held_by = 0  # the newer entry this lane waits for (logged once)

    def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name=self.name)

    async def close(self) -> None:
        if self._task:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    def kick(self) -> None:
        self._wake.set()

    def handles(self, kind: str) -> bool:
        return kind in self.kinds

    async def wait_applied(self, seqs: Sequence[int], timeout: float) -> None:
        """Returns once every seq is applied. Raises Unavailable when that takes longer than
        ``timeout``, or at once (after a short grace) while a backend of this lane is down."""
        loop = asyncio.get_running_loop()
        futs = []
        for seq in seqs:
            fut: asyncio.Future[None] = loop.create_future()
            self._waiters.setdefault(seq, []).append(fut)
            futs.append((seq, fut))
        self.kick()
        try:
            states = await self._journal.states([seq for seq, _ in futs])
            for seq, fut in futs:
                state = states.get(seq, EntryState.UNKNOWN)
                if state == EntryState.APPLIED:
                    continue
                if state == EntryState.DEAD:
                    raise MemgateError(f"write #{seq} could not be applied; see the audit log")
                await self._wait_one(fut, timeout, seq)
        except TimeoutError:
            why = self.last_error or "the stores are slow"
            raise Unavailable(
                f"the write is journaled and will be applied, but not now ({why}); "
                "retry with the same idempotency key, or read it later"
            ) from None
        finally:
            for seq, fut in futs:
                fut.cancel()
                lst = self._waiters.get(seq)
                if lst and fut in lst:
                    lst.remove(fut)
                    if not lst:
                        del self._waiters[seq]

    async def _wait_one(self, fut: asyncio.Future[None], timeout: float, seq: int) -> None:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        outage_since: float | None = None
        shared = self._journal.shared
        while True:
            now = loop.time()
            if now >= deadline:
                raise TimeoutError
            slice_s = min(self._journal.idle_poll_s if shared else 0.1, deadline - now)
            done, _ = await asyncio.wait({fut}, timeout=slice_s)
            if done:
                fut.result()
                return
            if shared:  # another replica may have applied it
                state = await self._journal.state(seq)
                if state == EntryState.APPLIED:
                    return
                if state == EntryState.DEAD:
                    raise MemgateError(f"write #{seq} could not be applied; see the audit log")
                continue
            if self.last_error:
                outage_since = outage_since or now
                if now - outage_since >= OUTAGE_GRACE_S:
                    raise TimeoutError
            else:
                outage_since = None

    def _resolve(self, seqs: Sequence[int], error: BaseException | None = None) -> None:
        for seq in seqs:
            for fut in self._waiters.pop(seq, []):
                if fut.done():
                    continue
                if error is None:
                    fut.set_result(None)
                else:
                    fut.set_exception(error)

    async def _run(self) -> None:
        backoff = 0.05
        while True:
            try:
                try:
                    entries = await self._journal.pending(self._batch, kinds=self.kinds)
                except CommandUnreadable as exc:
                    await self._unreadable(exc)  # raises it again while it must wait
                    continue
                if not entries:
                    self._wake.clear()
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(self._wake.wait(), timeout=self._journal.idle_poll_s)
                    continue
                await self._apply_batch(entries)
            except CommandUnreadable as exc:  # written by a newer memgate: it waits for one
                self.last_error = (
                    f"journal entry {exc.seq} ({exc.kind}) comes from a newer memgate "
                    f"({exc.reason}): upgrade this gateway to apply it; this lane's later writes "
                    "wait for it"
                )
                if self._held_by != exc.seq:
                    self._held_by = exc.seq
                    log.error("lane %s holds: %s", self.name, self.last_error)
            except BackendUnavailable as exc:  # a store or a shared journal is down: wait for it
                self.last_error = exc.message
                log.warning(
                    "lane %s waits: %s (retrying in %.1fs)", self.name, exc.message, backoff
                )
            except Exception as exc:  # noqa: BLE001 - an ended lane would apply nothing, silently
                self.last_error = f"{type(exc).__name__}: {exc}"
                log.exception("lane %s failed (retrying in %.1fs)", self.name, backoff)
            else:
                backoff = 0.05
                self.last_error = ""
                continue
            await asyncio.sleep(backoff)
            backoff = min(backoff * 2, 5.0)

    async def _unreadable(self, exc: CommandUnreadable) -> None:
        """The entry at the head of the lane cannot be read back: a corrupt one is marked dead
        (no version of memgate will read it; the queue goes on without it, its writer hears an
        error); one from a newer memgate raises ``exc`` again, and the lane waits for it."""
        if exc.newer:
            raise exc
        log.error("journal entry %d cannot be read back; marked dead: %s", exc.seq, exc)
        await self._journal.mark_dead(exc.seq, str(exc))
        self._resolve([exc.seq], MemgateError("the write could not be read back from the journal"))

    async def _apply_batch(self, entries: Sequence[JournalEntry]) -> None:
        try:
            await self._apply_and_mark(entries, ahead=True)
        except BackendUnavailable:
            raise
        except Exception:  # noqa: BLE001 - find the entry that fails
            log.exception("batch failed; applying its entries one by one")
            await self._apply_one_by_one(entries)

    async def _apply_and_mark(self, entries: Sequence[JournalEntry], ahead: bool = False) -> None:
        last = entries[-1].seq

        async def upcoming() -> Sequence[JournalEntry]:
            try:
                return await self._journal.pending(self._batch, kinds=self.kinds, after=last)
            except CommandUnreadable:
                return []  # nothing to look ahead to: the loop settles it when it comes first

        await self._apply(entries, upcoming if ahead else None)
        seqs = [e.seq for e in entries]
        await self._journal.mark_applied(seqs)
        self.applied_total += len(seqs)
        self._resolve(seqs)

    async def _apply_one_by_one(self, entries: Sequence[JournalEntry]) -> None:
        for entry in entries:
            try:
                await self._apply_and_mark([entry])
            except BackendUnavailable:
                raise  # the loop waits, then retries from this entry
            except Exception as exc:  # noqa: BLE001 - a poison entry must not block the queue
                log.exception("write %s cannot be applied; marked dead", entry.write_id)
                await self._journal.mark_dead(entry.seq, repr(exc))
                self._resolve([entry.seq], MemgateError("the write could not be applied"))


class Lanes:
    """The lanes of one gateway, by the kinds they handle. Each lane asks the journal for its
    own kinds only, so an entry of a kind this version does not know (written by a newer
    memgate sharing the journal, or before a downgrade) would wait unseen: a watcher checks the
    oldest waiting entry every ``check_s`` and reports such an entry with the lanes' errors
    until a gateway that knows its kind applies it."""

    def __init__(
        self, lanes: Sequence[Lane], journal: Journal | None = None, check_s: float = STRAY_CHECK_S
    ) -> None:
        self.all = list(lanes)
        self._journal = journal
        self._check_s = check_s
        self._watch: asyncio.Task[None] | None = None
        self.stray = ""  # why the oldest waiting entry waits, when no lane here applies it

    def for_kind(self, kind: str) -> Lane:
        for lane in self.all:
            if lane.handles(kind):
                return lane
        raise ValueError(f"no lane applies {kind!r} entries")

    def kick(self) -> None:
        for lane in self.all:
            lane.kick()

    def start(self) -> None:
        for lane in self.all:
            lane.start()
        if self._journal is not None:
            self._watch = asyncio.create_task(self._watch_strays(), name="stray-kinds")

    async def close(self) -> None:
        if self._watch is not None:
            self._watch.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._watch
        for lane in self.all:
            await lane.close()

    def errors(self) -> list[tuple[str, str]]:
        found = [(lane.name, lane.last_error) for lane in self.all if lane.last_error]
        return found + [("journal", self.stray)] if self.stray else found

    async def _watch_strays(self) -> None:
        while True:
            try:
                await self.check_strays()
            except BackendUnavailable:
                pass  # the lanes report the outage
            except Exception:  # noqa: BLE001 - a watcher that ended would report nothing again
                log.exception("checking the journal for entries no lane applies failed")
            await asyncio.sleep(self._check_s)

    async def check_strays(self) -> None:
        """Sets ``stray`` from the oldest waiting entry (cleared when it is one a lane applies)."""
        assert self._journal is not None
        try:
            await self._journal.pending(1)
        except CommandUnreadable as exc:
            if exc.newer and not any(lane.handles(exc.kind) for lane in self.all):
                why = (
                    f"journal entry {exc.seq} ({exc.kind}) comes from a newer memgate "
                    f"({exc.reason}): no lane of this gateway applies {exc.kind!r} entries; "
                    "upgrade it (or run a newer replica) to apply them"
                )
                if why != self.stray:
                    log.error("%s", why)
                self.stray = why
                return
        self.stray = ""
