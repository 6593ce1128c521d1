"""Multi-agent arbitration (seed 004 §4.1–4.4): sub-agent results, proposals to shared
namespaces and the master's decisions, two-confirmation fact promotion, skills, batch tasks.

Every function takes the service (the facade that owns the stores and the write path) first.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from gateway.core import namespaces as nsp
from gateway.core.applier import normalise_fact
from gateway.core.errors import FailedPrecondition, InvalidArgument, NotFound
from gateway.core.inputs import WriteInput
from gateway.core.models import Layer
from gateway.core.ports import NewEntry
from gateway.core.recall import RecallQuery

if TYPE_CHECKING:
    from gateway.core.service import MemoryService, WriteOutcome

RESULT_STATUSES = ("done", "failed", "partial")
STEP_STATES = ("pending", "running", "done", "failed")
POLICY_KEY = "shared_write_policy"


# ---------------------------------------------------------------- sub-agent results


@dataclass(slots=True)
class ResultOutcome:
    event_id: str
    committed: list[WriteOutcome] = field(default_factory=list)
    proposals: list[dict[str, Any]] = field(default_factory=list)


async def submit_result(
    svc: MemoryService,
    agent: str,
    task_id: str,
    status: str,
    summary: str,
    artifacts: list[str],
    decisions: list[str],
    updates: list[WriteInput],
    session_id: str,
    idempotency_key: str,
) -> ResultOutcome:
    """Record a sub-agent's result as an episodic event of its task, then route each memory
    update through the same arbitration as any write (private: direct; shared: proposal)."""
    nsp.check_agent_id(agent)
    if not task_id:
        raise InvalidArgument("task_id is required", field="task_id")
    nsp.parse(f"task/{task_id}", "task_id")
    if status not in RESULT_STATUSES:
        raise InvalidArgument(
            f"status {status!r} is unknown: use one of {', '.join(RESULT_STATUSES)}", field="status"
        )
    if not summary.strip():
        raise InvalidArgument("summary is empty", field="summary")
    for i, u in enumerate(updates):
        if not u.idempotency_key and idempotency_key:
            u.idempotency_key = f"{idempotency_key}:update:{i}"
    content = summary if not decisions else f"{summary} Decisions: " + "; ".join(decisions)
    event = WriteInput(
        namespace=f"task/{task_id}",
        layer=Layer.EPISODIC.value,
        content=content,
        type=f"subagent_result:{status}",
        importance=0.6 if status == "done" else 0.5,
        session_id=session_id,
        task_id=task_id,
        metadata={"status": status, "artifacts": json.dumps(artifacts[:50])},
        evidence=list(decisions[:16]),
        idempotency_key=f"{idempotency_key}:event" if idempotency_key else "",
    )
    # validate the updates before the event is stored (all or nothing)
    items = [event, *updates]
    outcomes = await svc.write(agent, items, wait=True)
    result = ResultOutcome(event_id=outcomes[0].id)
    for o in outcomes[1:]:
        if o.proposal_id:
            result.proposals.append(await svc.ledger.get_proposal(o.proposal_id) or {})
        else:
            result.committed.append(o)
    return result


# ---------------------------------------------------------------- proposals


async def list_proposals(
    svc: MemoryService, agent: str, state: str, limit: int
) -> list[dict[str, Any]]:
    svc.require_master(agent, "list proposals")
    if state and state not in ("pending", "approved", "rejected"):
        raise InvalidArgument("state must be pending, approved or rejected", field="state")
    return await svc.ledger.list_proposals(state, min(max(limit, 1), 500))


async def decide(
    svc: MemoryService, agent: str, pid: str, approve: bool, reason: str
) -> dict[str, Any]:
    """The master approves (the proposal is written, as the proposer's) or rejects it."""
    svc.require_master(agent, "decide proposals")
    proposal = await svc.ledger.get_proposal(pid)
    if proposal is None:
        raise NotFound(f"proposal {pid!r} does not exist")
    if proposal["state"] != "pending":
        raise FailedPrecondition(f"proposal {pid} is already {proposal['state']}")
    memory_id = ""
    if approve:
        payload = proposal["item"]
        kind = "turn" if payload.get("layer") == Layer.WORKING.value else "memory"
        entry = NewEntry(uuid.uuid4().hex, kind, proposal["proposer"], f"proposal:{pid}", payload)
        accepted = await svc.journal.append([entry])
        lane = svc.lanes[kind]
        await lane.wait_applied([accepted[0].seq], svc.settings.wait_timeout_s)
        memory_id = await svc.ledger.resolve(accepted[0].write_id)
    state = "approved" if approve else "rejected"
    if not await svc.ledger.decide_proposal(pid, state, agent, reason[:500], memory_id):
        raise FailedPrecondition(f"proposal {pid} was decided concurrently")
    await svc.ledger.audit(
        [(agent, state, proposal["item"].get("namespace", ""), pid, reason[:200])]
    )
    return await svc.ledger.get_proposal(pid) or {}


async def set_policy(
    svc: MemoryService, agent: str, auto_approve: list[str], min_confidence: float
) -> dict[str, Any]:
    """Namespaces (or prefixes ending in '*') where sub-agent proposals commit without asking."""
    svc.require_master(agent, "set the shared-write policy")
    for pattern in auto_approve:
        if pattern.endswith("/*"):
            if pattern[:-2] not in ("user", "task"):
                raise InvalidArgument(
                    f"auto_approve pattern {pattern!r}: use user/*, task/* or a namespace",
                    field="auto_approve",
                )
        else:
            nsp.parse(pattern, "auto_approve")
    if not 0 <= min_confidence <= 1:
        raise InvalidArgument("min_confidence must be between 0 and 1", field="min_confidence")
    policy = {"auto_approve": list(auto_approve), "min_confidence": min_confidence}
    await svc.ledger.put_setting(POLICY_KEY, policy)
    svc.policy = policy
    await svc.ledger.audit([(agent, "policy", "", "", json.dumps(policy))])
    return policy


# ---------------------------------------------------------------- facts (seed 000 §3.4)


@dataclass(slots=True)
class FactOutcome:
    pending_id: str
    sessions_seen: int
    promoted: bool
    memory_id: str


async def propose_fact(
    svc: MemoryService,
    agent: str,
    namespace: str,
    fact: str,
    session_id: str,
    evidence: list[str],
    confidence: float,
    explicit: bool,
) -> FactOutcome:
    """An extracted fact waits in the pending table until seen in two different sessions (or
    said explicitly); then it becomes a semantic memory keyed by its normalised text."""
    ns = nsp.parse(namespace)
    nsp.write_access(agent, ns, svc.settings.master_agent)
    if not fact.strip():
        raise InvalidArgument("fact is empty", field="fact")
    if len(fact) > svc.settings.limits.max_content_chars:
        raise InvalidArgument("fact is too long", field="fact")
    if not session_id:
        raise InvalidArgument(
            "session_id is required: promotion counts distinct sessions", field="session_id"
        )
    if not 0 <= confidence <= 1:
        raise InvalidArgument("confidence must be between 0 and 1", field="confidence")
    key = normalise_fact(fact)
    row = await svc.ledger.see_fact(
        uuid.uuid4().hex, str(ns), key, fact, session_id, evidence, confidence or 0.5
    )
    if row["promoted_to"]:
        return FactOutcome(row["id"], len(row["sessions"]), True, row["promoted_to"])
    if explicit or len(row["sessions"]) >= 2:
        return await _promote(svc, agent, row)
    return FactOutcome(row["id"], len(row["sessions"]), False, "")


async def confirm_fact(svc: MemoryService, agent: str, pending_id: str) -> FactOutcome:
    svc.require_master(agent, "confirm a pending fact")
    row = await svc.ledger.get_pending_fact(pending_id)
    if row is None:
        raise NotFound(f"pending fact {pending_id!r} does not exist")
    if row["promoted_to"]:
        return FactOutcome(row["id"], len(row["sessions"]), True, row["promoted_to"])
    return await _promote(svc, agent, row)


async def _promote(svc: MemoryService, agent: str, row: dict[str, Any]) -> FactOutcome:
    item = WriteInput(
        namespace=row["namespace"],
        layer=Layer.SEMANTIC.value,
        content=row["fact"],
        type="fact",
        importance=0.7,
        confidence=float(row["confidence"]),
        evidence=row["evidence"][:16],
        metadata={"fact_key": row["fact_key"], "sessions": ",".join(row["sessions"])[:1000]},
        idempotency_key=f"promote:{row['id']}",
    )
    outcome = (await svc.write(agent, [item], wait=True))[0]
    if outcome.id:
        await svc.ledger.mark_promoted(row["id"], outcome.id)
    return FactOutcome(row["id"], len(row["sessions"]), bool(outcome.id), outcome.id)


# ---------------------------------------------------------------- skills


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


def _skill_metadata(s: Skill) -> dict[str, str]:
    return {
        "skill.name": s.name,
        "skill.trigger": s.trigger[:1000],
        "skill.parameter_schema": s.parameter_schema[:1000],
        "skill.entry_point": s.entry_point[:1000],
        "fact_key": f"skill:{s.name.lower()}",
    }


async def register_skill(svc: MemoryService, agent: str, skill: Skill) -> tuple[Skill, bool]:
    """A skill is a procedural memory whose signature (its name) is unique in the namespace:
    registering it again with a new description makes a new version, the same one is a no-op."""
    if not skill.name or len(skill.name) > 128:
        raise InvalidArgument("skill.name must be 1..128 chars", field="skill.name")
    if not skill.description.strip():
        raise InvalidArgument("skill.description is empty", field="skill.description")
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
        metadata=_skill_metadata(skill),
    )
    before = await svc.stores.records.find_fact(ns, f"skill:{skill.name.lower()}")
    outcome = (await svc.write(agent, [item], wait=True))[0]
    if outcome.proposal_id:
        return Skill(**{**skill.__dict__, "namespace": ns, "id": ""}), False
    mem = await svc.get(agent, outcome.id)
    duplicate = before is not None and before.version == mem.version
    return _skill_from(mem), duplicate


