"""ProposalLedger contract: sub-agents' writes to shared namespaces, stored once, decided once,
counted in the backlog, kept across a restart."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from gateway.core.model.commands import MemoryWrite, TurnAppend
from gateway.core.model.control import Proposal
from gateway.core.model.models import Layer
from gateway.core.ports.control_ports import ProposalLedger
from tests.contract.ledger.opening import Opens, opened


class ProposalStore(ProposalLedger, Opens, Protocol):
    """A proposal adapter as the suite opens it."""


async def test_proposals_add_once_list_and_decide_once(ledger: ProposalLedger) -> None:
    item = MemoryWrite("user/a", Layer.SEMANTIC, "likes tea", confidence=0.6)
    stored = await ledger.add_proposal(Proposal("p1", "researcher", item))
    assert (stored.state, stored.item, stored.proposer) == ("pending", item, "researcher")
    assert stored.created > 0
    other = MemoryWrite("user/a", Layer.SEMANTIC, "something else")
    again = await ledger.add_proposal(Proposal("p1", "researcher", other))
    assert again.item == item  # an existing id keeps what it first stored
    turn = TurnAppend("user/a", "s1", "hello")
    await ledger.add_proposal(Proposal("p2", "coder", turn))
    assert [p.id for p in await ledger.list_proposals("pending", 10)] == ["p1", "p2"]
    assert (await ledger.get_proposal("p2")).item == turn  # type: ignore[union-attr]
    assert await ledger.decide_proposal("p1", "approved", "master", "fine", "m9")
    assert not await ledger.decide_proposal("p1", "rejected", "master", "late")
    decided = await ledger.get_proposal("p1")
    assert decided is not None
    assert (decided.state, decided.decided_by, decided.reason, decided.memory_id) == (
        "approved",
        "master",
        "fine",
        "m9",
    )
    assert [p.id for p in await ledger.list_proposals("", 10)] == ["p1", "p2"]
    assert await ledger.get_proposal("nope") is None


async def test_proposal_backlog_counts_pending_and_the_oldest(ledger: ProposalLedger) -> None:
    assert await ledger.proposal_backlog() == (0, 0.0)
    item = MemoryWrite("user/a", Layer.SEMANTIC, "likes tea")
    await ledger.add_proposal(Proposal("p1", "r", item, created=1000.0))
    await ledger.add_proposal(Proposal("p2", "r", item, created=2000.0))
    assert await ledger.proposal_backlog() == (2, 1000.0)
    await ledger.decide_proposal("p1", "rejected", "master", "no")
    assert await ledger.proposal_backlog() == (1, 2000.0)


async def test_proposals_survive_a_restart(make_ledger: Callable[[], ProposalStore]) -> None:
    rule = MemoryWrite("global", Layer.SEMANTIC, "rule")
    async with opened(make_ledger) as ledger:
        await ledger.add_proposal(Proposal("p1", "r", rule))
        await ledger.add_proposal(Proposal("p2", "r", TurnAppend("global", "s1", "hi")))
        await ledger.decide_proposal("p2", "rejected", "master", "no")
    async with opened(make_ledger) as ledger:
        kept = await ledger.get_proposal("p1")
        assert kept is not None and (kept.item, kept.state) == (rule, "pending")
        assert [(p.id, p.state) for p in await ledger.list_proposals("", 10)] == [
            ("p1", "pending"),
            ("p2", "rejected"),
        ]
        assert (await ledger.proposal_backlog())[0] == 1
        assert not await ledger.decide_proposal("p2", "approved", "master", "late")
