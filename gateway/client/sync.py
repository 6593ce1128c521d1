"""``GatewayClient``: the synchronous client over one gRPC channel, with retries of UNAVAILABLE."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any, TypeVar

import grpc

from gateway.client import types as t
from gateway.client import wire
from gateway.client.errors import Unavailable, typed
from memgate.v1 import memgate_pb2 as pb
from memgate.v1 import memgate_pb2_grpc as pb_grpc

T = TypeVar("T")


class GatewayClient:
    def __init__(
        self,
        target: str,
        agent_id: str,
        api_key: str | None = None,
        timeout: float = 30.0,
        retries: int = 3,
    ) -> None:
        self._channel = grpc.insecure_channel(target)
        self._stub = pb_grpc.MemoryGatewayStub(self._channel)
        self._metadata: tuple[tuple[str, str], ...] = (("x-agent-id", agent_id),)
        if api_key:
            self._metadata += (("x-api-key", api_key),)
        self._timeout = timeout
        self._retries = retries
        self.agent_id = agent_id

    # ---- plumbing
    def __enter__(self) -> GatewayClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._channel.close()

    def _call(self, fn: Callable[..., T], request: Any, retry: bool = True) -> T:
        attempts = self._retries + 1 if retry else 1
        for attempt in range(attempts):
            try:
                return fn(request, metadata=self._metadata, timeout=self._timeout)
            except grpc.RpcError as err:
                error = typed(err)
                if not isinstance(error, Unavailable) or attempt == attempts - 1:
                    raise error from None
                time.sleep(min(0.2 * 2**attempt, 2.0))
        raise AssertionError("unreachable")

    # ---- long-term memories
    def write(
        self, namespace: str, layer: str, content: str, *, wait: bool = False, **kw: Any
    ) -> str:
        """Write one memory; returns its id ('' when it was skipped or became a proposal)."""
        return self.write_result(namespace, layer, content, wait=wait, **kw).id

    def write_result(
        self, namespace: str, layer: str, content: str, *, wait: bool = False, **kw: Any
    ) -> t.WriteResult:
        req = pb.WriteRequest(item=wire.write_item(namespace, layer, content, **kw), wait=wait)
        return wire.write_result(self._call(self._stub.Write, req).result)

    def batch_write(self, items: Iterable[Mapping[str, Any]], *, wait: bool = False) -> list[str]:
        """All or nothing: one bad item rejects the batch (INVALID_ARGUMENT names it)."""
        return [r.id for r in self.batch_write_results(items, wait=wait)]

    def batch_write_results(
        self, items: Iterable[Mapping[str, Any]], *, wait: bool = False
    ) -> list[t.WriteResult]:
        msgs = [wire.write_item(**dict(i)) for i in items]
        req = pb.BatchWriteRequest(items=msgs, wait=wait)
        return [wire.write_result(r) for r in self._call(self._stub.BatchWrite, req).results]

    def recall(
        self,
        query: str,
        namespaces: Sequence[str],
        top_k: int = 10,
        layers: Sequence[str] | None = None,
        *,
        token_budget: int = 0,
        session_id: str = "",
        start: datetime | None = None,
        end: datetime | None = None,
        types: Sequence[str] = (),
    ) -> t.Recall:
        req = pb.RecallRequest(
            query=query,
            namespaces=list(namespaces),
            top_k=top_k,
            layers=[wire.layer_number(x) for x in layers or ()],  # type: ignore[misc]
            token_budget=token_budget,
            session_id=session_id,
            start=wire.ts(start),
            end=wire.ts(end),
            types=list(types),
        )
        return wire.recall(self._call(self._stub.Recall, req))

    def get(self, memory_id: str) -> t.Memory:
        return wire.memory(self._call(self._stub.Get, pb.GetRequest(id=memory_id)).memory)

    def history(self, memory_id: str) -> list[t.Memory]:
        resp = self._call(self._stub.History, pb.HistoryRequest(id=memory_id))
        return [wire.memory(m) for m in resp.versions]

    def forget(self, memory_id: str, reason: str = "") -> t.Memory:
        req = pb.ForgetRequest(id=memory_id, reason=reason)
        return wire.memory(self._call(self._stub.Forget, req).memory)

    # ---- working memory
    def append_turn(
        self,
        namespace: str,
        session_id: str,
        *,
        role: str,
        content: str,
        zone: str = "dialogue",
        metadata: Mapping[str, str] | None = None,
        idempotency_key: str | None = None,
    ) -> t.AppendTurnResult:
        req = pb.AppendTurnRequest(
            namespace=namespace,
            session_id=session_id,
            role=role,
            content=content,
            zone=zone,
            metadata=dict(metadata or {}),
            idempotency_key=idempotency_key or wire.new_key(),
        )
        return wire.append_turn(self._call(self._stub.AppendTurn, req))

    def window(self, namespace: str, session_id: str, zones: Sequence[str] = ()) -> t.Window:
        """The session's turns; ``.degraded`` says working memory could not be read."""
        req = pb.GetWindowRequest(namespace=namespace, session_id=session_id, zones=list(zones))
        return wire.window(self._call(self._stub.GetWindow, req))

    def session_state(self, namespace: str, session_id: str) -> dict[str, str]:
        req = pb.GetSessionStateRequest(namespace=namespace, session_id=session_id)
        return dict(self._call(self._stub.GetSessionState, req).values)

    def update_session_state(
        self,
        namespace: str,
        session_id: str,
        set: Mapping[str, str] | None = None,
        remove: Sequence[str] = (),
    ) -> dict[str, str]:
        req = pb.UpdateSessionStateRequest(
            namespace=namespace, session_id=session_id, set=dict(set or {}), remove=list(remove)
        )
        return dict(self._call(self._stub.UpdateSessionState, req).values)

    def compact(self, namespace: str, session_id: str) -> t.CompactResult:
        req = pb.CompactWindowRequest(namespace=namespace, session_id=session_id)
        resp = self._call(self._stub.CompactWindow, req)
        return t.CompactResult(resp.summarised, resp.summary)

    def clear_scratch(self, namespace: str, session_id: str) -> None:
        self._call(
            self._stub.ClearScratch,
            pb.ClearScratchRequest(namespace=namespace, session_id=session_id),
        )

    # ---- episodic
    def record_event(
        self,
        namespace: str,
        content: str,
        *,
        user_id: str = "",
        links: Sequence[tuple[str, str, str]] = (),
        wait: bool = False,
        **kw: Any,
    ) -> str:
        """Record an event; ``links`` are (RELATION, node kind, node id)."""
        req = pb.RecordEventRequest(
            event=wire.write_item(namespace, "episodic", content, **kw),
            user_id=user_id,
            wait=wait,
            links=[pb.Link(type=t, target=pb.NodeRef(kind=k, id=i)) for t, k, i in links],
        )
        return self._call(self._stub.RecordEvent, req).result.id

    def relate(
        self,
        src: tuple[str, str],
        type: str,
        dst: tuple[str, str],
        at: datetime | None = None,
        properties: Mapping[str, str] | None = None,
    ) -> None:
        req = pb.RelateRequest(
            src=pb.NodeRef(kind=src[0], id=src[1]),
            type=type,
            dst=pb.NodeRef(kind=dst[0], id=dst[1]),
            at=wire.ts(at),
            properties=dict(properties or {}),
        )
        self._call(self._stub.Relate, req)

    def timeline(
        self,
        namespace: str,
        start: datetime | None = None,
        end: datetime | None = None,
        limit: int = 100,
        types: Sequence[str] = (),
    ) -> list[t.Event]:
        req = pb.TimelineRequest(
            namespace=namespace,
            start=wire.ts(start),
            end=wire.ts(end),
            limit=limit,
            types=list(types),
        )
        return [wire.event(e) for e in self._call(self._stub.Timeline, req).events]

    def neighbourhood(
        self, kind: str, node_id: str, depth: int = 1, limit: int = 50
    ) -> list[t.Neighbour]:
        req = pb.NeighbourhoodRequest(
            node=pb.NodeRef(kind=kind, id=node_id), depth=depth, limit=limit
        )
        return [wire.neighbour(n) for n in self._call(self._stub.Neighbourhood, req).neighbours]

    # ---- operations
    def stats(self) -> t.Stats:
        return wire.stats(self._call(self._stub.Stats, pb.StatsRequest()))

    def audit(
        self, agent_id: str = "", namespace: str = "", limit: int = 100
    ) -> list[t.AuditEntry]:
        req = pb.QueryAuditRequest(agent_id=agent_id, namespace=namespace, limit=limit)
        return [wire.audit_entry(e) for e in self._call(self._stub.QueryAudit, req).entries]

    def health(self) -> str:
        from grpc_health.v1 import health_pb2, health_pb2_grpc

        stub = health_pb2_grpc.HealthStub(self._channel)
        try:
            resp = stub.Check(health_pb2.HealthCheckRequest(service=""), timeout=self._timeout)
        except grpc.RpcError as err:
            raise typed(err) from None
        return health_pb2.HealthCheckResponse.ServingStatus.Name(resp.status)

    def breakers(self) -> list[t.BreakerState]:
        """Circuit-breaker state of each store: closed / open / half_open."""
        resp = self._call(self._stub.BreakerStates, pb.BreakerStatesRequest())
        return [t.BreakerState(b.layer, b.state, b.trips, b.last_error) for b in resp.breakers]

    # ---- semantic facts: two-confirmation promotion
    def propose_fact(
        self,
        namespace: str,
        fact: str,
        *,
        session_id: str,
        evidence: Sequence[str] = (),
        confidence: float = 0.5,
        explicit: bool = False,
    ) -> t.FactResult:
        """A fact becomes a semantic memory once seen in two sessions, or at once if explicit."""
        req = pb.ProposeFactRequest(
            namespace=namespace,
            fact=fact,
            session_id=session_id,
            evidence=list(evidence),
            confidence=confidence,
            explicit=explicit,
        )
        return wire.fact(self._call(self._stub.ProposeFact, req))

    def confirm_fact(self, pending_id: str) -> t.FactResult:
        req = pb.ConfirmFactRequest(pending_id=pending_id)
        return wire.fact(self._call(self._stub.ConfirmFact, req))

    # ---- procedural skills
    def register_skill(
        self,
        name: str,
        description: str,
        *,
        trigger: str = "",
        parameter_schema: str = "",
        entry_point: str = "",
        namespace: str = "global",
    ) -> t.RegisterResult:
        skill = pb.Skill(
            name=name,
            description=description,
            trigger=trigger,
            parameter_schema=parameter_schema,
            entry_point=entry_point,
            namespace=namespace,
        )
        resp = self._call(self._stub.RegisterSkill, pb.RegisterSkillRequest(skill=skill))
        return t.RegisterResult(wire.skill(resp.skill), resp.duplicate)

    def match_skill(
        self, intent: str, namespaces: Sequence[str] = ("global",), top_k: int = 3
    ) -> list[t.SkillMatch]:
        req = pb.MatchSkillRequest(intent=intent, namespaces=list(namespaces), top_k=top_k)
        resp = self._call(self._stub.MatchSkill, req)
        return [t.SkillMatch(wire.skill(m.skill), m.score) for m in resp.matches]

    # ---- sub-agent results and arbitration
    def submit_result(
        self,
        task_id: str,
        *,
        status: str,
        summary: str,
        artifacts: Sequence[str] = (),
        decisions: Sequence[str] = (),
        memory_updates: Iterable[Mapping[str, Any]] = (),
        session_id: str = "",
        idempotency_key: str | None = None,
    ) -> t.SubmitResult:
        """Hand a result back: recorded as an event of the task; each memory update is written
        (own namespace) or proposed to the master (shared namespaces)."""
        key = idempotency_key or wire.new_key()
        updates = [
            pb.MemoryUpdate(item=wire.write_item(**{"idempotency_key": f"{key}:{i}", **dict(u)}))
            for i, u in enumerate(memory_updates)
        ]
        req = pb.SubmitResultRequest(
            task_id=task_id,
            status=status,
            summary=summary,
            artifacts=list(artifacts),
            decisions=list(decisions),
            memory_updates=updates,
            session_id=session_id,
            idempotency_key=key,
        )
        return wire.submit_result(self._call(self._stub.SubmitResult, req))

    def proposals(self, state: str = "pending", limit: int = 100) -> list[t.Proposal]:
        req = pb.ListProposalsRequest(state=state, limit=limit)
        return [wire.proposal(p) for p in self._call(self._stub.ListProposals, req).proposals]

    def approve(self, proposal_id: str, reason: str = "") -> t.Proposal:
        req = pb.DecideProposalRequest(id=proposal_id, reason=reason)
        return wire.proposal(self._call(self._stub.ApproveProposal, req))

    def reject(self, proposal_id: str, reason: str = "") -> t.Proposal:
        req = pb.DecideProposalRequest(id=proposal_id, reason=reason)
        return wire.proposal(self._call(self._stub.RejectProposal, req))

    def set_shared_write_policy(
        self, auto_approve: Sequence[str], min_confidence: float = 0.0
    ) -> t.SharedWritePolicy:
        req = pb.SharedWritePolicy(auto_approve=list(auto_approve), min_confidence=min_confidence)
        resp = self._call(self._stub.SetSharedWritePolicy, req)
        return t.SharedWritePolicy(list(resp.auto_approve), resp.min_confidence)

    # ---- batch tasks
    def start_task(self, task_id: str, steps: Sequence[str]) -> t.Task:
        req = pb.StartTaskRequest(id=task_id, steps=list(steps))
        return wire.task(self._call(self._stub.StartTask, req))

    def update_step(
        self, task_id: str, index: int, state: str, *, output: str = "", error: str = ""
    ) -> t.Task:
        req = pb.UpdateStepRequest(
            task_id=task_id, index=index, state=state, output=output, error=error
        )
        return wire.task(self._call(self._stub.UpdateStep, req))

    def get_task(self, task_id: str) -> t.Task:
        return wire.task(self._call(self._stub.GetTask, pb.GetTaskRequest(id=task_id)))

    def review_queue(self, limit: int = 100) -> list[t.Memory]:
        resp = self._call(self._stub.ListReview, pb.ListReviewRequest(limit=limit))
        return [wire.memory(m) for m in resp.memories]

    def maintain(
        self,
        namespaces: Sequence[str] = (),
        *,
        threshold: float = 0.0,
        compact_min: int = 0,
        dry_run: bool = False,
    ) -> t.MaintainResult:
        """Run the decay sweep now (master only): archive what decayed, compact old episodes."""
        req = pb.MaintainRequest(
            namespaces=list(namespaces),
            threshold=threshold,
            compact_min=compact_min,
            dry_run=dry_run,
        )
        return wire.maintain(self._call(self._stub.Maintain, req))
