"""The domain core, assembled: one object per use case, each given only the ports it needs.
The transport calls these objects; nothing here takes or reaches into the whole service."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from gateway.core.access.namespaces import SharedWritePolicies
from gateway.core.access.ownership import TaskOwners
from gateway.core.apply.apply import Applier, ApplySettings
from gateway.core.apply.reembed import Reembedder
from gateway.core.apply.slot_backfill import SlotBackfill
from gateway.core.formation.formation import FORMATION_AGENT, FormationPolicy
from gateway.core.formation.formation_jobs import FormationJobs, FormationSettings
from gateway.core.formation.observations import ObservationLog
from gateway.core.formation.overflow import OverflowSummaries
from gateway.core.formation.transcript import Transcript
from gateway.core.journal.lanes import Lane, Lanes
from gateway.core.journal.write_path import WritePath
from gateway.core.model.command_types import FORMATION, LONG_TERM, WORKING, kinds_of
from gateway.core.model.control import JournalEntry
from gateway.core.model.events import AppliedEvents
from gateway.core.ports.injection_screen import RULES_ONLY, InjectionScreen
from gateway.core.ports.metrics import Metrics
from gateway.core.ports.ports import (
    Embedder,
    Extractor,
    Journal,
    Ledger,
    Observer,
    Stores,
    Summariser,
)
from gateway.core.ports.tracing import NULL_TRACER, Tracer
from gateway.core.recall.audit_log import AuditLog
from gateway.core.recall.recall import Recaller
from gateway.core.usecases.episodes import Episodes, GraphEnds
from gateway.core.usecases.erasure import Erasure
from gateway.core.usecases.facts import Facts
from gateway.core.usecases.language_share import LanguageSampler
from gateway.core.usecases.lifecycle import DecaySweeper
from gateway.core.usecases.memories import Memories
from gateway.core.usecases.operations import Operations, SweepDefaults
from gateway.core.usecases.runtime import Runtime
from gateway.core.usecases.service_settings import ServiceSettings
from gateway.core.usecases.skills import Skills
from gateway.core.usecases.tasks import Tasks
from gateway.core.usecases.transfer import Transfers
from gateway.core.writing.proposals import Proposals
from gateway.core.writing.results import Results
from gateway.core.writing.working import TurnResults, WorkingMemory
from gateway.core.writing.writes import Writer


class Helper(Protocol):
    """Something the service starts after its own runtime and stops before it (e.g. recall
    worker processes)."""

    async def start(self) -> None: ...

    async def close(self) -> None: ...


class MemoryService:
    def __init__(
        self,
        *,
        settings: ServiceSettings,
        stores: Stores,
        embedder: Embedder,
        journal: Journal,
        ledger: Ledger,
        extractor: Extractor,
        rules: Extractor,
        summariser: Summariser,
        observer: Observer | None = None,
        metrics: Metrics | None = None,
        tracer: Tracer = NULL_TRACER,
        events: AppliedEvents | None = None,
        later_summariser: Summariser | None = None,
        overflow_summariser: Summariser | None = None,
        injection_screen: InjectionScreen = RULES_ONLY,
    ) -> None:
        """``extractor`` mines sessions for facts, ``rules`` is its fallback (the same object
        when no model is configured); ``summariser`` is CompactWindow's; an overflowing
        dialogue is summarised by ``overflow_summariser`` (default: ``summariser``) while the
        turn is applied, and ``later_summariser`` (a model, when configured) replaces that
        summary from the formation lane; ``events`` (made here when not given) announces
        applied writes; ``injection_screen`` judges what the injection rules let through
        (the embedder's similarity to known attacks; default: the rules alone)."""
        s, master = settings, settings.master_agent
        self.settings = settings
        self.stores = stores
        self.journal = journal
        self.ledger = ledger
        self.embedder = embedder
        self.metrics = metrics or Metrics()
        self.tracer = tracer
        events = events or AppliedEvents()
        self.events = events
        turn_results = TurnResults()
        # audit rows of reads (Recall, Get) are queued; an erasure writes them before it scrubs
        audit = AuditLog(ledger)
        applier = Applier(
            stores,
            embedder,
            ledger,
            events,
            ApplySettings(
                s.dedup_threshold,
                s.zone_hard_cap,
                s.dialogue_max_turns,
                s.summary_token_budget,
                context_turns=s.context_turns,
                context_date=s.context_date,
                context_dense=s.context_dense,
                context_next=s.context_next,
                fact_slots=s.fact_slots,
            ),
            turn_results,
            overflow_summariser or summariser,
            journal,
            audit.flush,
            injection_screen,
        )
        self.lanes = Lanes(
            [
                Lane("apply-working", kinds_of(WORKING), journal, applier.apply, s.apply_batch),
                Lane("apply-long-term", kinds_of(LONG_TERM), journal, applier.apply, s.apply_batch),
                Lane("formation", kinds_of(FORMATION), journal, self._form, 8),
            ],
            journal,
        )
        write_path = WritePath(journal, ledger, self.lanes, s.max_pending_writes, s.wait_timeout_s)
        policies = SharedWritePolicies(ledger)
        self.memories = Memories(stores.records, ledger, write_path, master, audit)
        owners = TaskOwners(ledger, master)
        self.writer = Writer(
            write_path,
            ledger,
            policies,
            s.limits,
            master,
            s.shared_turn_policy,
            GraphEnds(self.memories, owners, master),
            injection_screen=injection_screen,
        )
        self.recaller = Recaller(s.recall(), stores, embedder, audit, self.metrics, tracer)
        self.erasure = Erasure(write_path, master)
        self.working = WorkingMemory(
            stores.working,
            write_path,
            turn_results,
            s.limits,
            master,
            ledger,
            policies,
            s.shared_turn_policy,
            summariser,
            s.summary_token_budget,
            injection_screen=injection_screen,
        )
        self.overflow: OverflowSummaries | None = None
        if later_summariser is not None:
            self.overflow = OverflowSummaries(
                stores.working, write_path, later_summariser, s.summary_token_budget
            )
            applier.later = self.overflow.schedule
        self.formation = FormationJobs(
            ledger,
            write_path,
            self.working,
            FormationPolicy(ledger, stores.records, write_path, s.limits),
            extractor,
            rules,
            FormationSettings(s.formation_idle_s, s.formation_every_turns, s.formation_max_turns),
            observer,
            ObservationLog(write_path, s.limits, FORMATION_AGENT),
            Transcript(write_path, s.limits, FORMATION_AGENT) if s.keep_turns else None,
        )
        self.episodes = Episodes(
            stores.graph,
            stores.records,
            self.memories,
            write_path,
            master,
            owners,
            s.limits,
            injection_screen=injection_screen,
        )
        self.proposals = Proposals(ledger, write_path, policies, master, stores.records)
        self.facts = Facts(ledger, self.writer, s.limits.max_content_chars, master)
        self.skills = Skills(stores.records, self.writer, self.memories, self.recaller)
        self.tasks = Tasks(
            ledger, self.episodes, owners, s.limits, injection_screen=injection_screen
        )
        self.results = Results(self.writer, ledger, s.limits)
        self.sweeper = DecaySweeper(stores.records, self.writer, write_path, s.limits, master)
        self.ops = Operations(
            stores=stores,
            journal=journal,
            ledger=ledger,
            lanes=self.lanes,
            embedder=embedder,
            metrics=self.metrics,
            cache=self.recaller.cache,
            sweeper=self.sweeper,
            sweep_defaults=SweepDefaults(s.decay_threshold, s.compact_min_episodes),
            shards=s.shards,
            master=master,
            write_path=write_path,
            audit=audit,
            languages=LanguageSampler(stores.records, embedder.name, s.recall().multilingual),
        )
        self.transfers = Transfers(
            stores.records,
            stores.graph,
            ledger,
            write_path,
            embedder.name,
            s.limits.max_content_chars,
            master,
        )
        self.runtime = Runtime(
            stores=stores,
            journal=journal,
            ledger=ledger,
            embedder=embedder,
            lanes=self.lanes,
            flush_interval_s=s.flush_interval_s,
            journal_retention_s=s.journal_retention_days * 86_400,
            decay_interval_s=s.decay_interval_s,
            sweep=self.ops.scheduled_sweep,
            formation_scan_s=s.formation_scan_s,
            schedule_formation=self.formation.schedule_due,
            strict_durability=s.strict_durability,
            before_close=self.recaller.close,
            audit_retention_s=s.audit_retention_days * 86_400,
            slot_backfill=(
                SlotBackfill(stores=stores, ledger=ledger)
                if s.fact_slots and s.slot_backfill
                else None
            ),
            reembed=Reembedder(
                records=stores.records,
                embedder=embedder,
                ledger=ledger,
                context_dense=s.context_dense,
            ),
        )
        self.helpers: list[Helper] = []
        events.subscribe(self.recaller.on_applied)
        events.subscribe(self.runtime.on_applied)

    async def _form(self, entries: Sequence[JournalEntry], _upcoming: object = None) -> None:
        await self.formation.apply(entries)
        if self.overflow is not None:
            await self.overflow.apply(entries)

    async def start(self) -> None:
        await self.runtime.start()
        for helper in self.helpers:
            await helper.start()

    async def close(self) -> None:
        for helper in reversed(self.helpers):
            await helper.close()
        await self.runtime.close()
