"""Working memory (seed 000 §2.1, §3.2): a session's zoned window and state. Turns are journaled
like every write; when the dialogue overflows, its oldest half is summarised into the task zone."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from gateway.core.access import namespaces as nsp
from gateway.core.access import write_policy as wp
from gateway.core.access.session_state import (
    check_state_total,
    check_state_update,
    reserve_agent_state,
)
from gateway.core.journal.write_path import WritePath
from gateway.core.model.commands import TurnAppend
from gateway.core.model.control import AuditEntry, NewEntry
from gateway.core.model.errors import BackendUnavailable, PermissionDenied
from gateway.core.model.limits import Limits
from gateway.core.model.models import Layer, Turn, Zone, utcnow
from gateway.core.model.state_budget import StateShare
from gateway.core.ports.injection_screen import RULES_ONLY, InjectionScreen
from gateway.core.ports.ports import Ledger, Summariser, WorkingStore
from gateway.core.writing import proposals
from gateway.core.writing.inputs import (
    WriteInput,
    batch_prefix,
    check_batch,
    parse_zone,
    prepare,
)
from gateway.core.writing.second_screen import quarantine_similar, refuse_similar

log = logging.getLogger("memgate.working")

TURN_RESULTS_KEPT = 4096
STATE_LOCKS = 64
SUMMARY_PREFIX = "[history_summary]"
#: every summary ends with this (seed 004 §3.3): it was generated and may leave things out
SUMMARY_NOTE = "（本摘要由系统自动生成，可能存在信息遗漏 / auto-generated, may omit details）"


@dataclass(frozen=True, slots=True)
class TurnInput:
    """One turn as a caller sends it (``AppendTurn``, each of ``AppendTurns``)."""

    namespace: str
    session_id: str
    role: str
    content: str
    zone: str = ""
    metadata: dict[str, str] = field(default_factory=dict)
    idempotency_key: str = ""
    at: datetime | None = None


@dataclass(slots=True)
class TurnOutcome:
    id: str
    duplicate: bool
    compacted: bool
    dialogue_length: int
    redactions: list[str]
    proposal_id: str = ""
    quarantined: bool = False


class TurnResults:
    """The dialogue length and roll each recently applied turn produced, for AppendTurn."""

    def __init__(self, kept: int = TURN_RESULTS_KEPT) -> None:
        self._kept = kept
        self._items: OrderedDict[str, tuple[int, bool]] = OrderedDict()

    def record(self, turn_id: str, dialogue_length: int, compacted: bool) -> None:
        self._items[turn_id] = (dialogue_length, compacted)
        self._items.move_to_end(turn_id)
        while len(self._items) > self._kept:
            self._items.popitem(last=False)

    def get(self, turn_id: str) -> tuple[int, bool] | None:
        return self._items.get(turn_id)


#: the role of a summary turn: the gateway's own account of the dialogue, never ``system`` — a
#: summary of a sub-agent's turns in the ``system`` role would launder its words into the
#: master's instructions
SUMMARY_ROLE = "assistant"
_QUOTE_MARKS = str.maketrans({"“": "'", "”": "'", "|": "/", "\n": " "})


def said_line(turn: Turn, words: str) -> str:
    """One line of a summary: who said it (the ``speaker`` metadata, else the role) and their
    words quoted, so a "| system: …" inside someone's turn stays inside their quote."""
    who = " ".join(turn.metadata.get("speaker", "").split())[:40] or turn.role
    return f"{who} said “{' '.join(words.translate(_QUOTE_MARKS).split())}”"


def summarise(turns: Sequence[Turn], max_chars: int = 600) -> str:
    """Last-resort summary (when the configured summariser fails): who said what, first words
    of each turn."""
    parts = []
    for t in turns:
        text = " ".join(t.content.split())
        parts.append(said_line(t, f"{text[:120]}{'…' if len(text) > 120 else ''}"))
    summary = "; ".join(parts)
    room = max_chars - len(SUMMARY_NOTE) - 1
    summary = summary if len(summary) <= room else summary[: room - 1] + "…"
    return f"{summary} {SUMMARY_NOTE}"


