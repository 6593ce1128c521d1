"""Nothing said is lost: when a session is mined, its dialogue turns — both sides,
with speaker, role, time and session — are kept in long-term memory as episodic memories, the
same kind of memory a ``BatchWrite`` of the conversation stores (``apply/dialogue.py`` gives
each its context), so a later recall finds what the user *and* the assistant or a sub-agent said.
Observations and facts formed from a turn are further keys that point at it
(``model/provenance.py``); recall
shows one answer per turn (``recall/said_once.py``).

What is not kept: small talk ("ok", "thanks", "你好": ``screening/importance``), and what the
screen quarantines or skips. A kept turn has a plain turn's importance (0.3; an explicit "remember"
0.9), so the decay sweep archives an unrecalled turn long before the observations and facts
formed from it (``usecases/lifecycle.py``: importance x 0.95^days since last recalled)."""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Sequence
from dataclasses import replace

from gateway.core.apply.dialogue import SPEAKER_KEYS, spoken
from gateway.core.formation.observations import applied
from gateway.core.journal.write_path import WritePath
from gateway.core.model.commands import MemoryWrite
from gateway.core.model.control import NewEntry
from gateway.core.model.errors import InvalidArgument
from gateway.core.model.limits import Limits
from gateway.core.model.models import Layer, Turn
from gateway.core.model.provenance import SAID_TURN, TURN_TYPE
from gateway.core.screening import importance as importance_rules
from gateway.core.writing.inputs import WriteInput, prepare


class Transcript:
    def __init__(self, write_path: WritePath, limits: Limits, agent: str) -> None:
        self._write_path = write_path
        self._limits = limits
        self._agent = agent

    async def keep(self, namespace: str, session_id: str, turns: Sequence[Turn]) -> int:
        """Journal the turns worth keeping as episodic memories and wait until applied; a
        replay of the same turns stores nothing twice (the key is the turn's id). Returns how
        many were journaled."""
        entries, details = [], []
        for turn in turns:
            item = _item(namespace, session_id, turn)
            if item is None:
                continue
            try:
                p = prepare(item, self._limits)
            except InvalidArgument:  # the turn's own metadata leaves no room: keep who said it
                item.metadata = {k: item.metadata[k] for k in SPEAKER_KEYS if k in item.metadata}
                p = prepare(item, self._limits)
            if p.quarantined or p.skipped:
                continue
            assert isinstance(p.command, MemoryWrite)
            command = replace(p.command, metadata={**p.command.metadata, SAID_TURN: turn.id})
            entries.append(NewEntry(uuid.uuid4().hex, self._agent, p.idempotency_key, command))
            details.append(f"turn {turn.id} {turn.role}"[:500])
        return await applied(self._write_path, entries, "keep_turns", details)


def _item(namespace: str, session_id: str, turn: Turn) -> WriteInput | None:
    text = turn.content.strip()
    importance = importance_rules.score(text)
    if not text or importance < importance_rules.KEEP_THRESHOLD:
        return None
    metadata = {k: v for k, v in turn.metadata.items() if not k.startswith("memgate.")}
    metadata["role"] = turn.role
    return WriteInput(
        namespace=namespace,
        layer=Layer.EPISODIC.value,
        content=spoken(text, metadata),
        type=TURN_TYPE,
        importance=importance,
        session_id=session_id,
        event_time=turn.at,
        metadata=metadata,
        idempotency_key="turn:" + _digest(namespace, session_id, turn.id),
    )


def _digest(namespace: str, session_id: str, turn_id: str) -> str:
    return hashlib.sha256(f"{namespace}\n{session_id}\n{turn_id}".encode()).hexdigest()[:32]
