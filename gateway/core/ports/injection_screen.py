"""The second injection screen (issue 33 M5): beside the rules of ``screening/injection.py``, an
adapter may judge texts the rules let through — the gateway's is the multilingual embedder's
similarity to known attacks (``gateway/embedding/prototype_screen.py``). The core calls it once
per request with every free-text field of that request, so an adapter can batch them."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol


class InjectionScreen(Protocol):
    async def find(self, texts: Sequence[str]) -> list[str]:
        """One entry per text, in order: why it reads as a prompt injection (e.g. "similar to
        a known attack, score 0.71"), or "" when it does not."""
        ...


class RulesOnly:
    """No second screen: the rules alone decide (``injection_embedder = ""``)."""

    async def find(self, texts: Sequence[str]) -> list[str]:
        return [""] * len(texts)


RULES_ONLY = RulesOnly()
