"""The typed Python client agents use.

    from gateway.client import GatewayClient
    with GatewayClient("127.0.0.1:50051", agent_id="master") as c:
        mid = c.write(namespace="user/u1", layer="semantic", content="...", wait=True)
        hits = c.recall("...", namespaces=["user/u1"])

Errors come back as typed exceptions (``gateway.client.InvalidArgument`` …) carrying the gRPC
status. Only UNAVAILABLE is retried, and writes always carry an idempotency key (one is made up
when the caller gives none), so a retried write is stored once.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, TypeVar

import grpc

from gateway.core.errors import (
    Conflict,
    FailedPrecondition,
    InvalidArgument,
    MemgateError,
    NotFound,
    Overloaded,
    PermissionDenied,
    Unauthenticated,
    Unavailable,
    Unimplemented,
)
from gateway.core.inputs import WriteInput
from gateway.core.models import Event, Neighbour, Turn
from gateway.rpc import conversions as cv
from memgate.v1 import memgate_pb2 as pb
from memgate.v1 import memgate_pb2_grpc as pb_grpc

__all__ = [
    "Conflict",
    "FailedPrecondition",
    "GatewayClient",
    "GatewayError",
    "Hit",
    "InvalidArgument",
    "NotFound",
    "Overloaded",
    "PermissionDenied",
    "Recall",
    "Unauthenticated",
    "Unavailable",
    "Unimplemented",
]

GatewayError = MemgateError
T = TypeVar("T")

_BY_CODE: dict[grpc.StatusCode, type[MemgateError]] = {
    grpc.StatusCode.INVALID_ARGUMENT: InvalidArgument,
    grpc.StatusCode.NOT_FOUND: NotFound,
    grpc.StatusCode.PERMISSION_DENIED: PermissionDenied,
    grpc.StatusCode.UNAUTHENTICATED: Unauthenticated,
    grpc.StatusCode.ABORTED: Conflict,
    grpc.StatusCode.ALREADY_EXISTS: Conflict,
    grpc.StatusCode.FAILED_PRECONDITION: FailedPrecondition,
    grpc.StatusCode.UNAVAILABLE: Unavailable,
    grpc.StatusCode.DEADLINE_EXCEEDED: Unavailable,
    grpc.StatusCode.RESOURCE_EXHAUSTED: Overloaded,
    grpc.StatusCode.UNIMPLEMENTED: Unimplemented,
}


def _typed(err: grpc.RpcError) -> MemgateError:
    code = err.code()  # type: ignore[attr-defined]
    exc = _BY_CODE.get(code, MemgateError)(err.details() or code.name)  # type: ignore[attr-defined]
    exc.code = code  # type: ignore[attr-defined]
    return exc


@dataclass(frozen=True, slots=True)
class Hit:
    id: str
    content: str
    score: float
    layer: str
    namespace: str
    metadata: dict[str, str]
    event_time: datetime | None
    type: str = ""
    similarity: float = 0.0
    version: int = 1


@dataclass(frozen=True, slots=True)
class Recall:
    """Hits best first, plus the memory block to put in the model's context."""

    hits: list[Hit]
    memory_block: str
    block_tokens: int
    routed_layers: list[str]
    degraded: list[str] = field(default_factory=list)

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter(self.hits)

    def __len__(self) -> int:
        return len(self.hits)

    def __getitem__(self, i: int) -> Hit:
        return self.hits[i]


_LAYERS = {
    "working": pb.WORKING,
    "episodic": pb.EPISODIC,
    "semantic": pb.SEMANTIC,
    "procedural": pb.PROCEDURAL,
}


