"""M7: the episodic graph is namespaced. Entity and session nodes belong to one namespace, and
Neighbourhood never shows (nor walks through) another agent's private events, entities or
sessions — the reproduction of issue 8 (coder asks about the researcher, depth 2)."""

from __future__ import annotations

import pytest

from gateway import client as gc
from tests.e2e.conftest import RunningGateway
from tests.tags import fresh_tag


def test_neighbourhood_never_crosses_into_a_private_namespace(gw: RunningGateway) -> None:
    tag = fresh_tag(8)
    researcher, coder = f"researcher-{tag}", f"coder-{tag}"
    private = f"agent/{researcher}"
    shared = f"user/alice-{tag}"
    with gw.client(researcher) as r:
        secret = r.record_event(
            private,
            f"Drafted the acquisition memo {tag}",
            session_id=f"deal-room-{tag}",
            entities=[f"Project Kyoto {tag}"],
            wait=True,
        )
    with gw.client() as master:
        public = master.record_event(
            shared, f"Alice visited Kyoto {tag}", entities=[f"Project Kyoto {tag}"], wait=True
        )
    kyoto = f"project kyoto {tag}"
    with gw.client(coder) as c:
        found = c.neighbourhood("agent", researcher, depth=2)
        ids = {n.node.id for n in found}
        labels = " ".join(n.label for n in found)
        assert secret not in ids
        assert not any(i.startswith(private) for i in ids), ids
        assert "acquisition" not in labels and f"deal-room-{tag}" not in " ".join(ids)
        # the shared namespace's Kyoto is its own node; the private one is refused outright
        assert {n.node.id for n in c.neighbourhood("entity", f"{shared}/{kyoto}")} == {public}
        with pytest.raises(gc.PermissionDenied):
            c.neighbourhood("entity", f"{private}/{kyoto}")
        with pytest.raises(gc.PermissionDenied):
            c.relate(("entity", f"{private}/{kyoto}"), "SEE_ALSO", ("entity", f"{shared}/{kyoto}"))
    with gw.client(researcher) as r:  # the owner still sees its own graph
        mine = {n.node.id for n in r.neighbourhood("agent", researcher, depth=2)}
        assert {secret, f"{private}/{kyoto}", f"{private}/deal-room-{tag}"} <= mine
    with gw.client() as master:
        assert secret in {n.node.id for n in master.neighbourhood("agent", researcher, depth=2)}
