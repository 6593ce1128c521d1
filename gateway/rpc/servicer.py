"""gRPC servicer: each method reads the request, calls one core method, converts the result."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import TypeAlias

import grpc

from gateway.core.usecases.service import MemoryService
from gateway.core.writing.inputs import WriteInput
from gateway.rpc import conversions as cv
from gateway.rpc.auth import audited_as, caller
from memgate.v1 import memgate_pb2 as pb
from memgate.v1 import memgate_pb2_grpc as pb_grpc

Ctx: TypeAlias = grpc.aio.ServicerContext  # type: ignore[type-arg]


def _links(req: pb.RecordEventRequest) -> list[tuple[str, str, str]]:
    return [(link.type, link.target.kind, link.target.id) for link in req.links]


class GatewayServicer(pb_grpc.MemoryGatewayServicer):
    def __init__(self, service: MemoryService) -> None:
        self._svc = service
        self._master = service.settings.master_agent

    # ---- long-term memories
    async def Write(self, req: pb.WriteRequest, ctx: Ctx) -> pb.WriteResponse:
        item = cv.write_item_from_pb(req.item)
        out = await self._svc.writer.write(caller(ctx), [item], req.wait)
        return pb.WriteResponse(result=cv.write_result_to_pb(out[0]))

    async def BatchWrite(self, req: pb.BatchWriteRequest, ctx: Ctx) -> pb.BatchWriteResponse:
        items = [cv.write_item_from_pb(i, f"items[{n}].") for n, i in enumerate(req.items)]
        out = await self._svc.writer.write(caller(ctx), items, req.wait)
        return pb.BatchWriteResponse(results=[cv.write_result_to_pb(o) for o in out])

    async def Recall(self, req: pb.RecallRequest, ctx: Ctx) -> pb.RecallResponse:
        agent = caller(ctx)
        action = audited_as(ctx, agent, self._master, "recall")
        query = cv.recall_query_from_pb(req)
        return cv.recall_result_to_pb(await self._svc.recaller.recall_as(agent, query, action))

    async def Get(self, req: pb.GetRequest, ctx: Ctx) -> pb.GetResponse:
        agent = caller(ctx)
        action = audited_as(ctx, agent, self._master, "read")
        mem = await self._svc.memories.get(agent, req.id, action)
        return pb.GetResponse(memory=cv.memory_to_pb(mem))

    async def History(self, req: pb.HistoryRequest, ctx: Ctx) -> pb.HistoryResponse:
        versions = await self._svc.memories.history(caller(ctx), req.id, cv.from_ts(req, "as_of"))
        return pb.HistoryResponse(versions=[cv.memory_to_pb(v) for v in versions])

    async def Forget(self, req: pb.ForgetRequest, ctx: Ctx) -> pb.ForgetResponse:
        mem = await self._svc.memories.forget(caller(ctx), req.id, req.reason)
        return pb.ForgetResponse(memory=cv.memory_to_pb(mem))

    async def ForgetNamespace(self, req: pb.ForgetNamespaceRequest, ctx: Ctx) -> pb.EraseResponse:
        out = await self._svc.erasure.forget_namespace(
            caller(ctx), req.namespace, req.reason, req.wait
        )
        return cv.erased_to_pb(out)

    async def ForgetSubject(self, req: pb.ForgetSubjectRequest, ctx: Ctx) -> pb.EraseResponse:
        out = await self._svc.erasure.forget_subject(caller(ctx), req.user_id, req.reason, req.wait)
        return cv.erased_to_pb(out)

    # ---- working memory
    async def AppendTurn(self, req: pb.AppendTurnRequest, ctx: Ctx) -> pb.AppendTurnResponse:
        [o] = await self._svc.working.append_turns(caller(ctx), [cv.turn_input(req)])
        return cv.turn_outcome_to_pb(o)

    async def AppendTurns(self, req: pb.AppendTurnsRequest, ctx: Ctx) -> pb.AppendTurnsResponse:
        turns = [cv.turn_input(t, f"turns[{i}]." if len(req.turns) > 1 else "")
                 for i, t in enumerate(req.turns)]  # fmt: skip
        done = await self._svc.working.append_turns(caller(ctx), turns)
        return pb.AppendTurnsResponse(results=[cv.turn_outcome_to_pb(o) for o in done])

    async def GetWindow(self, req: pb.GetWindowRequest, ctx: Ctx) -> pb.GetWindowResponse:
        turns, degraded = await self._svc.working.window(
            caller(ctx), req.namespace, req.session_id, list(req.zones)
        )
        return pb.GetWindowResponse(turns=[cv.turn_to_pb(t) for t in turns], degraded=degraded)

    async def GetSessionState(self, req: pb.GetSessionStateRequest, ctx: Ctx) -> pb.SessionState:
        values, ttl = await self._svc.working.session_state(
            caller(ctx), req.namespace, req.session_id
        )
        return pb.SessionState(values=values, ttl_seconds=ttl)

    async def UpdateSessionState(
        self, req: pb.UpdateSessionStateRequest, ctx: Ctx
    ) -> pb.SessionState:
        values, ttl = await self._svc.working.update_session_state(
            caller(ctx), req.namespace, req.session_id, dict(req.set), list(req.remove)
        )
        return pb.SessionState(values=values, ttl_seconds=ttl)

    async def CompactWindow(
        self, req: pb.CompactWindowRequest, ctx: Ctx
    ) -> pb.CompactWindowResponse:
        n, summary = await self._svc.working.compact_window(
            caller(ctx), req.namespace, req.session_id
        )
        return pb.CompactWindowResponse(summarised=n, summary=summary)

    async def ClearScratch(self, req: pb.ClearScratchRequest, ctx: Ctx) -> pb.ClearScratchResponse:
        await self._svc.working.clear_scratch(caller(ctx), req.namespace, req.session_id)
        return pb.ClearScratchResponse()

    async def EndSession(self, req: pb.EndSessionRequest, ctx: Ctx) -> pb.EndSessionResponse:
        o = await self._svc.formation.end_session(
            caller(ctx), req.namespace, req.session_id, req.wait
        )
        return cv.end_session_to_pb(o)

    # ---- episodic
    async def RecordEvent(self, req: pb.RecordEventRequest, ctx: Ctx) -> pb.WriteResponse:
        item: WriteInput = cv.write_item_from_pb(req.event)
        item.user_id = req.user_id
        item.links = _links(req)
        out = await self._svc.writer.record_event(caller(ctx), item, req.wait)
        return pb.WriteResponse(result=cv.write_result_to_pb(out))

    async def Relate(self, req: pb.RelateRequest, ctx: Ctx) -> pb.RelateResponse:
        await self._svc.episodes.relate(
            caller(ctx),
            (req.src.kind, req.src.id),
            req.type,
            (req.dst.kind, req.dst.id),
            cv.from_ts(req, "at"),
            dict(req.properties),
        )
        return pb.RelateResponse()

    async def Timeline(self, req: pb.TimelineRequest, ctx: Ctx) -> pb.TimelineResponse:
        events = await self._svc.episodes.timeline(
            caller(ctx),
            req.namespace,
            cv.from_ts(req, "start"),
            cv.from_ts(req, "end"),
            req.limit or 100,
            list(req.types),
        )
        return pb.TimelineResponse(events=[cv.event_to_pb(e) for e in events])

    async def Neighbourhood(
        self, req: pb.NeighbourhoodRequest, ctx: Ctx
    ) -> pb.NeighbourhoodResponse:
        found = await self._svc.episodes.neighbourhood(
            caller(ctx), (req.node.kind, req.node.id), req.depth or 1, req.limit or 50
        )
        return pb.NeighbourhoodResponse(neighbours=[cv.neighbour_to_pb(n) for n in found])

    # ---- operations
    async def Stats(self, req: pb.StatsRequest, ctx: Ctx) -> pb.StatsResponse:
        s = await self._svc.ops.stats_as(caller(ctx))
        return pb.StatsResponse(
            journal_pending=s["journal_pending"],
            journal_applied=s["journal_applied"],
            vectors=s["vectors"],
            memories=s["memories"],
            embedder=s["embedder"],
            shards=s["shards"],
            recall_cache_hits=s["recall_cache_hits"],
            recall_cache_misses=s["recall_cache_misses"],
            layers=[cv.layer_stats_to_pb(b) for b in self._svc.ops.breakers()],
            apply_lag_seconds=s["apply_lag_seconds"],
            recall=[cv.recall_stats_to_pb(r) for r in s["recall"]],
            languages=s["languages"],
            languages_sampled=s["languages_sampled"],
            embedder_advice=s["embedder_advice"],
        )

    async def QueryAudit(self, req: pb.QueryAuditRequest, ctx: Ctx) -> pb.QueryAuditResponse:
        since = cv.from_ts(req, "since")
        rows = await self._svc.ops.query_audit(
            caller(ctx),
            req.agent_id,
            req.namespace,
            since.timestamp() if since else 0.0,
            req.limit or 100,
        )
        return pb.QueryAuditResponse(entries=[cv.audit_entry_to_pb(r) for r in rows])

    async def BreakerStates(
        self, req: pb.BreakerStatesRequest, ctx: Ctx
    ) -> pb.BreakerStatesResponse:
        return pb.BreakerStatesResponse(
            breakers=[
                pb.BreakerState(
                    layer=b.layer, state=b.state, trips=b.trips, last_error=b.last_error
                )
                for b in self._svc.ops.breakers_as(caller(ctx))
            ]
        )

    # ---- facts, skills, arbitration, tasks, review
    async def ProposeFact(self, req: pb.ProposeFactRequest, ctx: Ctx) -> pb.ProposeFactResponse:
        o = await self._svc.facts.propose(
            caller(ctx),
            req.namespace,
            req.fact,
            req.session_id,
            list(req.evidence),
            req.confidence,
            req.explicit,
        )
        return cv.fact_outcome_to_pb(o)

    async def ConfirmFact(self, req: pb.ConfirmFactRequest, ctx: Ctx) -> pb.ProposeFactResponse:
        o = await self._svc.facts.confirm(caller(ctx), req.pending_id)
        return cv.fact_outcome_to_pb(o)

    async def ListPendingFacts(
        self, req: pb.ListPendingFactsRequest, ctx: Ctx
    ) -> pb.ListPendingFactsResponse:
        rows = await self._svc.facts.waiting(caller(ctx), req.namespace, req.limit)
        return pb.ListPendingFactsResponse(facts=[cv.pending_fact_to_pb(r) for r in rows])

    async def RegisterSkill(
        self, req: pb.RegisterSkillRequest, ctx: Ctx
    ) -> pb.RegisterSkillResponse:
        skill, duplicate = await self._svc.skills.register(caller(ctx), cv.skill_from_pb(req.skill))
        return pb.RegisterSkillResponse(skill=cv.skill_to_pb(skill), duplicate=duplicate)

    async def MatchSkill(self, req: pb.MatchSkillRequest, ctx: Ctx) -> pb.MatchSkillResponse:
        found = await self._svc.skills.match(
            caller(ctx), req.intent, list(req.namespaces), req.top_k
        )
        return pb.MatchSkillResponse(
            matches=[pb.SkillMatch(skill=cv.skill_to_pb(s), score=score) for s, score in found]
        )

    async def SubmitResult(self, req: pb.SubmitResultRequest, ctx: Ctx) -> pb.SubmitResultResponse:
        o = await self._svc.results.submit(
            caller(ctx),
            req.task_id,
            req.status,
            req.summary,
            list(req.artifacts),
            list(req.decisions),
            [
                cv.write_item_from_pb(u.item, f"memory_updates[{n}].item.")
                for n, u in enumerate(req.memory_updates)
            ],
            req.session_id,
            req.idempotency_key,
        )
        return pb.SubmitResultResponse(
            event_id=o.event_id,
            committed=[cv.write_result_to_pb(c) for c in o.committed],
            proposals=[cv.proposal_to_pb(p) for p in o.proposals],
        )

    async def ListProposals(
        self, req: pb.ListProposalsRequest, ctx: Ctx
    ) -> pb.ListProposalsResponse:
        rows = await self._svc.proposals.list(caller(ctx), req.state, req.limit or 100)
        pending = [p for p in rows if p.state == "pending"]
        rivals = await self._svc.proposals.competing(pending)
        return pb.ListProposalsResponse(
            proposals=[cv.proposal_to_pb(p, rivals.get(p.id)) for p in rows]
        )

    async def ApproveProposal(self, req: pb.DecideProposalRequest, ctx: Ctx) -> pb.Proposal:
        return cv.proposal_to_pb(
            await self._svc.proposals.decide(caller(ctx), req.id, True, req.reason)
        )

    async def RejectProposal(self, req: pb.DecideProposalRequest, ctx: Ctx) -> pb.Proposal:
        return cv.proposal_to_pb(
            await self._svc.proposals.decide(caller(ctx), req.id, False, req.reason)
        )

    async def SetSharedWritePolicy(
        self, req: pb.SharedWritePolicy, ctx: Ctx
    ) -> pb.SharedWritePolicy:
        p = await self._svc.proposals.set_policy(
            caller(ctx), list(req.auto_approve), req.min_confidence
        )
        return pb.SharedWritePolicy(auto_approve=p.auto_approve, min_confidence=p.min_confidence)

    async def StartTask(self, req: pb.StartTaskRequest, ctx: Ctx) -> pb.Task:
        return cv.task_to_pb(await self._svc.tasks.start(caller(ctx), req.id, list(req.steps)))

    async def UpdateStep(self, req: pb.UpdateStepRequest, ctx: Ctx) -> pb.Task:
        task = await self._svc.tasks.update_step(
            caller(ctx), req.task_id, req.index, req.state, req.output, req.error
        )
        return cv.task_to_pb(task)

    async def GetTask(self, req: pb.GetTaskRequest, ctx: Ctx) -> pb.Task:
        return cv.task_to_pb(await self._svc.tasks.get(caller(ctx), req.id))

    async def Maintain(self, req: pb.MaintainRequest, ctx: Ctx) -> pb.MaintainResponse:
        r = await self._svc.ops.maintain(
            caller(ctx), list(req.namespaces), req.threshold, req.compact_min, req.dry_run
        )
        return pb.MaintainResponse(
            namespaces=r.namespaces, examined=r.examined, archived=r.archived, summaries=r.summaries
        )

    async def ListReview(self, req: pb.ListReviewRequest, ctx: Ctx) -> pb.ListReviewResponse:
        rows = await self._svc.ops.review_queue(caller(ctx), req.limit or 100)
        out = []
        for mem, reason in rows:
            msg = cv.memory_to_pb(mem)
            msg.metadata["review_reason"] = reason
            out.append(msg)
        return pb.ListReviewResponse(memories=out)

    async def ListNamespaces(
        self, req: pb.ListNamespacesRequest, ctx: Ctx
    ) -> pb.ListNamespacesResponse:
        names, more = await self._svc.memories.namespaces(caller(ctx), req.prefix, req.limit)
        return pb.ListNamespacesResponse(namespaces=names, truncated=more)

    async def ResolveReview(self, req: pb.ResolveReviewRequest, ctx: Ctx) -> pb.Memory:
        mem = await self._svc.ops.resolve_review(caller(ctx), req.id, req.approve, req.reason)
        return cv.memory_to_pb(mem)

    # ---- export / import (master only)
    async def Export(self, req: pb.ExportRequest, ctx: Ctx) -> AsyncIterator[pb.ExportedMemory]:  # type: ignore[override]
        stream = self._svc.transfers.export(caller(ctx), list(req.namespaces), req.include_vectors)
        async for item in stream:
            yield cv.exported_to_pb(item)

    async def Import(self, req: pb.ImportRequest, ctx: Ctx) -> pb.ImportResponse:
        items = [cv.exported_from_pb(m, f"memories[{i}]") for i, m in enumerate(req.memories)]
        report = await self._svc.transfers.import_(caller(ctx), items, req.wait)
        return cv.import_report_to_pb(report)
