"""What is true now, through the client on both backends: an update supersedes the fact it
changes (the old value stays in the history with its validity), look-alikes both stay, one fact
in two languages is one memory, a proposal shows the fact it contradicts and approving it
supersedes that fact, a weaker contradiction waits for review, and ``as_of`` answers the past."""

from __future__ import annotations

import io
from datetime import UTC, datetime, timedelta

from rich.console import Console

from gateway.console import review_pages
from gateway.ops_cli import _proposal_table
from tests.e2e.conftest import RunningGateway
from tests.tags import fresh_tag

JAN = datetime(2026, 1, 10, tzinfo=UTC)
FEB = datetime(2026, 2, 10, tzinfo=UTC)


def _active(c, ns: str, query: str) -> list[str]:  # type: ignore[no-untyped-def]
    return [h.content for h in c.recall(query, [ns], top_k=10, layers=["semantic"])]


def test_an_update_supersedes_and_the_past_stays_answerable(gw: RunningGateway, ns: str) -> None:
    with gw.client("master") as c:
        old = c.write(ns, "semantic", "Alice lives in Berlin.", event_time=JAN, wait=True)
        new = c.write(
            ns,
            "semantic",
            "Alice moved to Hamburg last month; she lives there now.",
            event_time=FEB,
            wait=True,
        )
        assert new == old  # the update is the fact's new version, not a second fact
        hits = c.recall("where does Alice live?", [ns], top_k=5)
        assert hits[0].content.startswith("Alice moved to Hamburg")
        assert not any("Berlin" in h.content for h in hits)
        assert hits[0].slot == "alice:residence" and hits[0].valid_from == FEB
        versions = c.history(old)
        assert [v.slot_value for v in versions] == ["berlin", "hamburg"]
        assert versions[0].valid_to == FEB and versions[0].superseded_by == f"{old}@2"
        assert versions[1].valid_to is None and versions[1].status == "active"
        # what was true on a date
        then = c.recall("where does Alice live?", [ns], top_k=5, as_of=JAN + timedelta(days=3))
        assert [h.content for h in then] == ["Alice lives in Berlin."]
        assert then[0].valid_to == FEB
        assert [v.slot_value for v in c.history(old, as_of=FEB + timedelta(days=1))] == ["hamburg"]
        assert c.history(old, as_of=JAN - timedelta(days=1)) == []
        before = c.recall("where does Alice live?", [ns], as_of=JAN - timedelta(days=1))
        assert len(before) == 0 and "Berlin" not in before.memory_block


def test_look_alikes_both_stay(gw: RunningGateway, ns: str) -> None:
    pairs = [
        ("Bob has two kids.", "Bob has two dogs."),
        ("Carol lives in Paris.", "Dan lives in Rome."),
        ("Alice speaks French.", "Alice speaks German."),
        ("Alice doesn't eat meat.", "Alice doesn't drink coffee."),
    ]
    with gw.client("master") as c:
        for a, b in pairs:
            first = c.write(ns, "semantic", a, wait=True)
            second = c.write(ns, "semantic", b, wait=True)
            assert first != second, (a, b)
            assert c.get(first).status == "active" and c.get(second).status == "active"


def test_one_fact_in_two_languages_is_one_memory(gw: RunningGateway) -> None:
    ns = f"user/alice{fresh_tag(6)}"
    owner = ns.split("/")[1]
    with gw.client("master") as c:
        zh = c.write(ns, "semantic", "用户不吃香菜", wait=True)
        en = c.write(ns, "semantic", f"{owner.title()} does not eat cilantro (不吃香菜)", wait=True)
        assert en == zh
        merged = c.get(zh)
        assert merged.version == 2 and merged.slot == "user:eats:cilantro"
        moved = c.write(ns, "semantic", "用户已经搬到深圳了，现在住在深圳。", wait=True)
        again = c.write(ns, "semantic", f"{owner.title()} lives in Shenzhen.", wait=True)
        assert again == moved and c.get(moved).slot_value == "shenzhen"


def test_a_contradicting_proposal_shows_the_fact_and_approval_supersedes(
    gw: RunningGateway, ns: str
) -> None:
    sub = f"sub-{fresh_tag(8)}"
    with gw.client("master") as cm, gw.client(sub) as cs:
        fact = cm.write(ns, "semantic", "Alice lives in Berlin.", wait=True)
        proposed = cs.write_result(ns, "semantic", "Alice lives in Hamburg", confidence=0.7)
        same = cs.write_result(ns, "semantic", "Alice lives in Berlin")
        listed = {p.id: p for p in cm.proposals()}
        p = listed[proposed.proposal_id]
        assert p.slot == "alice:residence"
        assert p.conflicts_with is not None and p.conflicts_with.id == fact
        assert p.conflicts_with.content == "Alice lives in Berlin."
        assert listed[same.proposal_id].conflicts_with is None  # it restates the fact
        # the console and the CLI show the conflict and the one decision that settles it
        html = review_pages.proposal_detail(p, [p], "csrf")
        assert "Approve and supersede" in html and "conflicts on alice:residence" in html
        assert html.count("Alice lives in Berlin.") == 1
        assert "⚠ alice:residence" in review_pages.competing_cell(p)
        table = io.StringIO()
        Console(file=table, width=400).print(_proposal_table([p]))
        assert f"alice:residence: Alice lives in Berlin. ({fact}); approving supersedes it" in (
            table.getvalue()
        )
        approved = cm.approve(proposed.proposal_id, reason="she told me")
        assert approved.memory_id == fact
        assert cm.get(fact).content == "Alice lives in Hamburg"
        assert _active(cm, ns, "where does Alice live?") == ["Alice lives in Hamburg"]
        audit = cm.audit(namespace=ns)
        assert any(a.action == "approved" and f"supersedes {fact}" in a.detail for a in audit)


def test_a_weaker_contradiction_waits_for_review(gw: RunningGateway, ns: str) -> None:
    with gw.client("master") as c:
        fact = c.write(ns, "semantic", "Alice works at Siemens.", event_time=JAN, wait=True)
        claim = c.write(
            ns, "semantic", "Alice works at Bosch.", confidence=0.4, event_time=FEB, wait=True
        )
        assert claim != fact
        assert c.get(claim).status == "quarantined" and c.get(claim).superseded_by == fact
        assert _active(c, ns, "where does Alice work?") == ["Alice works at Siemens."]
        queued = {m.id for m in c.review_queue()}
        assert claim in queued
        c.resolve_review(claim, approve=True, reason="confirmed")
        assert c.get(fact).content == "Alice works at Bosch."
        assert _active(c, ns, "where does Alice work?") == ["Alice works at Bosch."]
        assert [v.slot_value for v in c.history(fact)] == ["siemens", "bosch"]


def test_a_formed_fact_meets_the_written_one(gw: RunningGateway) -> None:
    """The demo's three copies of one diet fact (written in English with a Chinese aside, said
    in Chinese, formed from the turn) are one memory."""
    ns = f"user/alice{fresh_tag(6)}"
    owner = ns.split("/")[1].title()
    with gw.client("master") as c:
        written = c.write(ns, "semantic", f"{owner} does not eat cilantro (不吃香菜)", wait=True)
        c.append_turn(ns, "s1", role="user", content="记住：我不吃香菜。")
        assert c.end_session(ns, "s1", wait=True).outcomes.get("confirmed") == 1
        hits = c.recall("what food does the user avoid?", [ns], top_k=5, layers=["semantic"])
        assert [h.id for h in hits] == [written]