async def summary_of(summariser: Summariser | None, turns: Sequence[Turn], budget: int) -> str:
    """The summariser's summary; if it fails, the last-resort one (the turns are already out
    of the window, so a summary must be written)."""
    if summariser is not None:
        try:
            return await summariser.summarise(turns, budget)
        except Exception:  # noqa: BLE001 - a failing model never loses the rolled-off turns
            log.warning("summariser %s failed; using the plain summary", summariser.name)
    return summarise(turns)


TASK_ZONE_MAX = 64
#: called after an overflow was summarised: (namespace, session, summary turn id, rolled-off turns)
SummariseLater = Callable[[str, str, str, list[Turn]], Awaitable[None]]


async def compact(
    working: WorkingStore,
    namespace: str,
    session_id: str,
    summariser: Summariser | None = None,
    budget: int = 200,
) -> tuple[int, str]:
    """Summarise the oldest half of the dialogue into the task zone (seed 000 §3.2)."""
    oldest, summary, _ = await _compact(working, namespace, session_id, summariser, budget)
    return len(oldest), summary


async def _compact(
    working: WorkingStore,
    namespace: str,
    session_id: str,
    summariser: Summariser | None,
    budget: int,
) -> tuple[list[Turn], str, str]:
    """(the rolled-off turns, their summary, the summary turn's id)."""
    window = await working.window(namespace, session_id, [Zone.DIALOGUE])
    n = len(window.get(Zone.DIALOGUE, [])) // 2
    if n == 0:
        return [], "", ""
    oldest = await working.take_oldest(namespace, session_id, Zone.DIALOGUE, n)
    if not oldest:
        return [], "", ""
    summary = await summary_of(summariser, oldest, budget)
    turn = Turn(
        id=f"summary:{oldest[0].id}",
        role=SUMMARY_ROLE,
        content=f"{SUMMARY_PREFIX} {summary}",
        zone=Zone.TASK,
    )
    await working.append(namespace, session_id, [turn], max_len=TASK_ZONE_MAX)
    return oldest, summary, turn.id


async def apply_turns(
    working: WorkingStore,
    turns: Sequence[tuple[str, TurnAppend]],
    zone_cap: int,
    dialogue_max: int,
    results: TurnResults,
    summariser: Summariser | None = None,
    budget: int = 200,
    later: SummariseLater | None = None,
) -> set[str]:
    """Append journaled turns (write id, command) per session; compact an overflowing dialogue
    with ``summariser`` (fast: it runs while AppendTurn waits) and, when ``later`` is set, hand the
    rolled-off turns to it (a slow summariser's job on the background lane)."""
    groups: dict[tuple[str, str], list[Turn]] = {}
    for write_id, c in turns:
        turn = Turn(write_id, c.role, c.content, c.zone, c.at or utcnow(), dict(c.metadata))
        groups.setdefault((c.namespace, c.session_id), []).append(turn)
    for (ns, session), group in groups.items():
        lengths = await working.append(ns, session, group, zone_cap)
        if Zone.DIALOGUE not in lengths:
            continue  # no dialogue turn: nothing rolls (callers read the length if asked)
        dialogue = lengths[Zone.DIALOGUE]
        compacted = dialogue > dialogue_max
        if compacted:
            oldest, _, summary_id = await _compact(working, ns, session, summariser, budget)
            dialogue -= len(oldest)
            if oldest and later is not None:
                await later(ns, session, summary_id, oldest)
        for turn in group:
            results.record(turn.id, dialogue, compacted and turn.zone is Zone.DIALOGUE)
    return {ns for ns, _ in groups}


def _steers(turn: TurnAppend) -> bool:
    """A turn that would speak as the system: a system role, or the instructions zone."""
    return turn.role == "system" or turn.zone is Zone.INSTRUCTIONS


def turn_access(
    agent: str, ns: nsp.Namespace, master: str, turn: TurnAppend, turn_policy: str
) -> wp.Outcome:
    """The write policy for a turn, whichever RPC carries it (AppendTurn, or Write, BatchWrite
    and SubmitResult with the working layer): a steering turn is its own row of the table;
    ``shared_turn_policy="deny"`` turns a turn's proposal into PERMISSION_DENIED."""
    if _steers(turn):
        return wp.require(wp.Target.STEERING_TURN, agent, ns, master, field="role")
    outcome = wp.require(wp.Target.TURN, agent, ns, master)
    if outcome is wp.Outcome.PROPOSAL and turn_policy == "deny":
        raise PermissionDenied(
            f"agent {agent!r} may not append turns to shared {ns} "
            "(shared_turn_policy=deny): ask the master",
            field="namespace",
        )
    return outcome


