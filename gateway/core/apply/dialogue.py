"""Dialogue turns as long-term memories: which episodic writes are turns of a conversation, and
the context a turn is indexed with (lexically and densely) so that it can be found on its own.

A turn ("ok, I'll bring it", "Ha, that's a 3D printer!") often makes sense only next to the turn
before it. The applier gives every turn a ``Memory.context`` — the session date, the speaker when
the content does not name it, the previous ``context_turns`` turns of the same session and, once
it is written, the turn after it (``context_next``) — which
the stores index beside the content (and, with ``context_dense``, the embedder embeds with it).
The stored and returned content stays the turn itself.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime

from gateway.core.model.command_types import MemoryWrite
from gateway.core.model.models import Layer, Memory, MemoryFilter
from gateway.core.ports.ports import RecordStore

#: metadata keys that name who said a turn
SPEAKER_KEYS = ("speaker", "role")


def is_turn(mem: Memory) -> bool:
    """An episodic memory written in a session is a dialogue turn."""
    return mem.layer is Layer.EPISODIC and bool(mem.source_session)


def spoken(content: str, metadata: Mapping[str, str]) -> str:
    """The turn as a line of dialogue: ``"Speaker: text"`` unless it already starts that way."""
    speaker = next((metadata[k].strip() for k in SPEAKER_KEYS if metadata.get(k, "").strip()), "")
    if not speaker or content.lstrip().startswith(f"{speaker}:"):
        return content
    return f"{speaker}: {content}"


def said(layer: Layer, session_id: str, content: str, metadata: Mapping[str, str]) -> str:
    """What is embedded for a write: a dialogue turn without its leading ``"Speaker:"`` (the
    speaker is metadata, matched by name at recall: ``named_speaker``), anything else as is.
    With the name in the vector, MiniLM ranked the named person's every turn above the turns
    that answer (docs/BENCHMARKS-HISTORY.md, "Where recall misses")."""
    if layer is not Layer.EPISODIC or not session_id:
        return content
    speaker = next((metadata[k].strip() for k in SPEAKER_KEYS if metadata.get(k, "").strip()), "")
    head = f"{speaker}:"
    if speaker and content.lstrip().startswith(head):
        return content.lstrip()[len(head) :].strip() or content
    return content


def embedded(command: MemoryWrite) -> str:
    """The text embedded for a write (``said``)."""
    return said(command.layer, command.session_id, command.content, command.metadata)


def speaker_of(mem: Memory) -> str:
    """Who said a dialogue turn ("" when the metadata does not say)."""
    return next((mem.metadata[k].strip() for k in SPEAKER_KEYS if mem.metadata.get(k)), "")


def date_words(when: datetime) -> str:
    """``9 May 2023``: the words a question about the date would use."""
    return f"{when.day} {when:%B %Y}"


def context(mem: Memory, previous: Sequence[Memory], with_date: bool = True) -> str:
    """The context of turn ``mem``: its date, its speaker (when its content does not name it)
    and the previous turns, oldest first, each as a line of dialogue."""
    lines = [date_words(mem.when)] if with_date else []
    lines += [spoken(p.content, p.metadata) for p in previous]
    line = spoken(mem.content, mem.metadata)
    if line != mem.content:
        lines.append(line[: len(line) - len(mem.content)].strip())  # "Speaker:"
    return "\n".join(lines)


async def add_context(
    records: RecordStore, mems: Sequence[Memory], n: int, with_date: bool, with_next: bool = True
) -> list[Memory]:
    """Give every dialogue turn its context (``context``): the previous ``n`` turns come from
    this batch (journal order) or else from the records of the session. With ``with_next`` the
    turn before each one also gets it as context (an answer is often the turn after the
    question that names its subject); the stored turns whose context changed are re-indexed
    (``RecordStore.set_context``) and returned."""
    if n <= 0:
        return []
    recent: dict[tuple[str, str], list[Memory]] = {}
    fresh = {id(m) for m in mems}
    stored: dict[str, Memory] = {}
    for mem in mems:
        if not is_turn(mem):
            continue
        key = (mem.namespace, mem.source_session)
        if key not in recent:
            flt = MemoryFilter(
                (mem.namespace,), (Layer.EPISODIC,), end=mem.when, limit=n,
                session_id=mem.source_session,
            )  # fmt: skip
            recent[key] = list(reversed(await records.query(flt)))
        mem.context = context(mem, recent[key][-n:], with_date)
        before = recent[key][-1] if with_next and recent[key] else None
        if before is not None and follow(before, mem) and id(before) not in fresh:
            stored[before.id] = before
        recent[key] = [*recent[key][-(n - 1) :], mem] if n > 1 else [mem]
    if stored:
        await records.set_context(list(stored.values()))
    return list(stored.values())


def follow(before: Memory, turn: Memory) -> bool:
    """Add ``turn`` (as a line of dialogue) to the context of the turn ``before`` it, once;
    whether it changed."""
    line = spoken(turn.content, turn.metadata)
    if line in before.context.split("\n"):
        return False  # a replayed batch
    before.context = f"{before.context}\n{line}" if before.context else line
    return True
