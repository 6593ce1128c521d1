"""The episodic graph's use cases: relate two nodes, a namespace's timeline, a node's
neighbourhood (never showing, nor walking through, an event, entity or session of a namespace the
caller cannot read)."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import datetime

from gateway.core.access import namespaces as nsp
from gateway.core.access.ownership import TaskOwners
from gateway.core.journal.write_path import WritePath
from gateway.core.model.commands import Relate
from gateway.core.model.control import NewEntry
from gateway.core.model.errors import InvalidArgument, PermissionDenied
from gateway.core.model.limits import Limits
from gateway.core.model.models import (
    SCOPED_KINDS,
    Event,
    Neighbour,
    NodeKind,
    NodeRef,
    scope_of,
    utcnow,
)
from gateway.core.ports.ports import EpisodicGraph, RecordStore
from gateway.core.screening.screening import clean_map
from gateway.core.usecases.memories import Memories
from gateway.core.writing.inputs import check_node, check_relation, node_kind

MAX_TIMELINE = 1000
MAX_NEIGHBOURS = 200


class Episodes:
    def __init__(
        self,
        graph: EpisodicGraph,
        records: RecordStore,
        memories: Memories,
        write_path: WritePath,
        master: str,
        owners: TaskOwners,
        limits: Limits,
    ) -> None:
        self._graph = graph
        self._records = records
        self._memories = memories
        self._write_path = write_path
        self._master = master
        self._owners = owners
        self._limits = limits

    async def relate(
        self,
        agent: str,
        src: tuple[str, str],
        rel_type: str,
        dst: tuple[str, str],
        at: datetime | None,
        properties: dict[str, str],
        wait: bool = True,
    ) -> None:
        nsp.check_agent_id(agent)
        check_relation(rel_type, "type")
        properties = self._properties(properties)
        ends = []
        for (kind, node_id), name in ((src, "src"), (dst, "dst")):
            node = node_kind(kind, f"{name}.kind")
            ref = NodeRef(node, check_node(node, node_id, f"{name}.id"))
            await self._check_node(agent, ref)  # no linking others' private events or entities
            await self._may_relate(agent, ref, name)
            ends.append(ref)
        cmd = Relate(ends[0], rel_type, ends[1], at or utcnow(), properties)
        await self._write_path.commit(
            [NewEntry(uuid.uuid4().hex, agent, "", cmd)], wait, action="relate", details=[rel_type]
        )

    def _properties(self, properties: dict[str, str]) -> dict[str, str]:
        most, longest = self._limits.max_relation_properties, self._limits.max_property_chars
        if len(properties) > most:
            raise InvalidArgument(
                f"properties has {len(properties)} entries, the limit is {most}",
                field="properties",
            )
        for key, value in properties.items():
            if not key or len(key) > 64 or len(value) > longest:
                raise InvalidArgument(
                    f"properties[{key[:40]!r}]: keys 1..64 chars, values at most {longest}",
                    field="properties",
                )
        return clean_map(properties)

    async def _may_relate(self, agent: str, ref: NodeRef, name: str) -> None:
        """Ownership of the graph (L3): a sub-agent relates events it can read, its own agent
        node, tasks and steps it started (or nobody started), sessions and entities; never a
        user node or another agent's node (the master may relate anything). Relations cannot be
        proposals, so these are refused, not queued."""
        if agent == self._master:
            return
        if ref.kind is NodeKind.USER or (ref.kind is NodeKind.AGENT and ref.id != agent):
            raise PermissionDenied(
                f"agent {agent!r} may not relate {ref.kind.value} nodes other than its own: "
                "only the master relates users and other agents",
                field=f"{name}.kind",
            )
        if ref.kind in (NodeKind.TASK, NodeKind.STEP):
            await self._owners.require(agent, ref.id.rpartition("#")[0] or ref.id)

    async def _check_node(self, agent: str, ref: NodeRef) -> None:
        """An event, entity or session node of a namespace ``agent`` cannot read is refused."""
        if ref.kind is NodeKind.EVENT:
            await self._memories.visible(agent, ref.id)
        elif ref.kind in SCOPED_KINDS and (scope := scope_of(ref.id)):
            nsp.check_read(agent, nsp.parse(scope, "node.id"), self._master)

    async def timeline(
        self,
        agent: str,
        namespace: str,
        start: datetime | None,
        end: datetime | None,
        limit: int,
        types: Sequence[str],
    ) -> list[Event]:
        nsp.check_agent_id(agent)
        ns = nsp.parse(namespace)
        nsp.check_read(agent, ns, self._master)
        if start and end and end <= start:
            raise InvalidArgument("end must be after start", field="end")
        return await self._graph.timeline(
            str(ns), start, end, min(max(limit, 1), MAX_TIMELINE), types
        )

    async def neighbourhood(
        self, agent: str, node: tuple[str, str], depth: int, limit: int
    ) -> list[Neighbour]:
        nsp.check_agent_id(agent)
        if depth not in (1, 2):
            raise InvalidArgument("depth must be 1 or 2", field="depth")
        kind = node_kind(node[0], "node.kind")
        ref = NodeRef(kind, check_node(kind, node[1], "node.id"))
        await self._check_node(agent, ref)
        master = agent == self._master
        found = await self._graph.neighbourhood(
            ref, depth, min(max(limit, 1), MAX_NEIGHBOURS), visible_to=None if master else agent
        )
        if master:
            return found
        # events in another agent's private namespace stay hidden
        event_ids = [n.node.id for n in found if n.node.kind is NodeKind.EVENT]
        mems = await self._records.get(event_ids)
        visible = {
            i for i, m in mems.items() if nsp.can_read(agent, nsp.parse(m.namespace), self._master)
        }
        return [n for n in found if n.node.kind is not NodeKind.EVENT or n.node.id in visible]
