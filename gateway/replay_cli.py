"""``memgate replay FILE``: import a past conversation, so memory forms from it as if it had
been said through the gateway — each turn appended with the time it was said (``AppendTurn.at``:
"yesterday" then means the day before that turn) and an idempotency key of its own, each session
ended with formation waited for. Running it again (after a failure half way, say) stores nothing
twice.

The file is one JSON document::

    {"namespace": "user/sam",
     "sessions": [{"id": "s1", "turns": [
        {"role": "user", "content": "I went to Boise yesterday", "at": "2018-11-05T18:30:00Z",
         "speaker": "Sam"}, ...]}, ...]}

``role`` is user or assistant; ``at`` is ISO 8601 with a zone (a time without one is read as
UTC); ``speaker`` (optional) names who says it in the memories formed."""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from rich.table import Table

from gateway.ops_cli import OK, BadInput, _emit, _guarded, _progress


@dataclass(frozen=True, slots=True)
class Said:
    session: str
    role: str
    content: str
    at: datetime
    speaker: str


def read(path: str) -> tuple[str, list[Said]]:
    """The namespace and the turns of ``path`` (``-``: standard input), checked."""
    try:
        raw = sys.stdin.read() if path == "-" else open(path, encoding="utf-8").read()  # noqa: SIM115
        doc = json.loads(raw)
    except (OSError, json.JSONDecodeError) as err:
        raise BadInput(f"{path}: not a readable JSON document ({err})") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("sessions"), list):
        raise BadInput(
            f'{path}: expected {{"namespace": …, "sessions": [{{"id": …, "turns": […]}}]}}'
        )
    namespace = doc.get("namespace")
    if not isinstance(namespace, str) or not namespace:
        raise BadInput(f'{path}: "namespace" is missing (e.g. "user/sam")')
    turns = []
    for s, session in enumerate(doc["sessions"]):
        sid = session.get("id") if isinstance(session, dict) else None
        if not isinstance(sid, str) or not sid or not isinstance(session.get("turns"), list):
            raise BadInput(f'{path}: sessions[{s}] needs an "id" and a list of "turns"')
        for n, turn in enumerate(session["turns"]):
            turns.append(_turn(turn, sid, f"{path}: sessions[{s}].turns[{n}]"))
    return namespace, turns


def _turn(turn: Any, session: str, where: str) -> Said:
    if not isinstance(turn, dict):
        raise BadInput(f"{where}: not an object")
    role, content, at = turn.get("role"), turn.get("content"), turn.get("at")
    if role not in ("user", "assistant"):
        raise BadInput(f'{where}: "role" must be "user" or "assistant"')
    if not isinstance(content, str) or not content.strip():
        raise BadInput(f'{where}: "content" must be a non-empty string')
    try:
        when = datetime.fromisoformat(str(at).replace("Z", "+00:00"))
    except ValueError:
        raise BadInput(f'{where}: "at" must be an ISO 8601 time, got {at!r}') from None
    when = when if when.tzinfo else when.replace(tzinfo=UTC)
    speaker = turn.get("speaker", "")
    if not isinstance(speaker, str):
        raise BadInput(f'{where}: "speaker" must be a string')
    return Said(session, role, content, when, speaker)


#: turns per ``AppendTurns`` call of a replay
REPLAY_BATCH = 100


def _key(namespace: str, n: int, said: Said) -> str:
    """The turn's idempotency key: its place and words, so a second replay is a retry."""
    digest = hashlib.sha256(
        f"{namespace}\n{said.session}\n{n}\n{said.at.isoformat()}\n{said.content}".encode()
    ).hexdigest()
    return f"replay:{digest[:40]}"


@_guarded
def replay(args: argparse.Namespace) -> int:
    namespace, turns = read(args.file)
    outcomes: Counter[str] = Counter()
    sessions = list(dict.fromkeys(t.session for t in turns))
    appended = 0
    with args.connect(args) as client, _progress(args.quiet) as progress:
        task = progress.add_task("replaying", total=len(turns))
        for session in sessions:
            mine = [
                dict(
                    namespace=namespace,
                    session_id=session,
                    role=said.role,
                    content=said.content,
                    at=said.at,
                    metadata={"speaker": said.speaker} if said.speaker else None,
                    idempotency_key=_key(namespace, n, said),
                )
                for n, said in enumerate(turns)
                if said.session == session
            ]
            # in calls of up to REPLAY_BATCH turns (``AppendTurns``: one journal commit each)
            for start in range(0, len(mine), REPLAY_BATCH):
                chunk = mine[start : start + REPLAY_BATCH]
                appended += sum(not r.duplicate for r in client.append_turns(chunk))
                progress.advance(task, len(chunk))
            outcomes.update(client.end_session(namespace, session, wait=True).outcomes)
    summary = {
        "namespace": namespace,
        "sessions": len(sessions),
        "turns": len(turns),
        "appended": appended,
        "outcomes": dict(outcomes),
    }

    def table() -> Table:
        out = Table(title=f"replay of {args.file} into {namespace}")
        for col in ("sessions", "turns", "new turns", "formed"):
            out.add_column(col, justify="right")
        formed = ", ".join(f"{k} {v}" for k, v in sorted(outcomes.items())) or "nothing"
        out.add_row(str(len(sessions)), str(len(turns)), str(appended), formed)
        return out

    _emit(args, summary, table)
    return OK


def register(
    sub: argparse._SubParsersAction,  # type: ignore[type-arg]
    client_options: Callable[[argparse.ArgumentParser], None],
) -> None:
    r = sub.add_parser(
        "replay",
        help="import a past conversation (turns with their times); memory forms from it",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    r.add_argument("file", help="JSON document, or - for standard input")
    r.add_argument("--quiet", action="store_true", help="no progress on stderr")
    client_options(r)
    r.set_defaults(func=replay)
