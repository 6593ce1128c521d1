"""Builds the extractor, its rule-based fallback and the summariser the settings name."""

from __future__ import annotations

from gateway.core.ports import Extractor, Summariser
from gateway.formation.chat import ChatClient, ChatSettings
from gateway.formation.llm import LLMExtractor, LLMSummariser
from gateway.formation.rules import RuleExtractor
from gateway.formation.summary import ExtractiveSummariser
from gateway.settings import Settings


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
        )
    )


def build_formation(s: Settings) -> tuple[Extractor, Extractor, Summariser]:
    """(extractor, rule fallback, summariser). The extractor and summariser share one client
    (and so one breaker) when both are the model."""
    rules = RuleExtractor()
    client = chat_client(s) if "llm" in (s.extractor, s.summariser) else None
    extractor: Extractor = LLMExtractor(client) if client and s.extractor == "llm" else rules
    summariser: Summariser = (
        LLMSummariser(client) if client and s.summariser == "llm" else ExtractiveSummariser()
    )
    return extractor, rules, summariser
