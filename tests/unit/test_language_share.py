"""The stored texts' languages for status and /metrics (``core/usecases/language_share.py``):
a bounded sample, re-read at most once a minute, advice only for an English-only embedder."""

from __future__ import annotations

import asyncio

from gateway.core.model.models import Layer, Memory
from gateway.core.usecases import language_share as ls


class _Records:
    """namespaces() and scan() of a RecordStore over a dict; counts the scans."""

    def __init__(self, texts: dict[str, list[str]]) -> None:
        self.texts = texts
        self.scans = 0

    async def namespaces(self) -> list[str]:
        return sorted(self.texts)

    async def scan(self, namespace: str, after_id: str, limit: int) -> list[Memory]:
        self.scans += 1
        rows = self.texts[namespace][:limit]
        return [
            Memory(f"{namespace}-{i}", namespace, Layer.EPISODIC, t) for i, t in enumerate(rows)
        ]


def _read(sampler: ls.LanguageSampler) -> ls.LanguageShare:
    return asyncio.run(sampler.read())


def test_a_multilingual_embedder_gets_shares_and_no_advice() -> None:
    records = _Records({"user/a": ["我喜欢喝茉莉花茶。"] * 30, "user/b": ["I like tea."] * 10})
    share = _read(ls.LanguageSampler(records, "multilingual-e5-small", multilingual=True))  # type: ignore[arg-type]
    assert share.sampled == 40 and share.shares == {"zh": 0.75, "other": 0.25}
    assert share.advice == ""


def test_the_sample_is_bounded_and_kept_for_a_minute() -> None:
    records = _Records({f"user/{i:03d}": ["我喜欢喝茶。"] * 100 for i in range(80)})
    now = [0.0]
    sampler = ls.LanguageSampler(records, "all-MiniLM-L6-v2", False, clock=lambda: now[0])  # type: ignore[arg-type]
    share = _read(sampler)
    assert share.sampled == ls.NAMESPACES * ls.PER_NAMESPACE and records.scans == ls.NAMESPACES
    assert share.advice.startswith("100% of the stored texts sampled are Chinese")
    assert "all-MiniLM-L6-v2" in share.advice and ls.FIX in share.advice
    now[0] = ls.TTL_S - 1
    assert _read(sampler) is share and records.scans == ls.NAMESPACES
    now[0] = ls.TTL_S + 1
    _read(sampler)
    assert records.scans == 2 * ls.NAMESPACES


def test_a_few_chinese_texts_or_an_empty_store_get_no_advice() -> None:
    few = _Records({"user/a": ["我喜欢喝茶。"] * 10})  # under ADVISE_MIN_SAMPLE texts
    assert _read(ls.LanguageSampler(few, "hash", False)).advice == ""  # type: ignore[arg-type]
    mostly_english = _Records({"user/a": ["我喜欢喝茶。"] * 3 + ["I like tea."] * 27})
    assert _read(ls.LanguageSampler(mostly_english, "hash", False)).advice == ""  # type: ignore[arg-type]
    empty = _read(ls.LanguageSampler(_Records({}), "hash", False))  # type: ignore[arg-type]
    assert empty.sampled == 0 and empty.shares == {} and empty.advice == ""


class _SlowRecords(_Records):
    async def scan(self, namespace: str, after_id: str, limit: int) -> list[Memory]:
        await asyncio.sleep(0.2)
        return await super().scan(namespace, after_id, limit)


async def test_a_slow_store_never_holds_the_caller_past_the_wait(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The first sample of a large store: status answers at once with no share yet, and the
    sample finishes in the background for the next read."""
    monkeypatch.setattr(ls, "WAIT_S", 0.05)
    records = _SlowRecords({"user/a": ["我喜欢喝茶。"] * 30})
    sampler = ls.LanguageSampler(records, "hash", False)  # type: ignore[arg-type]
    first = await sampler.read()
    assert first.sampled == 0 and first.shares == {}
    await asyncio.sleep(0.4)
    assert (await sampler.read()).shares == {"zh": 1.0, "other": 0.0}
    assert records.scans == 1  # one sample, not one per read
