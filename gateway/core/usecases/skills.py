"""Procedural memory (seed 000 §4.3): skills are procedural memories unique by name in their
namespace; registering one again with a new description makes a new version, the same one is a
no-op; matching an intent is a recall over the procedural layer."""

from __future__ import annotations

import json
from dataclasses import dataclass, replace

from gateway.core.model.errors import InvalidArgument, Unavailable
from gateway.core.model.models import Layer, Memory
from gateway.core.ports.ports import RecordStore
from gateway.core.recall.recall import Recaller, RecallQuery
from gateway.core.screening.screening import clean
from gateway.core.usecases.memories import Memories
from gateway.core.writing.inputs import WriteInput
from gateway.core.writing.writes import Writer

MAX_FIELD = 1000


@dataclass(slots=True)
class Skill:
    name: str
    description: str
    trigger: str = ""
    parameter_schema: str = ""
    entry_point: str = ""
    namespace: str = "global"
    version: int = 0
    id: str = ""


def fact_key(name: str) -> str:
    return f"skill:{name.lower()}"


def skill_metadata(s: Skill) -> dict[str, str]:
    return {
        "skill.name": s.name,
        "skill.trigger": s.trigger,
        "skill.parameter_schema": s.parameter_schema,
        "skill.entry_point": s.entry_point,
        "fact_key": fact_key(s.name),
    }


def skill_from(mem: Memory) -> Skill:
    md = mem.metadata
    name = md.get("skill.name", "")
    prefix = f"{name}: "
    description = mem.content[len(prefix) :] if mem.content.startswith(prefix) else mem.content
    return Skill(
        name=name,
        description=description,
        trigger=md.get("skill.trigger", ""),
        parameter_schema=md.get("skill.parameter_schema", ""),
        entry_point=md.get("skill.entry_point", ""),
        namespace=mem.namespace,
        version=mem.version,
        id=mem.id,
    )


class Skills:
    def __init__(
        self, records: RecordStore, writer: Writer, memories: Memories, recaller: Recaller
    ) -> None:
        self._records = records
        self._writer = writer
        self._memories = memories
        self._recaller = recaller

    async def register(self, agent: str, skill: Skill) -> tuple[Skill, bool]:
        """Returns the stored skill and whether it was already registered as is. A sub-agent's
        skill for a shared namespace comes back without an id: it is a proposal."""
        if not skill.name.strip() or len(skill.name) > 128:
            raise InvalidArgument("skill.name must be 1..128 chars", field="skill.name")
        if not skill.description.strip():
            raise InvalidArgument("skill.description is empty", field="skill.description")
        for name in ("trigger", "parameter_schema", "entry_point"):
            if len(getattr(skill, name)) > MAX_FIELD:
                raise InvalidArgument(
                    f"skill.{name} is longer than {MAX_FIELD} chars", field=f"skill.{name}"
                )
        # the name keys the skill: screened here so the stored name and its key agree (the other
        # fields are screened with the write: content and metadata)
        skill = replace(skill, name=clean(skill.name))
        if skill.parameter_schema:
            try:
                json.loads(skill.parameter_schema)
            except ValueError:
                raise InvalidArgument(
                    "skill.parameter_schema is not valid JSON", field="skill.parameter_schema"
                ) from None
        ns = skill.namespace or "global"
        item = WriteInput(
            namespace=ns,
            layer=Layer.PROCEDURAL.value,
            content=f"{skill.name}: {skill.description}",
            type="skill",
            importance=0.7,
            metadata=skill_metadata(skill),
        )
        before = await self._records.find_fact(ns, fact_key(skill.name))
        outcome = (await self._writer.write(agent, [item], wait=True))[0]
        if outcome.proposal_id:
            return replace(skill, namespace=ns, id=""), False
        mem = await self._memories.get(agent, outcome.id)
        duplicate = before is not None and before.version == mem.version
        return skill_from(mem), duplicate

    async def match(
        self, agent: str, intent: str, namespaces: list[str], top_k: int
    ) -> list[tuple[Skill, float]]:
        if not intent.strip():
            raise InvalidArgument("intent is empty: say what the skill should do", field="intent")
        q = RecallQuery(
            query=intent,
            namespaces=tuple(namespaces or ["global"]),
            layers=(Layer.PROCEDURAL,),
            top_k=top_k or 3,
        )
        try:
            result = await self._recaller.recall_as(agent, q)
        except InvalidArgument as exc:
            if exc.field != "query":
                raise
            raise InvalidArgument(
                exc.message.replace("query", "intent", 1), field="intent"
            ) from None
        if result.degraded:  # the answer has no degraded flag: never return a partial one
            raise Unavailable(
                "skills could not be searched (" + "; ".join(result.degraded) + "); retry later"
            )
        return [(skill_from(h.memory), h.score) for h in result.hits]
