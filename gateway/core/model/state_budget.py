"""Session state held per agent, across sessions (issue 33 M8): what one update asks the working
store to count, and what the store answers. The store keeps the count (``WorkingStore``
``reserve_state``), so every gateway process on it — replicas, a restarted one — shares it."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class StateShare:
    """The session state ``agent`` holds in one session after its update: the session counts
    for the agent that last changed its state, until the working store's session TTL runs out."""

    agent: str
    namespace: str
    session_id: str
    keys: int
    size: int  # bytes of keys and values (UTF-8)


@dataclass(frozen=True, slots=True)
class StateTotals:
    """The agent's session state across its live sessions with the share counted; ``refused``
    names the limit the share would break while growing ("keys", "bytes"), "" when recorded."""

    keys: int
    size: int
    refused: str = ""
