"""Facts that have no slot get one, on both backends: facts stored before slots existed get
theirs when the gateway next starts (an update stored back then supersedes what it changed, a
restatement in another language merges, look-alikes stay), and so do the facts of an export made
without slots when it is imported. Afterwards a new update supersedes them like any fact."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from gateway.client import GatewayClient
from tests.e2e.conftest import gateway_settings, running_gateway
from tests.tags import fresh_tag

JAN = datetime(2026, 1, 10, tzinfo=UTC)
FEB = datetime(2026, 2, 10, tzinfo=UTC)
MAR = datetime(2026, 3, 10, tzinfo=UTC)
JAN_15 = datetime(2026, 1, 15, tzinfo=UTC)


def _fill_without_slots(c: GatewayClient, ns: str) -> dict[str, str]:
    owner = ns.split("/")[1].title()
    return {
        "berlin": c.write(ns, "semantic", f"{owner} lives in Berlin.", event_time=JAN, wait=True),
        "hamburg": c.write(
            ns, "semantic", f"{owner} moved to Hamburg; she lives there now.", event_time=FEB
        ),
        "kids": c.write(ns, "semantic", "Bob has two kids.", event_time=JAN),
        "dogs": c.write(ns, "semantic", "Bob has two dogs.", event_time=JAN),
        "zh": c.write(ns, "semantic", "用户不吃香菜", event_time=JAN),
        "en": c.write(ns, "semantic", f"{owner} does not eat cilantro.", event_time=FEB),
        "note": c.write(ns, "semantic", "Project kickoff notes are in the shared drive", wait=True),
    }


def _check_slotted(c: GatewayClient, ns: str, ids: dict[str, str]) -> None:
    owner = ns.split("/")[1].title()
    hits = c.recall("where does she live?", [ns], top_k=10, layers=["semantic"])
    contents = [h.content for h in hits]
    assert not any("Berlin" in x for x in contents), contents  # the stale fact is not current
    # the update stored back then superseded the fact it changed: one memory, two values
    home = c.get(ids["hamburg"])  # the later write's id resolves to the fact it updated
    assert home.slot == "user:residence" and home.slot_value == "hamburg"
    assert home.id == ids["berlin"] and c.get(ids["berlin"]).slot_value == "hamburg"
    values = [v.slot_value for v in c.history(home.id) if v.slot_value]
    assert values == ["berlin", "hamburg"], values
    then = c.recall("where does she live?", [ns], top_k=5, layers=["semantic"], as_of=JAN_15)
    assert any("Berlin" in h.content for h in then), [h.content for h in then]
    assert not any("Hamburg" in h.content for h in then)
    # look-alikes both stay, each on its own slot
    assert c.get(ids["kids"]).slot == "bob:count:child"
    assert c.get(ids["dogs"]).slot == "bob:count:dog"
    assert {c.get(ids["kids"]).status, c.get(ids["dogs"]).status} == {"active"}
    # one fact in two languages: one current memory
    diet = [
        h
        for h in c.recall("cilantro 香菜", [ns], top_k=10)
        if "cilantro" in h.content or "香菜" in h.content
    ]
    assert len(diet) == 1, [h.content for h in diet]
    assert c.get(ids["note"]).slot == ""  # no slot the rules can tell: a plain note
    # a new update now meets the slotted fact
    moved = c.write(ns, "semantic", f"{owner} now lives in Munich.", event_time=MAR, wait=True)
    assert moved == home.id
    assert [v.slot_value for v in c.history(moved)][-2:] == ["hamburg", "munich"]


def test_facts_stored_before_slots_get_theirs_at_start(
    tmp_path: Path, backend: dict[str, str]
) -> None:
    ns = f"user/alice{fresh_tag(6)}"
    settings = dict(backend, data_dir=tmp_path / "data")
    before = gateway_settings(tmp_path, fact_slots=False, **settings)
    with running_gateway(before) as old, old.client() as c:
        ids = _fill_without_slots(c, ns)
        c.write(ns, "semantic", "flush", wait=True)  # every write above is applied
        assert c.get(ids["berlin"]).status == c.get(ids["hamburg"]).status == "active"
        assert c.get(ids["berlin"]).slot == ""
    after = gateway_settings(tmp_path, slot_backfill=True, **settings)
    with running_gateway(after) as new, new.client() as c:
        _check_slotted(c, ns, ids)


def test_an_export_without_slots_is_slotted_on_import(
    tmp_path: Path, backend: dict[str, str]
) -> None:
    ns = f"user/alice{fresh_tag(6)}"
    old_settings = gateway_settings(tmp_path / "old", fact_slots=False)
    with running_gateway(old_settings) as old, old.client() as c:
        ids = _fill_without_slots(c, ns)
        c.write(ns, "semantic", "flush", wait=True)
        exported = list(c.export([ns], include_vectors=True))
    with running_gateway(gateway_settings(tmp_path / "new", **backend)) as new, new.client() as c:
        result = c.import_memories(exported)
        assert result.imported == len(exported)
        _check_slotted(c, ns, ids)
