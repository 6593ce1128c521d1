"""Edge validation from the adversarial review (issue 8): ids ending in a newline (L2),
out-of-range timestamps (M1), unbounded recall queries (M5). Each error is INVALID_ARGUMENT
naming the field."""

from __future__ import annotations

import pytest
from google.protobuf.timestamp_pb2 import Timestamp

from gateway.core.access import namespaces as nsp
from gateway.core.model.errors import InvalidArgument
from gateway.rpc import conversions as cv
from memgate.v1 import memgate_pb2 as pb


@pytest.mark.parametrize(
    "namespace", ["user/alice\n", "global\n", "agent/a\n", "task/t\r\n", "user/alice\nx"]
)
def test_namespace_with_trailing_newline_is_rejected(namespace: str) -> None:
    with pytest.raises(InvalidArgument) as err:
        nsp.parse(namespace)
    assert err.value.field == "namespace"


@pytest.mark.parametrize("agent", ["master\n", "sub-1\n", ""])
def test_agent_id_with_trailing_newline_is_rejected(agent: str) -> None:
    with pytest.raises(InvalidArgument):
        nsp.check_agent_id(agent)


@pytest.mark.parametrize("value", ["s1\n", "a b", "x" * 129, "-lead", "s/1", "é"])
def test_session_and_task_ids_have_a_charset(value: str) -> None:
    with pytest.raises(InvalidArgument) as err:
        nsp.check_id(value, "session_id")
    assert err.value.field == "session_id"
    assert nsp.check_id("sess-1.a:b@c_d", "session_id") == "sess-1.a:b@c_d"
    assert nsp.check_id("", "session_id") == ""


@pytest.mark.parametrize(
    ("seconds", "nanos"),
    [(10**12, 0), (-1, 0), (-(10**12), 0), (253_402_300_800, 0), (0, -1), (0, 10**9)],
)
def test_out_of_range_timestamps_name_their_field(seconds: int, nanos: int) -> None:
    item = pb.WriteItem(event_time=Timestamp(seconds=seconds, nanos=nanos))
    with pytest.raises(InvalidArgument) as err:
        cv.write_item_from_pb(item, "items[2].")
    assert err.value.field == "items[2].event_time"
    req = pb.RecallRequest(query="q", end=Timestamp(seconds=seconds, nanos=nanos))
    with pytest.raises(InvalidArgument) as err:
        cv.recall_query_from_pb(req)
    assert err.value.field == "end"


def test_edge_of_the_range_converts() -> None:
    item = pb.WriteItem(event_time=Timestamp(seconds=cv.MAX_SECONDS, nanos=999_999_999))
    assert cv.write_item_from_pb(item).event_time is not None
    assert cv.write_item_from_pb(pb.WriteItem(event_time=Timestamp())).event_time is not None


def test_recall_cache_is_bounded_by_bytes() -> None:
    from gateway.core.model.models import Layer, Memory, utcnow
    from gateway.core.recall.recall_cache import (
        RecallCache,
        RecallQuery,
        RecallResult,
        result_bytes,
    )
    from gateway.core.recall.scoring import Scored

    def result(chars: int, hits: int) -> RecallResult:
        now = utcnow()
        mem = Memory(
            id="m",
            namespace="user/u",
            layer=Layer.SEMANTIC,
            content="x" * chars,
            created_at=now,
            updated_at=now,
        )
        return RecallResult([Scored(mem, 1.0, 1.0, 1.0, 0.0)] * hits, "", 0, ())

    cache = RecallCache(ttl_s=60, max_entries=512, max_bytes=1_000_000)
    big = result(8_000, 100)  # ~1 MB: more than an eighth of the budget, never cached
    assert result_bytes(big) > 1_000_000 // 8
    cache.put(RecallQuery("q", ("user/u",)), big)
    assert cache.get(RecallQuery("q", ("user/u",))) is None
    small = result(8_000, 10)  # ~100 KB each: at most ~10 fit
    for i in range(100):
        cache.put(RecallQuery(f"q{i}", ("user/u",)), small)
    assert cache._bytes <= 1_000_000 and len(cache._items) <= 10
    assert cache.get(RecallQuery("q99", ("user/u",))) is small
    assert cache.get(RecallQuery("q99", ("user/u",), top_k=5)) is None  # another question
    cache.invalidate({"user/u"})
    assert cache._bytes == 0 and not cache._items