def _layer(name: str) -> int:
    if not name:
        return pb.LAYER_UNSPECIFIED
    # an unknown name goes out as an unknown number: the server answers INVALID_ARGUMENT
    return _LAYERS.get(name, 99)


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
                typed = _typed(err)
                if not isinstance(typed, Unavailable) or attempt == attempts - 1:
                    raise typed from None
                time.sleep(min(0.2 * 2**attempt, 2.0))
        raise AssertionError("unreachable")

    @staticmethod
    def _item(
        namespace: str,
        layer: str,
        content: str,
        *,
        type: str = "",
        importance: float | None = None,
        confidence: float | None = None,
        session_id: str = "",
        task_id: str = "",
        event_time: datetime | None = None,
        metadata: Mapping[str, str] | None = None,
        evidence: Sequence[str] = (),
        entities: Sequence[str] = (),
        idempotency_key: str | None = None,
        role: str = "",
        zone: str = "",
    ) -> pb.WriteItem:
        msg = cv.write_item_to_pb(
            WriteInput(
                namespace=namespace,
                layer="",
                content=content,
                type=type,
                importance=importance,
                confidence=confidence,
                session_id=session_id,
                task_id=task_id,
                event_time=event_time,
                metadata=dict(metadata or {}),
                evidence=list(evidence),
                entities=list(entities),
                idempotency_key=idempotency_key or uuid.uuid4().hex,
                role=role,
                zone=zone,
            )
        )
        msg.layer = _layer(layer)  # type: ignore[assignment]
        return msg

    # ---- long-term memories
    def write(
        self, namespace: str, layer: str, content: str, *, wait: bool = False, **kw: Any
    ) -> str:
        """Write one memory; returns its id ('' when it was skipped or became a proposal)."""
        return self.write_result(namespace, layer, content, wait=wait, **kw).id

    def write_result(
        self, namespace: str, layer: str, content: str, *, wait: bool = False, **kw: Any
    ) -> pb.WriteResult:
        req = pb.WriteRequest(item=self._item(namespace, layer, content, **kw), wait=wait)
        return self._call(self._stub.Write, req).result

    def batch_write(self, items: Iterable[Mapping[str, Any]], *, wait: bool = False) -> list[str]:
        """All or nothing: one bad item rejects the batch (INVALID_ARGUMENT names it)."""
        return [r.id for r in self.batch_write_results(items, wait=wait)]

    def batch_write_results(
        self, items: Iterable[Mapping[str, Any]], *, wait: bool = False
    ) -> list[pb.WriteResult]:
        msgs = [self._item(**dict(i)) for i in items]
        req = pb.BatchWriteRequest(items=msgs, wait=wait)
        return list(self._call(self._stub.BatchWrite, req).results)

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
    ) -> Recall:
        req = pb.RecallRequest(
            query=query,
            namespaces=list(namespaces),
            top_k=top_k,
            layers=[_layer(x) for x in layers or ()],  # type: ignore[misc]
            token_budget=token_budget,
            session_id=session_id,
            start=cv.ts(start),
            end=cv.ts(end),
            types=list(types),
        )
        resp = self._call(self._stub.Recall, req)
        hits = [
            Hit(
                id=h.memory.id,
                content=h.memory.content,
                score=h.score,
                layer=cv.layer_name(h.memory.layer),
                namespace=h.memory.namespace,
                metadata=dict(h.memory.metadata),
                event_time=cv.from_ts(h.memory, "event_time"),
                type=h.memory.type,
                similarity=h.similarity,
                version=h.memory.version,
            )
            for h in resp.hits
        ]
        return Recall(
            hits,
            resp.memory_block,
            resp.block_tokens,
            [cv.layer_name(x) for x in resp.routed_layers],
            list(resp.degraded),
        )

    def get(self, memory_id: str) -> pb.Memory:
        return self._call(self._stub.Get, pb.GetRequest(id=memory_id)).memory

    def history(self, memory_id: str) -> list[pb.Memory]:
        return list(self._call(self._stub.History, pb.HistoryRequest(id=memory_id)).versions)

    def forget(self, memory_id: str, reason: str = "") -> pb.Memory:
        return self._call(self._stub.Forget, pb.ForgetRequest(id=memory_id, reason=reason)).memory

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
    ) -> pb.AppendTurnResponse:
        req = pb.AppendTurnRequest(
            namespace=namespace,
            session_id=session_id,
            role=role,
            content=content,
            zone=zone,
            metadata=dict(metadata or {}),
            idempotency_key=idempotency_key or uuid.uuid4().hex,
        )
        return self._call(self._stub.AppendTurn, req)

    def window(self, namespace: str, session_id: str, zones: Sequence[str] = ()) -> list[Turn]:
        req = pb.GetWindowRequest(namespace=namespace, session_id=session_id, zones=list(zones))
        return [cv.turn_from_pb(t) for t in self._call(self._stub.GetWindow, req).turns]

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

    def compact(self, namespace: str, session_id: str) -> pb.CompactWindowResponse:
        req = pb.CompactWindowRequest(namespace=namespace, session_id=session_id)
        return self._call(self._stub.CompactWindow, req)

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
            event=self._item(namespace, "episodic", content, **kw),
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
            at=cv.ts(at),
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
    ) -> list[Event]:
        req = pb.TimelineRequest(
            namespace=namespace, start=cv.ts(start), end=cv.ts(end), limit=limit, types=list(types)
        )
        return [cv.event_from_pb(e) for e in self._call(self._stub.Timeline, req).events]

    def neighbourhood(
        self, kind: str, node_id: str, depth: int = 1, limit: int = 50
    ) -> list[Neighbour]:
        req = pb.NeighbourhoodRequest(
            node=pb.NodeRef(kind=kind, id=node_id), depth=depth, limit=limit
        )
        return [
            cv.neighbour_from_pb(n) for n in self._call(self._stub.Neighbourhood, req).neighbours
        ]

    # ---- operations
    def stats(self) -> pb.StatsResponse:
        return self._call(self._stub.Stats, pb.StatsRequest())

    def audit(
        self, agent_id: str = "", namespace: str = "", limit: int = 100
    ) -> list[pb.AuditEntry]:
        req = pb.QueryAuditRequest(agent_id=agent_id, namespace=namespace, limit=limit)
        return list(self._call(self._stub.QueryAudit, req).entries)

    def health(self) -> str:
        from grpc_health.v1 import health_pb2, health_pb2_grpc

        stub = health_pb2_grpc.HealthStub(self._channel)
        try:
            resp = stub.Check(health_pb2.HealthCheckRequest(service=""), timeout=self._timeout)
        except grpc.RpcError as err:
            raise _typed(err) from None
        return health_pb2.HealthCheckResponse.ServingStatus.Name(resp.status)

    def breakers(self) -> list[pb.BreakerState]:
        """Circuit-breaker state of each store: closed / open / half_open."""
        return list(self._call(self._stub.BreakerStates, pb.BreakerStatesRequest()).breakers)

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
    ) -> pb.ProposeFactResponse:
        """A fact becomes a semantic memory once seen in two sessions, or at once if explicit."""
        req = pb.ProposeFactRequest(
            namespace=namespace,
            fact=fact,
            session_id=session_id,
            evidence=list(evidence),
            confidence=confidence,
            explicit=explicit,
        )
        return self._call(self._stub.ProposeFact, req)

    def confirm_fact(self, pending_id: str) -> pb.ProposeFactResponse:
        return self._call(self._stub.ConfirmFact, pb.ConfirmFactRequest(pending_id=pending_id))

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
    ) -> pb.RegisterSkillResponse:
        skill = pb.Skill(
            name=name,
            description=description,
            trigger=trigger,
            parameter_schema=parameter_schema,
            entry_point=entry_point,
            namespace=namespace,
        )
        return self._call(self._stub.RegisterSkill, pb.RegisterSkillRequest(skill=skill))

    def match_skill(
        self, intent: str, namespaces: Sequence[str] = ("global",), top_k: int = 3
    ) -> list[pb.SkillMatch]:
        req = pb.MatchSkillRequest(intent=intent, namespaces=list(namespaces), top_k=top_k)
        return list(self._call(self._stub.MatchSkill, req).matches)

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
    ) -> pb.SubmitResultResponse:
        """Hand a result back: recorded as an event of the task; each memory update is written
        (own namespace) or proposed to the master (shared namespaces)."""
        key = idempotency_key or uuid.uuid4().hex
        updates = [
            pb.MemoryUpdate(item=self._item(**{"idempotency_key": f"{key}:{i}", **dict(u)}))
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
        return self._call(self._stub.SubmitResult, req)

    def proposals(self, state: str = "pending", limit: int = 100) -> list[pb.Proposal]:
        req = pb.ListProposalsRequest(state=state, limit=limit)
        return list(self._call(self._stub.ListProposals, req).proposals)

    def approve(self, proposal_id: str, reason: str = "") -> pb.Proposal:
        req = pb.DecideProposalRequest(id=proposal_id, reason=reason)
        return self._call(self._stub.ApproveProposal, req)

    def reject(self, proposal_id: str, reason: str = "") -> pb.Proposal:
        req = pb.DecideProposalRequest(id=proposal_id, reason=reason)
        return self._call(self._stub.RejectProposal, req)

    def set_shared_write_policy(
        self, auto_approve: Sequence[str], min_confidence: float = 0.0
    ) -> pb.SharedWritePolicy:
        req = pb.SharedWritePolicy(auto_approve=list(auto_approve), min_confidence=min_confidence)
        return self._call(self._stub.SetSharedWritePolicy, req)

    # ---- batch tasks
    def start_task(self, task_id: str, steps: Sequence[str]) -> pb.Task:
        return self._call(self._stub.StartTask, pb.StartTaskRequest(id=task_id, steps=list(steps)))

    def update_step(
        self, task_id: str, index: int, state: str, *, output: str = "", error: str = ""
    ) -> pb.Task:
        req = pb.UpdateStepRequest(
            task_id=task_id, index=index, state=state, output=output, error=error
        )
        return self._call(self._stub.UpdateStep, req)

    def get_task(self, task_id: str) -> pb.Task:
        return self._call(self._stub.GetTask, pb.GetTaskRequest(id=task_id))

    def review_queue(self, limit: int = 100) -> list[pb.Memory]:
        return list(self._call(self._stub.ListReview, pb.ListReviewRequest(limit=limit)).memories)

    def maintain(
        self,
        namespaces: Sequence[str] = (),
        *,
        threshold: float = 0.0,
        compact_min: int = 0,
        dry_run: bool = False,
    ) -> pb.MaintainResponse:
        """Run the decay sweep now (master only): archive what decayed, compact old episodes."""
        req = pb.MaintainRequest(
            namespaces=list(namespaces),
            threshold=threshold,
            compact_min=compact_min,
            dry_run=dry_run,
        )
        return self._call(self._stub.Maintain, req)
