"""The gateway's RPCs, each written once: the request it sends (built with ``wire``), the RPC it
goes to and how its answer is read. Both clients — ``sync.GatewayClient`` (blocking) and
``aio.GatewayClient`` (asyncio) — expose these as their methods and differ only in how they
carry a ``Call`` over gRPC (``Blocking._run`` / ``Asynchronous._run``)."""

from __future__ import annotations

import functools
import inspect
import ipaddress
import json
import random
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Generic, ParamSpec, TypeVar, overload

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from gateway.client import types as t
from gateway.client import wire
from gateway.client.errors import GatewayError, Overloaded, Unavailable, typed
from memgate.v1 import memgate_pb2 as pb
from memgate.v1 import memgate_pb2_grpc as pb_grpc

P = ParamSpec("P")
T = TypeVar("T")

GATEWAY = "gateway"  # memgate.v1.MemoryGateway
HEALTH = "health"  # grpc.health.v1.Health
#: names the tool a master's call comes through ("console"): its recalls are then audited as
#: "console_recall", not as the master agent's own (the gateway honours it for the master only)
VIA_HEADER = "x-memgate-via"


@dataclass(frozen=True, slots=True)
class Call(Generic[T]):
    """One RPC ready to send: retried as is (same request, so the same idempotency key)."""

    rpc: str  # the method name on the stub, e.g. "Write"
    request: Any
    parse: Callable[[Any], T]
    retry: bool = True
    service: str = GATEWAY


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """UNAVAILABLE (and a deadline) is retried with capped exponential back-off, jittered (half
    to all of it, as the TypeScript and Go clients do, docs/CLIENTS.md); with several
    gateways the first retry goes at once (round robin sends it to another replica).
    RESOURCE_EXHAUSTED (``Overloaded``: the gateway refused the call before doing anything) is
    retried after the gateway's ``retry-after-ms`` hint (at most ``overload_cap_s``), up to
    ``overload_retries`` times (none when ``retries`` is 0): a burst of calls from one agent
    waits its turn instead of failing. The same request goes again, so a write keeps its
    idempotency key."""

    retries: int = 3
    base_s: float = 0.2
    cap_s: float = 2.0
    replicas: int = 1
    overload_retries: int = 8
    overload_cap_s: float = 5.0

    def after_failure(self, call: Call[Any], err: grpc.RpcError, attempt: int) -> float:
        """Seconds to wait before attempt ``attempt + 1``; raises the typed error when the
        call must not (or may no longer) be retried."""
        error: GatewayError = typed(err)
        overload_budget = self.overload_retries if self.retries else 0  # retries=0: none at all
        if call.retry and isinstance(error, Overloaded) and attempt < overload_budget:
            hint = error.retry_after_ms / 1000 if error.retry_after_ms else self.base_s
            jitter = random.uniform(
                0, min(hint, self.base_s) / 2
            )  # a burst does not come back as one
            return min(hint + jitter, self.overload_cap_s)
        if not call.retry or not isinstance(error, Unavailable) or attempt >= self.retries:
            raise error from None
        if self.replicas > 1 and attempt < self.replicas - 1:
            return 0.0
        # "full jitter" on the upper half: clients cut off together do not come back together
        backoff = min(self.base_s * 2**attempt, self.cap_s)
        return random.uniform(backoff / 2, backoff)


#: the gRPC service the health checks ask about (a draining gateway answers NOT_SERVING)
HEALTH_SERVICE = "memgate.v1.MemoryGateway"
#: several gateways: spread calls round robin over the healthy ones (client-side health checks)
BALANCED_SERVICE_CONFIG = json.dumps(
    {
        "loadBalancingConfig": [{"round_robin": {}}],
        "healthCheckConfig": {"serviceName": HEALTH_SERVICE},
    }
)