def _skill_from(mem: Any) -> Skill:
    md = mem.metadata
    name = md.get("skill.name", "")
    description = (
        mem.content[len(name) + 2 :] if mem.content.startswith(f"{name}: ") else mem.content
    )
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


async def match_skill(
    svc: MemoryService, agent: str, intent: str, namespaces: list[str], top_k: int
) -> list[tuple[Skill, float]]:
    q = RecallQuery(
        query=intent,
        namespaces=tuple(namespaces or ["global"]),
        layers=(Layer.PROCEDURAL,),
        top_k=top_k or 3,
    )
    result = await svc.recall(agent, q)
    return [(_skill_from(h.memory), h.score) for h in result.hits]


# ---------------------------------------------------------------- batch tasks (seed 004 §4.4)


@dataclass(slots=True)
class Task:
    id: str
    steps: list[dict[str, Any]]
    resume_at: int
    state: str


async def start_task(svc: MemoryService, agent: str, task_id: str, steps: list[str]) -> Task:
    nsp.check_agent_id(agent)
    nsp.parse(f"task/{task_id}", "id")
    if not steps or len(steps) > 1000 or any(not s.strip() for s in steps):
        raise InvalidArgument("steps must be 1..1000 non-empty names", field="steps")
    existing = await svc.ledger.task_steps(task_id)
    if existing and [r[1] for r in existing] != list(steps):
        raise FailedPrecondition(f"task {task_id} exists with other steps; use a new task id")
    await svc.ledger.start_task(task_id, steps)
    task = await get_task(svc, agent, task_id)
    for step in task.steps:
        await _mirror_step(svc, agent, task_id, step)
    return task


