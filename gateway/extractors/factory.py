"""Builds the extractor, its rule-based fallback and the summariser the settings name."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass

from gateway.core.model.errors import ExtractionFailed
from gateway.core.model.models import Turn
from gateway.core.ports.ports import Extractor, Observer, Summariser
from gateway.extractors.chat import ChatClient, ChatSettings
from gateway.extractors.llm import LLMExtractor, LLMSummariser
from gateway.extractors.llm_observe import LLMObserver
from gateway.extractors.observe import RuleObserver
from gateway.extractors.rules import RuleExtractor
from gateway.extractors.summary import ExtractiveSummariser
from gateway.settings import Settings

log = logging.getLogger("memgate.formation")


def chat_client(s: Settings) -> ChatClient:
    return ChatClient(
        ChatSettings(
            base_url=s.llm_base_url,
            model=s.llm_model,
            api_key=s.llm_api_key,
            timeout_s=s.llm_timeout_s,
            retries=s.llm_retries,
            breaker_failures=s.llm_breaker_failures,
            cooldown_s=s.llm_breaker_cooldown_s,
            response_format=s.llm_response_format,
        )
    )


@dataclass(frozen=True, slots=True)
class Formation:
    extractor: Extractor
    rules: Extractor  # the extractor's fallback (the same object when no model is configured)
    summariser: Summariser  # CompactWindow's; the model with the extractive one as fallback
    overflow: Summariser  # while a turn is applied: always the extractive one (fast)
    later: Summariser | None  # the model, replacing an overflow's summary off the request path
    observer: Observer | None = None  # observations from plain talk (formation_observations)


def build_formation(s: Settings) -> Formation:
    """The extractor and summarisers the settings name. The extractor and summariser share one
    client (and so one breaker) when both are the model."""
    rules = RuleExtractor()
    client = chat_client(s) if "llm" in (s.extractor, s.summariser, s.observer) else None
    observer: Observer | None = None
    if s.formation_observations:
        observer = LLMObserver(client) if client and s.observer == "llm" else RuleObserver()
    extractor: Extractor = LLMExtractor(client) if client and s.extractor == "llm" else rules
    extractive = ExtractiveSummariser()
    if client and s.summariser == "llm":
        model = LLMSummariser(client)
        return Formation(
            extractor,
            rules,
            SummariserWithFallback(model, extractive),
            extractive,
            model,
            observer,
        )
    return Formation(extractor, rules, extractive, extractive, None, observer)


class SummariserWithFallback:
    """The model's summary, or the extractive one when the model fails."""

    def __init__(self, primary: Summariser, fallback: Summariser) -> None:
        self._primary = primary
        self._fallback = fallback
        self.name = primary.name

    async def summarise(self, turns: Sequence[Turn], budget_tokens: int) -> str:
        try:
            return await self._primary.summarise(turns, budget_tokens)
        except ExtractionFailed as exc:
            log.warning("%s failed (%s); using %s", self.name, exc.message, self._fallback.name)
            return await self._fallback.summarise(turns, budget_tokens)
