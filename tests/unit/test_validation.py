"""Every validation rule of a write, at the validator: the error is INVALID_ARGUMENT naming the
field (with the batch prefix), and nothing but a valid item becomes a command."""

from __future__ import annotations

from typing import Any

import pytest

from gateway.core.model.commands import MemoryWrite, TurnAppend
from gateway.core.model.errors import InvalidArgument
from gateway.core.model.models import NodeKind
from gateway.core.writing.inputs import WriteInput, check_node, check_relation, node_kind, prepare
from gateway.settings import Limits

LIMITS = Limits()
BAD_ITEMS = [
    (dict(content=""), "content"),
    (dict(content="   "), "content"),
    (dict(layer="dream"), "layer"),
    (dict(layer=""), "layer"),
    (dict(namespace="users/u1"), "namespace"),
    (dict(namespace="user/"), "namespace"),
    (dict(namespace="agent/a b"), "namespace"),
    (dict(content="x" * (LIMITS.max_content_chars + 1)), "content"),
    (dict(metadata={f"k{i}": "v" for i in range(LIMITS.max_metadata_entries + 1)}), "metadata"),
    (dict(metadata={"k": "v" * (LIMITS.max_metadata_value_chars + 1)}), "metadata"),
    (dict(metadata={"": "v"}), "metadata"),
    (dict(metadata={"memgate.write_id": "forged"}), "metadata"),
    (dict(importance=1.5), "importance"),
    (dict(confidence=-0.1), "confidence"),
    (dict(type="t" * 65), "type"),
    (dict(session_id="s" * 129), "session_id"),
    (dict(task_id="t" * 129), "task_id"),
    (dict(idempotency_key="k" * 129), "idempotency_key"),
    (dict(evidence=["e"] * (LIMITS.max_evidence_items + 1)), "evidence"),
    (dict(entities=["x"] * 33), "entities"),
    (dict(layer="working"), "session_id"),
    (dict(layer="working", session_id="s", zone="attic"), "zone"),
    (dict(layer="working", session_id="s", role="god"), "role"),
]


def _item(**change: Any) -> WriteInput:
    base: dict[str, Any] = dict(namespace="user/u", layer="semantic", content="a valid memory")
    return WriteInput(**(base | change))


@pytest.mark.parametrize(("change", "field"), BAD_ITEMS)
def test_each_rule_names_its_field(change: dict[str, Any], field: str) -> None:
    with pytest.raises(InvalidArgument) as err:
        prepare(_item(**change), LIMITS)
    assert err.value.field == field
    with pytest.raises(InvalidArgument) as batched:
        prepare(_item(**change), LIMITS, "items[3].")
    assert batched.value.field == f"items[3].{field}"


def test_a_valid_item_becomes_its_command() -> None:
    p = prepare(_item(importance=0.4, metadata={"k": "v"}, entities=[" tea ", ""]), LIMITS)
    assert isinstance(p.command, MemoryWrite)
    assert (p.command.namespace, p.command.content, p.command.importance) == (
        "user/u",
        "a valid memory",
        0.4,
    )
    assert p.command.entities == ("tea",) and p.command.received_at is not None
    turn = prepare(_item(layer="working", session_id="s1", role="assistant"), LIMITS)
    assert isinstance(turn.command, TurnAppend) and turn.command.role == "assistant"


def test_small_talk_is_acknowledged_but_not_kept() -> None:
    assert prepare(_item(content="thanks!", importance=None), LIMITS).skipped
    assert not prepare(_item(content="I moved to Berlin", importance=None), LIMITS).skipped


@pytest.mark.parametrize("bad", ["", "lower", "1STARTS_WITH_DIGIT", "A" * 41, "HAS SPACE", "X;Y"])
def test_relation_types(bad: str) -> None:
    with pytest.raises(InvalidArgument):
        check_relation(bad, "type")
    assert check_relation("CAUSED_BY_2", "type") == "CAUSED_BY_2"
    assert check_relation("A" * 40, "type")


def test_node_kinds_and_ids() -> None:
    with pytest.raises(InvalidArgument, match="planet"):
        node_kind("planet", "src.kind")
    with pytest.raises(InvalidArgument):
        check_node(NodeKind.ENTITY, "", "src.id")
    with pytest.raises(InvalidArgument):
        check_node(NodeKind.ENTITY, "x" * 257, "src.id")
    assert node_kind("event", "k").value == "event"