async def _mirror_step(svc: MemoryService, agent: str, task_id: str, step: dict[str, Any]) -> None:
    """Steps are nodes of the episodic graph too: (step)-[:STEP_OF {at, state}]->(task).
    The ledger holds the authoritative state; the graph mirror is journaled, so durable."""
    await svc.relate(
        agent,
        ("step", f"{task_id}#{step['index']}"),
        "STEP_OF",
        ("task", task_id),
        None,
        {"name": step["name"], "index": str(step["index"]), "state": step["state"]},
        wait=False,
    )


async def get_task(svc: MemoryService, agent: str, task_id: str) -> Task:
    nsp.check_agent_id(agent)
    rows = await svc.ledger.task_steps(task_id)
    if not rows:
        raise NotFound(f"task {task_id!r} does not exist: start it first")
    steps: list[dict[str, Any]] = [
        {
            "index": r[0],
            "name": r[1],
            "state": r[2],
            "output": r[3],
            "error": r[4],
            "attempts": r[5],
        }
        for r in rows
    ]
    resume_at = next((s["index"] for s in steps if s["state"] != "done"), len(steps))
    if resume_at == len(steps):
        state = "done"
    elif any(s["state"] == "failed" for s in steps):
        state = "failed"
    elif any(s["state"] != "pending" for s in steps):
        state = "running"
    else:
        state = "pending"
    return Task(task_id, steps, resume_at, state)


async def update_step(
    svc: MemoryService, agent: str, task_id: str, index: int, state: str, output: str, error: str
) -> Task:
    """A retry resumes at the first step that is not done; a done step never runs again."""
    if state not in STEP_STATES:
        raise InvalidArgument(f"state must be one of {', '.join(STEP_STATES)}", field="state")
    task = await get_task(svc, agent, task_id)
    if not 0 <= index < len(task.steps):
        raise InvalidArgument(f"index must be 0..{len(task.steps) - 1}", field="index")
    if task.steps[index]["state"] == "done":
        if state == "done":
            return task  # a retried completion is harmless
        raise FailedPrecondition(
            f"step {index} of task {task_id} is done and is never repeated; resume at step "
            f"{task.resume_at}"
        )
    await svc.ledger.update_step(task_id, index, state, output[:4000], error[:2000])
    await svc.ledger.audit([(agent, f"step:{state}", f"task/{task_id}", str(index), error[:200])])
    task = await get_task(svc, agent, task_id)
    await _mirror_step(svc, agent, task_id, task.steps[index])
    return task
