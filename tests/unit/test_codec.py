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
from stores.codec import (
    LAYER_OF,
    STATUS_OF,
    dump_json,
    dump_json_ascii,
    dump_json_spaced,
    from_micros,
    load_json,
    parse_json,
    to_micros,
)

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


#: a value with what the three JSON formats differ on: key order, non-ASCII, escapes, spacing
_VALUE = {"b": ["é", "用户", 1, 2.5, None, True], "a": {"z": 'x"y', "k": "\n"}}


@pytest.mark.parametrize(
    ("encoded", "pinned"),
    [
        (dump_json(_VALUE), r'{"b":["é","用户",1,2.5,null,true],"a":{"z":"x\"y","k":"\n"}}'),
        (
            dump_json(_VALUE, sort_keys=True),
            r'{"a":{"k":"\n","z":"x\"y"},"b":["é","用户",1,2.5,null,true]}',
        ),
        (
            dump_json_ascii(_VALUE),
            r'{"b": ["\u00e9", "\u7528\u6237", 1, 2.5, null, true], "a": {"z": "x\"y", "k": "\n"}}',
        ),
        (
            dump_json_ascii(_VALUE, sort_keys=True),
            r'{"a": {"k": "\n", "z": "x\"y"}, "b": ["\u00e9", "\u7528\u6237", 1, 2.5, null, true]}',
        ),
        (
            dump_json_spaced(_VALUE),
            r'{"b": ["é", "用户", 1, 2.5, null, true], "a": {"z": "x\"y", "k": "\n"}}',
        ),
    ],
    ids=["compact", "compact-sorted", "ascii", "ascii-sorted", "spaced"],
)
def test_each_json_format_keeps_its_bytes(encoded: str, pinned: str) -> None:
    """What the stores wrote before stays what they write: Redis Lua scripts compare stored JSON
    strings, the vector index's digests cover the encoded manifest and sidecars, and rows
    written by an older memgate are read and rewritten beside new ones."""
    assert encoded.encode() == pinned.encode()


@given(_JSON, st.booleans())
def test_each_json_format_is_the_json_dumps_call_it_replaced(value: object, sort: bool) -> None:
    compact = json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=sort)
    assert dump_json(value, sort_keys=sort) == compact
    assert dump_json_ascii(value, sort_keys=sort) == json.dumps(value, sort_keys=sort)
    assert dump_json_spaced(value) == json.dumps(value, ensure_ascii=False)
    assert parse_json(dump_json_ascii(value).encode()) == parse_json(dump_json(value))


def test_parse_json_refuses_empty_text() -> None:
    with pytest.raises(json.JSONDecodeError):
        parse_json("")
    with pytest.raises(json.JSONDecodeError):
        parse_json(b"{")


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
