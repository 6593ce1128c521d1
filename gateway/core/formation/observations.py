"""Observations become memory (issue 27): each one an episodic event — its resolved time as the
event time, the speaker and named things as entities, the quoted words as evidence, the turn and
the time label in its provenance — and each stable one (a fact or preference whose statement has
a slot) a candidate fact for the two-session confirmation, so an update said in plain talk meets
the fact it changes."""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Sequence
from dataclasses import replace

from gateway.core.journal.write_path import WritePath
from gateway.core.model import candidates as cd
from gateway.core.model import provenance as pv
from gateway.core.model.commands import MemoryWrite
from gateway.core.model.control import NewEntry
from gateway.core.model.errors import BackendUnavailable, Overloaded, Unavailable
from gateway.core.model.limits import Limits
from gateway.core.model.models import Layer
from gateway.core.truth import slots
from gateway.core.writing.inputs import WriteInput, prepare

TURN, WHEN, KIND, BY = pv.OBSERVED_TURN, pv.OBSERVED_WHEN, pv.OBSERVED_KIND, pv.OBSERVED_BY
EVENT_TYPE = pv.OBSERVATION_TYPE
_IMPORTANCE = {"fact": 0.6, "preference": 0.6, "plan": 0.55, "event": 0.5}


class ObservationLog:
    def __init__(self, write_path: WritePath, limits: Limits, agent: str) -> None:
        self._write_path = write_path
        self._limits = limits
        self._agent = agent

    async def record(
        self, namespace: str, session_id: str, observed: Sequence[cd.Observation], observer: str
    ) -> int:
        """Journal every observation as an episodic event and wait until applied; a replay of
        the same turns writes nothing twice (the key is the turn and the words)."""
        entries, details = [], []
        for o in observed:
            item = WriteInput(
                namespace=namespace,
                layer=Layer.EPISODIC.value,
                content=o.text,
                type=EVENT_TYPE,
                importance=_IMPORTANCE.get(o.type, 0.5),
                confidence=o.confidence,
                session_id=session_id,
                event_time=o.event_time,
                evidence=[o.quote],
                entities=o.entities,
                idempotency_key="observe:" + _digest(namespace, session_id, o),
            )
            p = prepare(item, self._limits)
            if p.quarantined or p.skipped:
                continue
            assert isinstance(p.command, MemoryWrite)
            turn = o.turn_ids[0] if o.turn_ids else ""
            provenance = {TURN: turn, WHEN: o.when, KIND: o.type, BY: observer}
            command = replace(p.command, metadata={**p.command.metadata, **provenance})
            entries.append(NewEntry(uuid.uuid4().hex, self._agent, p.idempotency_key, command))
            details.append(f"{observer} {o.type} turn={turn} when={o.when or '-'}"[:500])
        return await applied(self._write_path, entries, "observe", details)


async def applied(
    write_path: WritePath, entries: list[NewEntry], action: str, details: list[str]
) -> int:
    """Journal what formation makes and wait until the long-term lane applied it (a job is done
    when its memories are); the lane's trouble is a backend's (the job is retried). Returns how
    many entries there were."""
    if not entries:
        return 0
    try:
        await write_path.commit(entries, wait=True, action=action, details=details)
    except (Unavailable, Overloaded) as exc:
        if isinstance(exc, BackendUnavailable):
            raise
        raise BackendUnavailable("long-term apply lane", exc.message) from exc
    return len(entries)


def candidates(
    observed: Sequence[cd.Observation], namespace: str, observer: str
) -> list[cd.Candidate]:
    """The stable observations whose statement sets a slot, as candidate facts."""
    out = []
    for o in observed:
        if not o.stable or not o.turn_ids:
            continue
        slot = slots.parse(o.text, namespace)
        if slot is None:
            continue
        out.append(
            cd.Candidate(
                key=cd.fact_key(slot.subject, *slot.attribute.replace("=", ":").split(":")),
                value=slot.value,
                statement=o.text,
                type="preference" if o.type == "preference" else "attribute",
                confidence=o.confidence,
                quote=o.quote,
                turn_ids=o.turn_ids,
                extractor=observer,
            )
        )
    return out


def _digest(namespace: str, session_id: str, o: cd.Observation) -> str:
    raw = f"{namespace}\n{session_id}\n{','.join(o.turn_ids)}\n{o.text}"
    return hashlib.sha256(raw.encode()).hexdigest()[:32]
