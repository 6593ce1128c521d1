"""The value encodings every adapter shares: the fast paths give exactly what the slow ones do."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gateway.client.wire import when
from gateway.core.model.models import Layer, Status
from memgate.v1 import memgate_pb2 as pb
from stores.codec import LAYER_OF, STATUS_OF, dump_json, from_micros, load_json, to_micros

_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text() | st.floats(allow_nan=False),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12,
)


@given(_JSON)
def test_load_json_reads_what_dump_json_wrote(value: object) -> None:
    text = dump_json(value)
    assert load_json(text, None) == json.loads(text)


@pytest.mark.parametrize("text", [' {"a": 1}', '{"a": 1} ', "[1, 2]\n", '"x"'])
def test_load_json_takes_whitespace_like_json_loads(text: str) -> None:
    assert load_json(text, None) == json.loads(text)


@pytest.mark.parametrize("text", ['{"a": 1}x', "[1,", "{", "nul"])
def test_load_json_refuses_what_json_loads_refuses(text: str) -> None:
    with pytest.raises(json.JSONDecodeError):
        load_json(text, None)


def test_load_json_gives_the_default_for_nothing() -> None:
    assert load_json("", {}) == {} and load_json(None, []) == []


@given(st.integers(min_value=-(10**16), max_value=253_402_300_799_999_999))
def test_micros_round_trip_exactly(us: int) -> None:
    at = from_micros(us)
    assert at == datetime(1970, 1, 1, tzinfo=UTC) + timedelta(microseconds=us)
    assert to_micros(at) == us


def test_enum_maps_cover_every_member() -> None:
    assert all(LAYER_OF[x.value] is x for x in Layer)
    assert all(STATUS_OF[x.value] is x for x in Status)


@given(st.integers(0, 253_402_300_799), st.integers(0, 999_999_999))
def test_client_times_match_protobuf(seconds: int, nanos: int) -> None:
    m = pb.Memory()
    m.event_time.seconds, m.event_time.nanos = seconds, nanos
    assert when(m, "event_time") == m.event_time.ToDatetime(tzinfo=UTC)
    assert when(pb.Memory(), "event_time") is None
