"""Sub-agent results (seed 004 §4.1): a result is recorded as an episodic event of its task, and
each memory update it carries goes through the same arbitration as any write."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from gateway.core.access import namespaces as nsp
from gateway.core.model.control import Proposal
from gateway.core.model.errors import InvalidArgument
from gateway.core.model.limits import Limits
from gateway.core.model.models import Layer
from gateway.core.ports.control_ports import ProposalLedger
from gateway.core.writing.inputs import WriteInput
from gateway.core.writing.writes import WriteOutcome, Writer

RESULT_STATUSES = ("done", "failed", "partial")


@dataclass(slots=True)
class ResultOutcome:
    event_id: str
    committed: list[WriteOutcome] = field(default_factory=list)
    proposals: list[Proposal] = field(default_factory=list)


def _check_list(values: list[str], name: str, most: int, longest: int) -> None:
    if len(values) > most or any(len(v) > longest for v in values):
        raise InvalidArgument(
            f"{name}: at most {most} items of at most {longest} chars", field=name
        )


class Results:
    def __init__(self, writer: Writer, ledger: ProposalLedger, limits: Limits) -> None:
        self._writer = writer
        self._ledger = ledger
        self._limits = limits

    async def submit(
        self,
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
        nsp.check_agent_id(agent)
        if not task_id:
            raise InvalidArgument("task_id is required", field="task_id")
        nsp.parse(f"task/{task_id}", "task_id")
        if status not in RESULT_STATUSES:
            raise InvalidArgument(
                f"status {status!r} is unknown: use one of {', '.join(RESULT_STATUSES)}",
                field="status",
            )
        if not summary.strip():
            raise InvalidArgument("summary is empty", field="summary")
        _check_list(artifacts, "artifacts", self._limits.max_artifacts, 256)
        _check_list(decisions, "decisions", self._limits.max_decisions, 1000)
        artifacts_json = json.dumps(artifacts, ensure_ascii=False)
        if len(artifacts_json) > self._limits.max_metadata_value_chars:
            raise InvalidArgument(
                f"artifacts take {len(artifacts_json)} chars as JSON, the limit is "
                f"{self._limits.max_metadata_value_chars}: send fewer or shorter names",
                field="artifacts",
            )
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
            metadata={"status": status, "artifacts": artifacts_json},
            evidence=list(decisions),
            idempotency_key=f"{idempotency_key}:event" if idempotency_key else "",
        )
        # the event and the updates are validated together (all or nothing)
        outcomes = await self._writer.write(agent, [event, *updates], wait=True)
        result = ResultOutcome(event_id=outcomes[0].id)
        for o in outcomes[1:]:
            if o.proposal_id:
                proposal = await self._ledger.get_proposal(o.proposal_id)
                if proposal is not None:
                    result.proposals.append(proposal)
            else:
                result.committed.append(o)
        return result
