"""Which languages the store holds, for ``memgate status`` and ``/metrics``: the share of stored
texts written mostly in Chinese (or Japanese, Korean) against the rest, read from a bounded
sample, and one line of advice when an English-only embedder serves a store that is largely
Chinese (its vectors of Chinese text are weak: bench/multilingual_eval.py).

The sample: up to ``NAMESPACES`` namespaces (in name order), the first ``PER_NAMESPACE``
memories of each in id order (ids are random, so a fair draw), read ``AT_ONCE`` namespaces at a
time; kept ``TTL_S`` seconds, so a console or a Prometheus scrape every few seconds costs the
stores nothing more. A caller waits at most ``WAIT_S`` for a fresh sample (the first one on a
large Neo4j store took 8 s and timed `memgate status` out): past that it gets the last one (or
none yet) and the sample finishes in the background.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable
from dataclasses import dataclass

from gateway.core.ports.ports import RecordStore
from gateway.core.recall.query_text import mostly_cjk

NAMESPACES = 50
PER_NAMESPACE = 40
TTL_S = 60.0
AT_ONCE = 8
WAIT_S = 1.0
#: an English-only embedder gets the advice once this share of the sample is Chinese ...
ADVISE_AT = 0.2
#: ... out of at least this many texts
ADVISE_MIN_SAMPLE = 20
FIX = "memgate serve --embedder e5-multilingual"


@dataclass(frozen=True, slots=True)
class LanguageShare:
    #: language ("zh": mostly CJK, "other") → share of the sampled texts
    shares: dict[str, float]
    sampled: int
    #: "" or what to do about the embedder
    advice: str


class LanguageSampler:
    def __init__(
        self,
        records: RecordStore,
        embedder_name: str,
        multilingual: bool,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._records = records
        self._embedder = embedder_name
        self._multilingual = multilingual
        self._clock = clock
        self._kept: tuple[float, LanguageShare] | None = None
        self._sampling: asyncio.Future[LanguageShare] | None = None

    async def read(self) -> LanguageShare:
        now = self._clock()
        if self._kept is not None and now - self._kept[0] < TTL_S:
            return self._kept[1]
        if self._sampling is None or self._sampling.done():
            self._sampling = asyncio.ensure_future(self._refresh(now))
            # a sample that fails after its caller stopped waiting is retried at the next read
            self._sampling.add_done_callback(lambda f: f.cancelled() or f.exception())
        with contextlib.suppress(TimeoutError):
            return await asyncio.wait_for(asyncio.shield(self._sampling), WAIT_S)
        return self._kept[1] if self._kept is not None else LanguageShare({}, 0, "")

    async def _refresh(self, now: float) -> LanguageShare:
        share = await self._sample()
        self._kept = (now, share)
        return share

    async def _sample(self) -> LanguageShare:
        chinese = total = 0
        namespaces = (await self._records.namespaces())[:NAMESPACES]
        for start in range(0, len(namespaces), AT_ONCE):
            scans = await asyncio.gather(
                *(
                    self._records.scan(ns, "", PER_NAMESPACE)
                    for ns in namespaces[start : start + AT_ONCE]
                )
            )
            for mem in (m for scan in scans for m in scan):
                if not mem.content:  # an erased memory's tombstone
                    continue
                total += 1
                chinese += mostly_cjk(mem.content)
        if not total:
            return LanguageShare({}, 0, "")
        zh = chinese / total
        advice = ""
        if not self._multilingual and total >= ADVISE_MIN_SAMPLE and zh >= ADVISE_AT:
            advice = (
                f"{zh:.0%} of the stored texts sampled are Chinese and the embedder "
                f"({self._embedder}) reads English only: restart with `{FIX}` (stored memories "
                "are embedded again once, with progress in the log)"
            )
        return LanguageShare({"zh": round(zh, 4), "other": round(1 - zh, 4)}, total, advice)
