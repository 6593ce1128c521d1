"""When memory formation runs (seed 000 §3.4, §4.4): at EndSession, after a session has been
idle for a while, and every N turns. Each trigger journals a ``FormSession`` job — the session and
the range of its turns — so a job survives a crash and runs once; the formation lane (never the
request path) mines the turns with the extractor, falling back to the rule-based one, and hands
every candidate to the ``FormationPolicy``."""

from __future__ import annotations

import logging
import time
import uuid
from collections import Counter, OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

from gateway.core.formation import observations as obs
from gateway.core.formation.formation import FORMATION_AGENT, FormationPolicy, Outcome
from gateway.core.formation.transcript import Transcript
from gateway.core.journal.write_path import WritePath
from gateway.core.model.candidates import Candidate
from gateway.core.model.commands import FormSession
from gateway.core.model.control import AuditEntry, JournalEntry, NewEntry
from gateway.core.model.errors import InvalidArgument, MemgateError
from gateway.core.model.models import Turn
from gateway.core.ports.control_ports import AuditLedger, FormationTurnLedger
from gateway.core.ports.ports import Extractor, Observer
from gateway.core.writing.working import WorkingMemory

log = logging.getLogger("memgate.formation")


class JobsLedger(AuditLedger, FormationTurnLedger, Protocol):
    """The ledger areas this module uses."""


RESULTS_KEPT = 1024


@dataclass(frozen=True, slots=True)
class FormationSettings:
    idle_s: float = 900.0  # a session this long without a turn is mined (0: off)
    every_turns: int = 50  # ... and one with this many new turns (0: off)
    max_turns: int = 500  # turns mined per job (the rest go to the next job)


@dataclass(slots=True)
class JobResult:
    turns: int = 0
    extractor: str = ""
    outcomes: Counter[str] = field(default_factory=Counter)


@dataclass(slots=True)
class EndSessionOutcome:
    job_id: str  # the journaled job ("" when there was nothing new to mine)
    turns: int  # turns the job mines
    duplicate: bool = False
    applied: bool = False
    result: JobResult | None = None  # with ``wait``: what the job formed