class WorkingMemory:
    """The working-memory use cases: append, window, state, compaction, scratch."""

    def __init__(
        self,
        store: WorkingStore,
        write_path: WritePath,
        results: TurnResults,
        limits: Limits,
        master: str,
        ledger: Ledger,
        policies: nsp.SharedWritePolicies,
        turn_policy: str = "proposal",
        summariser: Summariser | None = None,
        summary_budget: int = 200,
        *,
        injection_screen: InjectionScreen = RULES_ONLY,
    ) -> None:
        self._summariser = summariser
        self._screen = injection_screen
        self._summary_budget = summary_budget
        self._store = store
        self._write_path = write_path
        self._results = results
        self._limits = limits
        self._master = master
        self._ledger = ledger
        self._policies = policies
        self._turn_policy = turn_policy
        self._locks = [asyncio.Lock() for _ in range(STATE_LOCKS)]

    def _session(self, agent: str, namespace: str, session_id: str, write: bool) -> str:
        """The namespace, if ``agent`` may read it (``write=False``) or change it directly. Session
        state, compaction and scratch cannot be proposals: a sub-agent gets PERMISSION_DENIED in
        ``user/*`` and ``global`` (``task/*`` and its own namespace are direct)."""
        nsp.check_agent_id(agent)
        ns = nsp.parse(namespace)
        nsp.check_id(session_id, "session_id", required=True)
        if not write:
            nsp.check_read(agent, ns, self._master)
        else:
            wp.require(wp.Target.SESSION, agent, ns, self._master)
        return str(ns)

    def session_for_write(self, agent: str, namespace: str, session_id: str) -> str:
        """The checked namespace of a session ``agent`` may write (as for AppendTurn)."""
        return self._session(agent, namespace, session_id, write=True)

    async def append_turn(
        self,
        agent: str,
        namespace: str,
        session_id: str,
        role: str,
        content: str,
        zone: str,
        metadata: dict[str, str],
        idempotency_key: str,
        at: datetime | None = None,
    ) -> TurnOutcome:
        """One policy for every layer: a sub-agent's turn into ``user/*`` or ``global`` is a
        proposal (or refused, ``shared_turn_policy="deny"``) unless the master's shared-write
        policy approves the namespace; a sub-agent may never add a ``system`` turn or an
        ``instructions`` turn to a shared session. A turn that looks like a prompt injection is
        quarantined: audited, never placed in the window."""
        turn = TurnInput(namespace, session_id, role, content, zone, metadata, idempotency_key, at)
        return (await self.append_turns(agent, [turn]))[0]

    async def append_turns(self, agent: str, turns: Sequence[TurnInput]) -> list[TurnOutcome]:
        """Several turns in one call (a replay, a gateway that buffers), each under
        ``append_turn``'s rules: all validated and authorised before any is journaled (all or
        nothing), screened in one call, journaled in one commit; outcomes in order."""
        nsp.check_agent_id(agent)
        check_batch(turns, "turns", "turns", self._limits.max_batch_items)
        prefix = batch_prefix(turns, "turns")
        items, prepared, access = [], [], []
        for i, t in enumerate(turns):
            ns = nsp.parse(t.namespace, f"{prefix(i)}namespace")
            nsp.check_id(t.session_id, f"{prefix(i)}session_id", required=True)
            item = WriteInput(
                namespace=t.namespace,
                layer=Layer.WORKING.value,
                content=t.content,
                session_id=t.session_id,
                role=t.role or "user",
                zone=t.zone,
                metadata=t.metadata,
                idempotency_key=t.idempotency_key,
                event_time=t.at,
            )
            p = prepare(item, self._limits, prefix(i))
            assert isinstance(p.command, TurnAppend)
            access.append(turn_access(agent, ns, self._master, p.command, self._turn_policy))
            items.append(item)
            prepared.append(p)
        prepared = await quarantine_similar(self._screen, items, prepared)
        outcomes: list[TurnOutcome | None] = [None] * len(turns)
        entries: list[tuple[int, NewEntry]] = []
        policy = None
        for i, p in enumerate(prepared):
            if p.quarantined:
                await self._ledger.audit(
                    [AuditEntry(agent, "quarantine", p.namespace, turns[i].session_id,
                                p.injection[:200])]
                )  # fmt: skip
                outcomes[i] = TurnOutcome("", False, False, 0, p.redactions, quarantined=True)
                continue
            if access[i] is wp.Outcome.PROPOSAL:
                policy = policy or await self._policies.current()
                if not policy.approves(p.namespace, 1.0):
                    stored = await proposals.submit(
                        self._ledger, agent, turns[i].idempotency_key, p.command
                    )
                    outcomes[i] = TurnOutcome(
                        "", False, False, 0, p.redactions, proposal_id=stored.id
                    )
                    continue
            entries.append((i, NewEntry(uuid.uuid4().hex, agent, turns[i].idempotency_key,
                                        p.command)))  # fmt: skip
        if entries:
            done = await self._write_path.commit(
                [e for _, e in entries], wait=True, details=["working"] * len(entries)
            )
            for (i, _), d in zip(entries, done, strict=True):
                result = self._results.get(d.write_id)
                if result is None:  # applied earlier (a retry) or before a restart: the window
                    t = turns[i]
                    result = (await self._dialogue_len(prepared[i].namespace, t.session_id), False)
                outcomes[i] = TurnOutcome(
                    d.write_id, d.duplicate, result[1], result[0], prepared[i].redactions
                )
        return [o for o in outcomes if o is not None]

    async def _dialogue_len(self, namespace: str, session_id: str) -> int:
        window = await self._store.window(namespace, session_id, [Zone.DIALOGUE])
        return len(window.get(Zone.DIALOGUE, []))

    async def window(
        self, agent: str, namespace: str, session_id: str, zones: Sequence[str]
    ) -> tuple[list[Turn], bool]:
        ns = self._session(agent, namespace, session_id, write=False)
        wanted = [parse_zone(z, "zones") for z in zones] or list(Zone)
        try:
            window = await self._store.window(ns, session_id, wanted)
        except BackendUnavailable:
            return [], True  # fallback: an empty context, never an error (seed 003 §4.2)
        return [t for z in Zone if z in wanted for t in window.get(z, [])], False

    async def session_state(
        self, agent: str, namespace: str, session_id: str
    ) -> tuple[dict[str, str], int]:
        ns = self._session(agent, namespace, session_id, write=False)
        state = await self._store.get_state(ns, session_id)
        return state, await self._store.ttl_seconds(ns, session_id)

    async def update_session_state(
        self,
        agent: str,
        namespace: str,
        session_id: str,
        updates: dict[str, str],
        remove: Sequence[str],
    ) -> tuple[dict[str, str], int]:
        """Set and remove keys; the limits of ``state_limits`` hold per update and, checked
        against the stored state under a per-session lock, for the whole session."""
        ns = self._session(agent, namespace, session_id, write=True)
        raw = updates
        updates, removed = check_state_update(updates, remove, self._limits)
        await refuse_similar(self._screen, [("set", t) for kv in raw.items() for t in kv])
        async with self._locks[hash((ns, session_id)) % len(self._locks)]:
            current = await self._store.get_state(ns, session_id)
            keys, size = check_state_total(current, updates, removed, self._limits)
            counted = agent != self._master  # the budget across sessions (the master is trusted)
            if counted:
                share = StateShare(agent, ns, session_id, keys, size)
                await reserve_agent_state(self._store, share, self._limits)
            try:
                state = await self._store.set_state(ns, session_id, updates, removed)
            except BaseException:
                if counted:  # best effort: a share left counted expires with the session TTL
                    with contextlib.suppress(Exception):
                        await self._store.release_state(agent, ns, session_id)
                raise
        return state, await self._store.ttl_seconds(ns, session_id)

    async def compact_window(self, agent: str, namespace: str, session_id: str) -> tuple[int, str]:
        ns = self._session(agent, namespace, session_id, write=True)
        return await compact(self._store, ns, session_id, self._summariser, self._summary_budget)

    async def clear_scratch(self, agent: str, namespace: str, session_id: str) -> None:
        ns = self._session(agent, namespace, session_id, write=True)
        await self._store.clear(ns, session_id, Zone.SCRATCH)