def channel_target(target: str | Sequence[str]) -> tuple[str, int]:
    """A gRPC target for one gateway or several, and how many were named.

    ``"127.0.0.1:50051"`` (one), ``["10.0.0.1:50051", "10.0.0.2:50051"]`` or
    ``"10.0.0.1:50051,10.0.0.2:50051"`` (IP literals, balanced), ``"ipv4:…"``/``"ipv6:…"`` as
    gRPC spells them, or ``"dns:///gateways.internal:50051"`` (every address the name resolves
    to, balanced; counted as several)."""
    parts = [target] if isinstance(target, str) else list(target)
    if not parts or any(not p.strip() for p in parts):
        raise ValueError("target: name at least one gateway, e.g. '127.0.0.1:50051'")
    if len(parts) == 1:
        one = parts[0].strip()
        if one.startswith(("ipv4:", "ipv6:")):
            return one, max(1, one.count(",") + 1)
        if one.startswith("dns:"):
            return one, 2
        if "," not in one:
            return one, 1
        parts = one.split(",")
    parts = [p.strip() for p in parts]
    if all(p.startswith("[") for p in parts):
        return "ipv6:" + ",".join(parts), len(parts)
    for p in parts:
        host, _, port = p.rpartition(":")
        try:
            ipaddress.IPv4Address(host)
        except ValueError:
            raise ValueError(
                f"target {p!r}: a list of gateways takes IP:port entries; for host names use "
                "one DNS name that resolves to every gateway ('dns:///name:port')"
            ) from None
        if not port.isdigit():
            raise ValueError(f"target {p!r}: the port must be a number")
    return "ipv4:" + ",".join(parts), len(parts)


def channel_options(replicas: int) -> list[tuple[str, Any]]:
    if replicas <= 1:
        return []
    return [("grpc.service_config", BALANCED_SERVICE_CONFIG), ("grpc.enable_retries", 1)]


class Transport:
    """One gRPC channel, the caller's identity (metadata), the deadline and the retry policy.

    Plaintext by default; TLS with ``root_certificates`` (PEM of the CA that signed the server;
    ``tls=True`` alone uses the system's roots) and mTLS with ``private_key`` +
    ``certificate_chain`` (the client's PEM). ``server_name`` overrides the name checked against
    the server certificate. With a gateway that takes the agent id from the client certificate,
    ``agent_id`` may be "". ``via="console"`` (the master only) marks its recalls in the audit
    log as the review console's."""

    def __init__(
        self,
        target: str | Sequence[str],
        agent_id: str,
        api_key: str | None = None,
        timeout: float = 30.0,
        retries: int = 3,
        *,
        tls: bool = False,
        root_certificates: bytes | None = None,
        private_key: bytes | None = None,
        certificate_chain: bytes | None = None,
        server_name: str | None = None,
        via: str = "",
    ) -> None:
        if bool(private_key) != bool(certificate_chain):
            raise ValueError("private_key and certificate_chain go together (mTLS)")
        self.agent_id = agent_id
        self._metadata: tuple[tuple[str, str], ...] = ()
        if agent_id:
            self._metadata += (("x-agent-id", agent_id),)
        if api_key:
            self._metadata += (("x-api-key", api_key),)
        if via:
            self._metadata += ((VIA_HEADER, via),)
        self._timeout = timeout
        address, replicas = channel_target(target)
        self._retry = RetryPolicy(retries, replicas=replicas)
        credentials = None
        if tls or root_certificates or certificate_chain:
            credentials = grpc.ssl_channel_credentials(
                root_certificates, private_key, certificate_chain
            )
        options: list[tuple[str, Any]] = list(channel_options(replicas))
        if server_name:
            options.append(("grpc.ssl_target_name_override", server_name))
        self._channel = self._open(address, credentials, options)
        self._stubs: dict[str, Any] = {
            GATEWAY: pb_grpc.MemoryGatewayStub(self._channel),
            HEALTH: health_pb2_grpc.HealthStub(self._channel),
        }

    def _open(
        self,
        target: str,
        credentials: grpc.ChannelCredentials | None,
        options: list[tuple[str, Any]],
    ) -> Any:
        raise NotImplementedError

    def _send(self, call: Call[Any]) -> Any:
        """Send once: the response (blocking channel) or an awaitable of it (asyncio channel)."""
        method = getattr(self._stubs[call.service], call.rpc)
        return method(call.request, metadata=self._metadata, timeout=self._timeout)