class FormationJobs:
    def __init__(
        self,
        ledger: JobsLedger,
        write_path: WritePath,
        working: WorkingMemory,
        policy: FormationPolicy,
        extractor: Extractor,
        fallback: Extractor,
        settings: FormationSettings,
        observer: Observer | None = None,
        observations: obs.ObservationLog | None = None,
        transcript: Transcript | None = None,
    ) -> None:
        """``observer`` (with ``observations``, where they are written) turns each mined
        chunk into observations too: episodic events, and candidate facts for the stable ones;
        ``transcript`` keeps the chunk's turns themselves as episodic memories."""
        self._transcript = transcript
        self._observer = observer
        self._observations = observations
        self._ledger = ledger
        self._write_path = write_path
        self._working = working
        self._policy = policy
        self._extractor = extractor
        self._fallback = fallback
        self._s = settings
        self._scheduled: OrderedDict[tuple[str, str], int] = OrderedDict()
        self._results: OrderedDict[str, JobResult] = OrderedDict()

    # ---- triggers
    async def end_session(
        self, agent: str, namespace: str, session_id: str, wait: bool
    ) -> EndSessionOutcome:
        """Schedule mining of the session's new turns. Who may: whoever may write the session's
        working memory."""
        ns = self._working.session_for_write(agent, namespace, session_id)
        unformed = await self._ledger.unformed_turns(ns, session_id)
        if not unformed.turns:
            return EndSessionOutcome("", 0, applied=True)
        cmd = FormSession(ns, session_id, unformed.upto, requested_by=agent)
        key = _job_key(ns, session_id, unformed.upto)
        entry = NewEntry(uuid.uuid4().hex, agent, key, cmd)
        done = (await self._write_path.commit([entry], wait, action="end_session"))[0]
        self._note_scheduled(ns, session_id, unformed.upto)
        result = self._results.get(done.write_id) if wait else None
        turns = len(unformed.turns)
        return EndSessionOutcome(done.write_id, turns, done.duplicate, done.applied, result)

    async def schedule_due(self, now: float | None = None) -> int:
        """Journal a job for every idle session and every one with enough new turns."""
        idle_before = (now or time.time()) - self._s.idle_s if self._s.idle_s > 0 else 0.0
        due = await self._ledger.due_sessions(idle_before, self._s.every_turns, 100)
        entries = []
        for d in due:
            if self._scheduled.get((d.namespace, d.session_id), 0) >= d.upto:
                continue  # already journaled, still waiting for the lane
            why = "idle" if d.idle else "every-n"
            cmd = FormSession(d.namespace, d.session_id, d.upto, requested_by=why)
            key = _job_key(d.namespace, d.session_id, d.upto)
            entries.append(NewEntry(uuid.uuid4().hex, FORMATION_AGENT, key, cmd))
        if entries:
            await self._write_path.commit(entries, wait=False, action="schedule_formation")
            for e in entries:
                assert isinstance(e.command, FormSession)
                self._note_scheduled(e.command.namespace, e.command.session_id, e.command.upto)
        return len(entries)

    def _note_scheduled(self, namespace: str, session_id: str, upto: int) -> None:
        key = (namespace, session_id)
        self._scheduled[key] = max(upto, self._scheduled.get(key, 0))
        self._scheduled.move_to_end(key)
        while len(self._scheduled) > 4 * RESULTS_KEPT:
            self._scheduled.popitem(last=False)

    # ---- the formation lane
    async def apply(self, entries: Sequence[JournalEntry]) -> None:
        for entry in entries:
            if isinstance(entry.command, FormSession):
                self._remember(entry.write_id, await self._run(entry.command))

    async def _run(self, job: FormSession) -> JobResult:
        """Mine the job's range in chunks of ``max_turns``; each mined chunk is marked, so a
        replay (or a second trigger of the same range) mines nothing twice."""
        result = JobResult()
        found = 0
        while True:
            chunk = await self._ledger.unformed_turns(
                job.namespace, job.session_id, job.upto, self._s.max_turns
            )
            if not chunk.turns:
                break
            if self._transcript is not None:
                result.outcomes["kept"] += await self._transcript.keep(
                    job.namespace, job.session_id, chunk.turns
                )
            candidates, result.extractor = await self.extract(chunk.turns)
            if self._observer is not None and self._observations is not None:
                observed = await self._observer.observe(chunk.turns, job.namespace)
                name = self._observer.name
                result.outcomes["observed"] += await self._observations.record(
                    job.namespace, job.session_id, observed, name
                )
                # a turn the extractor already read is its to decide (one claim per turn)
                read = {t for c in candidates for t in c.turn_ids}
                candidates += [
                    c
                    for c in obs.candidates(observed, job.namespace, name)
                    if not read.intersection(c.turn_ids)
                ]
            for c in candidates:
                considered = await self._policy.consider(
                    job.namespace, job.session_id, c, job.requested_by or "end-session"
                )
                result.outcomes[considered.outcome.value] += 1
            await self._ledger.mark_formed(job.namespace, job.session_id, chunk.upto)
            result.turns += len(chunk.turns)
            found += len(candidates)
        if not result.turns:
            return result
        counts = " ".join(f"{o.value}={result.outcomes[o.value]}" for o in Outcome)
        await self._ledger.audit(
            [
                AuditEntry(
                    FORMATION_AGENT,
                    "formed",
                    job.namespace,
                    job.session_id,
                    f"{result.extractor} turns={result.turns} kept={result.outcomes['kept']} "
                    f"candidates={found} {counts} "
                    f"trigger={job.requested_by}",
                )
            ]
        )
        return result

    async def extract(self, turns: Sequence[Turn]) -> tuple[list[Candidate], str]:
        """The extractor's candidates; the fallback's when it fails (a turn is never lost)."""
        if self._extractor is not self._fallback:
            try:
                return await self._extractor.extract(turns), self._extractor.name
            except MemgateError as exc:
                name = self._extractor.name
                log.warning("%s failed (%s); using %s", name, exc.message, self._fallback.name)
            except Exception:  # noqa: BLE001 - any failure of a model falls back to the rules
                log.exception("%s failed; using %s", self._extractor.name, self._fallback.name)
        return await self._fallback.extract(turns), self._fallback.name

    def _remember(self, job_id: str, result: JobResult) -> None:
        self._results[job_id] = result
        while len(self._results) > RESULTS_KEPT:
            self._results.popitem(last=False)

    def result(self, job_id: str) -> JobResult | None:
        return self._results.get(job_id)


def _job_key(namespace: str, session_id: str, upto: int) -> str:
    key = f"form:{namespace}:{session_id}:{upto}"
    if len(key) > 128:
        raise InvalidArgument("namespace and session_id are too long together", field="session_id")
    return key
