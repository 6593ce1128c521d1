"""The episodic graph's use cases: relate two nodes, a namespace's timeline, a node's
neighbourhood (never showing, nor walking through, an event, entity or session of a namespace the
caller cannot read)."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import datetime

from gateway.core.access import namespaces as nsp
from gateway.core.access import write_policy as wp
from gateway.core.access.ownership import TaskOwners
from gateway.core.journal.write_path import WritePath
from gateway.core.model.commands import Relate
from gateway.core.model.control import NewEntry
from gateway.core.model.errors import InvalidArgument
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
from gateway.core.model.refusals import refuse_injection
from gateway.core.ports.injection_screen import RULES_ONLY, InjectionScreen
from gateway.core.ports.ports import EpisodicGraph, RecordStore
from gateway.core.screening.screening import clean_map
from gateway.core.usecases.memories import Memories
from gateway.core.writing.inputs import check_node, check_relation, node_kind
from gateway.core.writing.second_screen import refuse_similar

MAX_TIMELINE = 1000
MAX_NEIGHBOURS = 200


class GraphEnds:
    """Who may put an end of a relation on a node (Relate, and RecordEvent's links): the
    ``graph`` row of ``write_policy.TABLE`` for the node's namespace — the event's, the scope of
    an entity or session, the user's, the agent's, the task's — after the node's visibility (an
    event or scoped node of a namespace the caller cannot read answers like a missing one).
    Tasks and steps also need ownership; unscoped entities and sessions are in no namespace."""

    def __init__(self, memories: Memories, owners: TaskOwners, master: str) -> None:
        self._memories = memories
        self._owners = owners
        self._master = master

    async def visible(self, agent: str, ref: NodeRef) -> str:
        """The node's namespace ("" for none), if ``agent`` may read it."""
        if ref.kind is NodeKind.EVENT:
            return (await self._memories.visible(agent, ref.id)).namespace
        if ref.kind in SCOPED_KINDS and (scope := scope_of(ref.id)):
            nsp.check_read(agent, nsp.parse(scope, "node.id"), self._master)
            return scope
        if ref.kind is NodeKind.USER:
            return f"user/{ref.id}"
        if ref.kind is NodeKind.AGENT:
            return f"agent/{ref.id}"
        if ref.kind in (NodeKind.TASK, NodeKind.STEP):
            return f"task/{ref.id.rpartition('#')[0] or ref.id}"
        return ""

    async def check(self, agent: str, ref: NodeRef, name: str) -> None:
        if agent == self._master:
            if ref.kind is NodeKind.EVENT or ref.kind in SCOPED_KINDS:
                await self.visible(agent, ref)
            return
        namespace = await self.visible(agent, ref)
        if not namespace:
            return
        wp.require(wp.Target.GRAPH, agent, nsp.parse(namespace, f"{name}.id"), self._master, name)
        if ref.kind in (NodeKind.TASK, NodeKind.STEP):
            await self._owners.require(agent, ref.id.rpartition("#")[0] or ref.id)


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
        *,
        injection_screen: InjectionScreen = RULES_ONLY,
    ) -> None:
        self._graph = graph
        self._screen = injection_screen
        self._records = records
        self._memories = memories
        self._write_path = write_path
        self._master = master
        self._owners = owners
        self._limits = limits
        self._ends = GraphEnds(memories, owners, master)

    async def relate(
        self,
        agent: str,
        src: tuple[str, str],
        rel_type: str,
        dst: tuple[str, str],
        at: datetime | None,
        properties: dict[str, str],
        wait: bool = True,
        *,
        second_screen: bool = True,
    ) -> None:
        """``second_screen=False``: the properties were screened already (a task step's mirror
        holds its name, index and state)."""
        nsp.check_agent_id(agent)
        check_relation(rel_type, "type")
        raw = properties
        properties = self._properties(properties)
        if second_screen:
            await refuse_similar(
                self._screen, [("properties", t) for kv in raw.items() for t in kv]
            )
        ends = []
        for (kind, node_id), name in ((src, "src"), (dst, "dst")):
            node = node_kind(kind, f"{name}.kind")
            ref = NodeRef(node, check_node(node, node_id, f"{name}.id"))
            await self._ends.check(agent, ref, name)
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
        for key, value in properties.items():
            refuse_injection(key, "properties")
            refuse_injection(value, "properties")
        return clean_map(properties)

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
        await self._ends.visible(agent, ref)
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