class Blocking(Transport):
    """A transport whose ``_run`` returns the parsed answer."""

    def _run(self, call: Call[T]) -> T:
        raise NotImplementedError


class Asynchronous(Transport):
    """A transport whose ``_run`` is a coroutine."""

    async def _run(self, call: Call[T]) -> T:
        raise NotImplementedError


class rpc(Generic[P, T]):
    """Turns a function that builds a ``Call`` into a client method with the same signature:
    on a ``Blocking`` client it returns the answer, on an ``Asynchronous`` one an awaitable."""

    def __init__(self, build: Callable[P, Call[T]]) -> None:
        self.build = build
        self.signature = inspect.signature(build).replace(return_annotation=inspect.Signature.empty)

    @overload
    def __get__(self, obj: None, owner: type) -> rpc[P, T]: ...
    @overload
    def __get__(self, obj: Blocking, owner: type) -> Callable[P, T]: ...
    @overload
    def __get__(self, obj: Asynchronous, owner: type) -> Callable[P, Awaitable[T]]: ...
    def __get__(self, obj: Any, owner: type) -> Any:
        if obj is None:
            return self
        build = self.build

        @functools.wraps(build)
        def method(*args: Any, **kwargs: Any) -> Any:
            return obj._run(build(*args, **kwargs))

        method.__signature__ = self.signature  # type: ignore[attr-defined]
        return method


def _ids(results: Iterable[t.WriteResult]) -> list[str]:
    return [r.id for r in results]


