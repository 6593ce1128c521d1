"""How the demo's agents reach the gateway: its address, each agent's API key (``--api-keys FILE``
or ``$MEMGATE_API_KEYS``, the gateway's own ``agent=key,agent=key`` form; one pair a line in a
file works too) and TLS (``--tls-ca`` and, for mTLS, ``--tls-cert``/``--tls-key``)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gateway.client import GatewayClient


def parse_keys(text: str) -> dict[str, str]:
    """``agent=key`` pairs, separated by commas or new lines."""
    keys = {}
    for pair in text.replace("\n", ",").split(","):
        agent, sep, key = pair.strip().partition("=")
        if sep and agent and key:
            keys[agent.strip()] = key.strip()
    return keys


@dataclass(frozen=True)
class Access:
    target: str
    keys: dict[str, str] = field(default_factory=dict)
    tls: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def of(cls, target: str, keys_file: str | None, tls: dict[str, Any]) -> Access:
        text = Path(keys_file).read_text() if keys_file else os.environ.get("MEMGATE_API_KEYS", "")
        return cls(target, parse_keys(text), {k: v for k, v in tls.items() if v})

    def client(self, agent_id: str) -> GatewayClient:
        """A client acting as ``agent_id``, with its key when one is known."""
        return GatewayClient(
            self.target, agent_id=agent_id, api_key=self.keys.get(agent_id), **self.tls
        )