class Api:
    """Every RPC of ``memgate.v1.MemoryGateway`` the clients offer, as methods."""

    # ---- long-term memories
    @rpc
    def write(
        namespace: str, layer: str, content: str, *, wait: bool = False, **kw: Any
    ) -> Call[str]:
        """Write one memory; returns its id ('' when it was skipped or became a proposal)."""
        req = pb.WriteRequest(item=wire.write_item(namespace, layer, content, **kw), wait=wait)
        return Call("Write", req, lambda r: wire.write_result(r.result).id)

    @rpc
    def write_result(
        namespace: str, layer: str, content: str, *, wait: bool = False, **kw: Any
    ) -> Call[t.WriteResult]:
        """Write one memory; returns the full result (duplicate, redactions, proposal id …)."""
        req = pb.WriteRequest(item=wire.write_item(namespace, layer, content, **kw), wait=wait)
        return Call("Write", req, lambda r: wire.write_result(r.result))

    @rpc
    def batch_write(items: Iterable[Mapping[str, Any]], *, wait: bool = False) -> Call[list[str]]:
        """All or nothing: one bad item rejects the batch (INVALID_ARGUMENT names it)."""
        req = pb.BatchWriteRequest(items=[wire.write_item(**dict(i)) for i in items], wait=wait)
        return Call("BatchWrite", req, lambda r: _ids(wire.write_result(x) for x in r.results))

    @rpc
    def batch_write_results(
        items: Iterable[Mapping[str, Any]], *, wait: bool = False
    ) -> Call[list[t.WriteResult]]:
        """All or nothing, like ``batch_write``; returns each item's full result."""
        req = pb.BatchWriteRequest(items=[wire.write_item(**dict(i)) for i in items], wait=wait)
        return Call("BatchWrite", req, lambda r: [wire.write_result(x) for x in r.results])

    @rpc
    def recall(
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
        as_of: datetime | None = None,
    ) -> Call[t.Recall]:
        """Hits best first and the memory block, from the namespaces the agent may read;
        ``as_of``: as the memory stood then (each fact's version true at that time)."""
        req = pb.RecallRequest(
            query=query,
            namespaces=list(namespaces),
            top_k=wire.count(top_k, "top_k"),
            layers=[wire.layer_number(x, "layers") for x in layers or ()],  # type: ignore[misc]
            token_budget=token_budget,
            session_id=session_id,
            start=wire.ts(start),
            end=wire.ts(end),
            types=list(types),
            as_of=wire.ts(as_of),
        )
        return Call("Recall", req, wire.recall)

    @rpc
    def get(memory_id: str) -> Call[t.Memory]:
        return Call("Get", pb.GetRequest(id=memory_id), lambda r: wire.memory(r.memory))

    @rpc
    def history(memory_id: str, as_of: datetime | None = None) -> Call[list[t.Memory]]:
        """Every version of a memory, oldest first, each with its validity; ``as_of``: only
        the version true then (an empty list if none was)."""
        req = pb.HistoryRequest(id=memory_id, as_of=wire.ts(as_of))
        return Call("History", req, lambda r: [wire.memory(m) for m in r.versions])

    @rpc
    def forget(memory_id: str, reason: str = "") -> Call[t.Memory]:
        req = pb.ForgetRequest(id=memory_id, reason=reason)
        return Call("Forget", req, lambda r: wire.memory(r.memory))

    # ---- working memory
    @rpc
    def append_turn(
        namespace: str,
        session_id: str,
        *,
        role: str,
        content: str,
        zone: str = "dialogue",
        metadata: Mapping[str, str] | None = None,
        idempotency_key: str | None = None,
        at: datetime | None = None,
    ) -> Call[t.AppendTurnResult]:
        """``at``: when the turn was said (default: when the gateway receives it); set it when
        replaying a past conversation, so formation resolves "yesterday" against that turn."""
        req = pb.AppendTurnRequest(
            namespace=namespace,
            session_id=session_id,
            role=role,
            content=content,
            zone=zone,
            metadata=dict(metadata or {}),
            idempotency_key=idempotency_key or wire.new_key(),
            at=wire.ts(at),
        )
        return Call("AppendTurn", req, wire.append_turn)

    @rpc
    def append_turns(turns: Iterable[Mapping[str, Any]]) -> Call[list[t.AppendTurnResult]]:
        """Several turns in one call (a replay, a buffer): each a dict of ``append_turn``'s
        arguments (``namespace``, ``session_id``, ``role``, ``content``, optional ``zone``,
        ``metadata``, ``idempotency_key``, ``at``); all or nothing, at most 500, results in
        order. Every turn carries an idempotency key, so a retried call stores each turn once."""
        req = pb.AppendTurnsRequest(
            turns=[
                pb.AppendTurnRequest(
                    namespace=x["namespace"],
                    session_id=x["session_id"],
                    role=x.get("role", "user"),
                    content=x["content"],
                    zone=x.get("zone", "dialogue"),
                    metadata=dict(x.get("metadata") or {}),
                    idempotency_key=x.get("idempotency_key") or wire.new_key(),
                    at=wire.ts(x.get("at")),
                )
                for x in turns
            ]
        )
        return Call("AppendTurns", req, lambda r: [wire.append_turn(x) for x in r.results])

    @rpc
    def window(namespace: str, session_id: str, zones: Sequence[str] = ()) -> Call[t.Window]:
        """The session's turns; ``.degraded`` says working memory could not be read."""
        req = pb.GetWindowRequest(namespace=namespace, session_id=session_id, zones=list(zones))
        return Call("GetWindow", req, wire.window)

    @rpc
    def session_state(namespace: str, session_id: str) -> Call[dict[str, str]]:
        req = pb.GetSessionStateRequest(namespace=namespace, session_id=session_id)
        return Call("GetSessionState", req, lambda r: dict(r.values))

    @rpc
    def update_session_state(
        namespace: str,
        session_id: str,
        set: Mapping[str, str] | None = None,
        remove: Sequence[str] = (),
    ) -> Call[dict[str, str]]:
        req = pb.UpdateSessionStateRequest(
            namespace=namespace, session_id=session_id, set=dict(set or {}), remove=list(remove)
        )
        return Call("UpdateSessionState", req, lambda r: dict(r.values))

    @rpc
    def compact(namespace: str, session_id: str) -> Call[t.CompactResult]:
        req = pb.CompactWindowRequest(namespace=namespace, session_id=session_id)
        return Call("CompactWindow", req, lambda r: t.CompactResult(r.summarised, r.summary))

    @rpc
    def end_session(
        namespace: str, session_id: str, *, wait: bool = False
    ) -> Call[t.EndSessionResult]:
        """Mine the session's new turns for facts (memory formation, on the gateway's background
        lane). ``wait``: return once that ran, with what it formed. Safe to repeat."""
        req = pb.EndSessionRequest(namespace=namespace, session_id=session_id, wait=wait)
        return Call("EndSession", req, wire.end_session)

    @rpc
    def clear_scratch(namespace: str, session_id: str) -> Call[None]:
        req = pb.ClearScratchRequest(namespace=namespace, session_id=session_id)
        return Call("ClearScratch", req, lambda r: None)

    # ---- episodic
    @rpc
    def record_event(
        namespace: str,
        content: str,
        *,
        user_id: str = "",
        links: Sequence[tuple[str, str, str]] = (),
        wait: bool = False,
        **kw: Any,
    ) -> Call[str]:
        """Record an event; ``links`` are (RELATION, node kind, node id)."""
        req = pb.RecordEventRequest(
            event=wire.write_item(namespace, "episodic", content, **kw),
            user_id=user_id,
            wait=wait,
            links=[pb.Link(type=t, target=pb.NodeRef(kind=k, id=i)) for t, k, i in links],
        )
        return Call("RecordEvent", req, lambda r: r.result.id)

    @rpc
    def relate(
        src: tuple[str, str],
        type: str,
        dst: tuple[str, str],
        at: datetime | None = None,
        properties: Mapping[str, str] | None = None,
    ) -> Call[None]:
        req = pb.RelateRequest(
            src=pb.NodeRef(kind=src[0], id=src[1]),
            type=type,
            dst=pb.NodeRef(kind=dst[0], id=dst[1]),
            at=wire.ts(at),
            properties=dict(properties or {}),
        )
        return Call("Relate", req, lambda r: None)

    @rpc
    def timeline(
        namespace: str,
        start: datetime | None = None,
        end: datetime | None = None,
        limit: int = 100,
        types: Sequence[str] = (),
    ) -> Call[list[t.Event]]:
        """The namespace's events in time order, optionally within [start, end)."""
        req = pb.TimelineRequest(
            namespace=namespace,
            start=wire.ts(start),
            end=wire.ts(end),
            limit=limit,
            types=list(types),
        )
        return Call("Timeline", req, lambda r: [wire.event(e) for e in r.events])

    @rpc
    def neighbourhood(
        kind: str, node_id: str, depth: int = 1, limit: int = 50
    ) -> Call[list[t.Neighbour]]:
        req = pb.NeighbourhoodRequest(
            node=pb.NodeRef(kind=kind, id=node_id), depth=depth, limit=limit
        )
        return Call("Neighbourhood", req, lambda r: [wire.neighbour(n) for n in r.neighbours])

    # ---- operations
    @rpc
    def stats() -> Call[t.Stats]:
        return Call("Stats", pb.StatsRequest(), wire.stats)

    @rpc
    def audit(
        agent_id: str = "", namespace: str = "", limit: int = 100
    ) -> Call[list[t.AuditEntry]]:
        req = pb.QueryAuditRequest(agent_id=agent_id, namespace=namespace, limit=limit)
        return Call("QueryAudit", req, lambda r: [wire.audit_entry(e) for e in r.entries])

    @rpc
    def health() -> Call[str]:
        """SERVING / NOT_SERVING, from the standard gRPC health service (not retried)."""
        return Call(
            "Check",
            health_pb2.HealthCheckRequest(service=""),
            lambda r: health_pb2.HealthCheckResponse.ServingStatus.Name(r.status),
            retry=False,
            service=HEALTH,
        )

    @rpc
    def breakers() -> Call[list[t.BreakerState]]:
        """Circuit-breaker state of each store: closed / open / half_open."""
        return Call(
            "BreakerStates",
            pb.BreakerStatesRequest(),
            lambda r: [t.BreakerState(b.layer, b.state, b.trips, b.last_error) for b in r.breakers],
        )

    # ---- semantic facts: two-confirmation promotion
    @rpc
    def propose_fact(
        namespace: str,
        fact: str,
        *,
        session_id: str,
        evidence: Sequence[str] = (),
        confidence: float = 0.5,
        explicit: bool = False,
    ) -> Call[t.FactResult]:
        """A fact becomes a semantic memory once seen in two sessions, or at once if explicit."""
        req = pb.ProposeFactRequest(
            namespace=namespace,
            fact=fact,
            session_id=session_id,
            evidence=list(evidence),
            confidence=confidence,
            explicit=explicit,
        )
        return Call("ProposeFact", req, wire.fact)

    @rpc
    def confirm_fact(pending_id: str) -> Call[t.FactResult]:
        return Call("ConfirmFact", pb.ConfirmFactRequest(pending_id=pending_id), wire.fact)

    @rpc
    def pending_facts(namespace: str, limit: int = 100) -> Call[list[t.PendingFact]]:
        """Master only: the namespace's facts waiting for a second session, oldest first, with
        the ids ``confirm_fact`` takes (at most 500)."""
        req = pb.ListPendingFactsRequest(namespace=namespace, limit=limit)
        return Call("ListPendingFacts", req, lambda r: [wire.pending_fact(f) for f in r.facts])

    # ---- procedural skills
    @rpc
    def register_skill(
        name: str,
        description: str,
        *,
        trigger: str = "",
        parameter_schema: str = "",
        entry_point: str = "",
        namespace: str = "global",
    ) -> Call[t.RegisterResult]:
        skill = pb.Skill(
            name=name,
            description=description,
            trigger=trigger,
            parameter_schema=parameter_schema,
            entry_point=entry_point,
            namespace=namespace,
        )
        return Call(
            "RegisterSkill",
            pb.RegisterSkillRequest(skill=skill),
            lambda r: t.RegisterResult(wire.skill(r.skill), r.duplicate),
        )

    @rpc
    def match_skill(
        intent: str, namespaces: Sequence[str] = ("global",), top_k: int = 3
    ) -> Call[list[t.SkillMatch]]:
        req = pb.MatchSkillRequest(
            intent=intent, namespaces=list(namespaces), top_k=wire.count(top_k, "top_k")
        )
        return Call(
            "MatchSkill",
            req,
            lambda r: [t.SkillMatch(wire.skill(m.skill), m.score) for m in r.matches],
        )

    # ---- sub-agent results and arbitration
    @rpc
    def submit_result(
        task_id: str,
        *,
        status: str,
        summary: str,
        artifacts: Sequence[str] = (),
        decisions: Sequence[str] = (),
        memory_updates: Iterable[Mapping[str, Any]] = (),
        session_id: str = "",
        idempotency_key: str | None = None,
    ) -> Call[t.SubmitResult]:
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
        return Call("SubmitResult", req, wire.submit_result)

    @rpc
    def proposals(state: str = "pending", limit: int = 100) -> Call[list[t.Proposal]]:
        req = pb.ListProposalsRequest(state=state, limit=limit)
        return Call("ListProposals", req, lambda r: [wire.proposal(p) for p in r.proposals])

    @rpc
    def approve(proposal_id: str, reason: str = "") -> Call[t.Proposal]:
        req = pb.DecideProposalRequest(id=proposal_id, reason=reason)
        return Call("ApproveProposal", req, wire.proposal)

    @rpc
    def reject(proposal_id: str, reason: str = "") -> Call[t.Proposal]:
        req = pb.DecideProposalRequest(id=proposal_id, reason=reason)
        return Call("RejectProposal", req, wire.proposal)

    @rpc
    def set_shared_write_policy(
        auto_approve: Sequence[str], min_confidence: float = 0.0
    ) -> Call[t.SharedWritePolicy]:
        req = pb.SharedWritePolicy(auto_approve=list(auto_approve), min_confidence=min_confidence)
        return Call(
            "SetSharedWritePolicy",
            req,
            lambda r: t.SharedWritePolicy(list(r.auto_approve), r.min_confidence),
        )

    # ---- batch tasks
    @rpc
    def start_task(task_id: str, steps: Sequence[str]) -> Call[t.Task]:
        return Call("StartTask", pb.StartTaskRequest(id=task_id, steps=list(steps)), wire.task)

    @rpc
    def update_step(
        task_id: str, index: int, state: str, *, output: str = "", error: str = ""
    ) -> Call[t.Task]:
        req = pb.UpdateStepRequest(
            task_id=task_id, index=index, state=state, output=output, error=error
        )
        return Call("UpdateStep", req, wire.task)

    @rpc
    def get_task(task_id: str) -> Call[t.Task]:
        return Call("GetTask", pb.GetTaskRequest(id=task_id), wire.task)

    @rpc
    def review_queue(limit: int = 100) -> Call[list[t.Memory]]:
        req = pb.ListReviewRequest(limit=limit)
        return Call("ListReview", req, lambda r: [wire.memory(m) for m in r.memories])

    @rpc
    def namespaces(prefix: str = "", limit: int = 0) -> Call[t.NamespaceList]:
        """The namespaces holding an active memory that this agent may read (the master: all),
        sorted; ``prefix`` narrows them ("user/"), ``limit`` 0 = 1,000 (at most 10,000)."""
        req = pb.ListNamespacesRequest(prefix=prefix, limit=limit)
        return Call(
            "ListNamespaces", req, lambda r: t.NamespaceList(list(r.namespaces), r.truncated)
        )

    @rpc
    def resolve_review(memory_id: str, approve: bool, reason: str = "") -> Call[t.Memory]:
        """Master only: approve (a quarantined memory is released) or reject (it is forgotten)
        a memory of the review queue; it leaves the queue."""
        req = pb.ResolveReviewRequest(id=memory_id, approve=approve, reason=reason)
        return Call("ResolveReview", req, lambda r: wire.memory(r))

    @rpc
    def import_memories(
        items: Sequence[t.ExportedMemory], *, wait: bool = True
    ) -> Call[t.ImportResult]:
        """Journal exported memories as they were (at most 100 per call); idempotent, so a
        retried or repeated import stores everything once."""
        req = pb.ImportRequest(memories=[wire.exported_to_pb(i) for i in items], wait=wait)
        return Call("Import", req, wire.import_result)

    @rpc
    def forget_namespace(
        namespace: str, reason: str = "", wait: bool = True
    ) -> Call[t.EraseResult]:
        """Master only: erases everything ``namespace`` holds (see docs/SECURITY.md)."""
        req = pb.ForgetNamespaceRequest(namespace=namespace, reason=reason, wait=wait)
        return Call("ForgetNamespace", req, wire.erased)

    @rpc
    def forget_subject(user_id: str, reason: str = "", wait: bool = True) -> Call[t.EraseResult]:
        """Master only: erases user ``user_id`` — ``user/<id>``, every event naming the user in
        any namespace, and the user's graph node (see docs/SECURITY.md)."""
        req = pb.ForgetSubjectRequest(user_id=user_id, reason=reason, wait=wait)
        return Call("ForgetSubject", req, wire.erased)

    @rpc
    def maintain(
        namespaces: Sequence[str] = (),
        *,
        threshold: float = 0.0,
        compact_min: int = 0,
        dry_run: bool = False,
    ) -> Call[t.MaintainResult]:
        """Run the decay sweep now (master only): archive what decayed, compact old episodes."""
        req = pb.MaintainRequest(
            namespaces=list(namespaces),
            threshold=threshold,
            compact_min=compact_min,
            dry_run=dry_run,
        )
        return Call("Maintain", req, wire.maintain)


def export_request(namespaces: Sequence[str], include_vectors: bool) -> pb.ExportRequest:
    """``Export`` streams every memory of the namespaces, every version, with its event's graph
    edges (master only); each client iterates the stream its own way."""
    return pb.ExportRequest(namespaces=list(namespaces), include_vectors=include_vectors)
