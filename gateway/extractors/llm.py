"""The LLM extractor and summariser over any OpenAI-compatible chat-completions endpoint.

The extractor asks with the seed's prompt (000 §3.4: stable facts only, each with the user's own
words as evidence, JSON out), validates the answer against ``FACTS_SCHEMA``, and keeps a fact only
when its evidence is found in the user's turns (a fact whose evidence is not in the transcript is
dropped: no invented memories, 000 §5.2). The summariser asks with the seed's summary prompt
(004 §3.3). Both raise ``ExtractionFailed`` when the model does not answer usably; the gateway
then falls back to the rule extractor / extractive summariser."""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Sequence
from typing import Any

from gateway.core.model.candidates import FACT_TYPES, Candidate, fact_key, quote_in, slug, valid_key
from gateway.core.model.errors import ExtractionFailed
from gateway.core.model.models import Turn
from gateway.core.screening.importance import is_explicit
from gateway.extractors.chat import ChatClient
from gateway.extractors.summary import NOTE, tokens

log = logging.getLogger("memgate.llm")

FACTS_SCHEMA: dict[str, Any] = {
    "type": "array",
    "maxItems": 50,
    "items": {
        "type": "object",
        "required": ["fact", "type", "evidence"],
        "properties": {
            "fact": {"type": "string", "minLength": 1, "maxLength": 500},
            "type": {"enum": list(FACT_TYPES)},
            "evidence": {"type": "string", "minLength": 1, "maxLength": 1000},
            "key": {"type": "string", "maxLength": 120},
            "value": {"type": "string", "maxLength": 200},
            "confidence": {"type": "number", "minimum": 0, "maximum": 1},
            "explicit": {"type": "boolean"},
        },
    },
}

EXTRACT_PROMPT = """你是用户画像分析师。根据下面的对话抽取关于该用户的稳定事实。
要求：
1. 只抽取对话中明确表达或可合理推断的事实，不要脑补。闲聊里一次性提到的事不算稳定事实。
2. 每条事实必须附上对话原文证据（evidence 逐字摘自用户的发言）。
3. 输出JSON数组：[{{"fact": "...", "type": "preference|attribute|constraint", "evidence": "原文",
   "key": "user.diet", "value": "vegetarian", "confidence": 0.8, "explicit": false}}]
   key 是规范化的事实键（小写，点分隔，第一段是 user 或说话人名字的小写），value 是事实的值，
   explicit 表示用户明确要求记住（"记住"、"以后都"、"remember"）。没有事实就输出 []。
   喜欢或不喜欢某样东西用同一个键 user.taste.<东西>，value 写 "likes <东西>" 或
   "dislikes <东西>"（中文写 "喜欢…" 或 "不喜欢…"），前后矛盾才能被发现。
(You are a user-profile analyst. Extract stable facts about the user from the dialogue below.
Only facts stated or reasonably implied; every fact quotes the user's own words verbatim as
evidence; a like or dislike of a thing is key user.taste.<thing>, value "likes <thing>" or
"dislikes <thing>". Output only the JSON array.)

对话内容：
{transcript}"""

SUMMARY_PROMPT = """请将以下对话历史压缩为 {budget} 个词（字）以内的摘要，只保留：
1. 用户确定下来的偏好和指令
2. 关键事实（名字、时间、地点、数字）
3. 已完成和待办的任务
不要保留寒暄和无关信息。只输出摘要本身。

对话历史：
{transcript}"""


def validate(value: Any, schema: dict[str, Any], path: str = "$") -> None:
    """Checks ``value`` against the subset of JSON Schema ``FACTS_SCHEMA`` uses; raises
    ``ValueError`` naming the first offending path."""
    _check_type(value, schema, path)
    if "enum" in schema and value not in schema["enum"]:
        raise ValueError(f"{path} must be one of {schema['enum']}")
    if isinstance(value, str) and not (
        schema.get("minLength", 0) <= len(value) <= schema.get("maxLength", len(value))
    ):
        raise ValueError(f"{path} has a bad length")
    if isinstance(value, list):
        if len(value) > schema.get("maxItems", len(value)):
            raise ValueError(f"{path} has too many items")
        for i, item in enumerate(value):
            validate(item, schema.get("items", {}), f"{path}[{i}]")
    if isinstance(value, dict):
        for name in schema.get("required", ()):
            if name not in value:
                raise ValueError(f"{path}.{name} is missing")
        for name, sub in schema.get("properties", {}).items():
            if name in value:
                validate(value[name], sub, f"{path}.{name}")


def _check_type(value: Any, schema: dict[str, Any], path: str) -> None:
    kind = schema.get("type")
    types = {"array": list, "object": dict, "string": str, "boolean": bool}
    if kind == "number":
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ValueError(f"{path} must be a number")
        if not schema.get("minimum", value) <= value <= schema.get("maximum", value):
            raise ValueError(f"{path} is out of range")
    elif kind and not isinstance(value, types[kind]):
        raise ValueError(f"{path} must be a {kind}")


def parse_facts(text: str) -> list[dict[str, Any]]:
    """The model's answer as schema-valid fact objects (``ValueError`` otherwise)."""
    body = re.sub(r"^\s*```(?:json)?\s*|\s*```\s*$", "", text.strip())
    data = json.loads(body)
    if isinstance(data, dict) and isinstance(data.get("facts"), list):
        data = data["facts"]
    validate(data, FACTS_SCHEMA)
    return list(data)


def transcript(turns: Sequence[Turn], max_chars: int = 24_000) -> str:
    lines = []
    for t in turns:
        who = t.metadata.get("speaker") or t.role
        lines.append(f"[{t.id}] {who}: {' '.join(t.content.split())}")
    text = "\n".join(lines)
    return text[-max_chars:]


class LLMExtractor:
    """``Extractor`` backed by a chat model."""

    def __init__(self, client: ChatClient) -> None:
        self._client = client
        self.name = f"llm/{client.s.model}"[:64]

    async def extract(self, turns: Sequence[Turn]) -> list[Candidate]:
        if not turns:
            return []
        prompt = EXTRACT_PROMPT.format(transcript=transcript(turns))
        facts = await self._client.ask([{"role": "user", "content": prompt}], parse_facts)
        user_turns = [t for t in turns if t.role == "user"]
        out = []
        for f in facts:
            c = self._candidate(f, user_turns)
            if c is None:
                log.info("dropped a fact whose evidence is not in the transcript: %r", f["fact"])
            else:
                out.append(c)
        return out

    def _candidate(self, f: dict[str, Any], turns: list[Turn]) -> Candidate | None:
        ids = quote_in(turns, f["evidence"])
        if not ids:
            return None
        said_by = next(t for t in turns if t.id == ids[0])
        subject = slug(said_by.metadata.get("speaker", "")) or "user"
        key = str(f.get("key", "")).strip().lower()
        if not valid_key(key):
            key = fact_key(subject, "note", slug(f["fact"])[:30] or "item")
        elif key.split(".", 1)[0] != subject:
            key = fact_key(subject, *key.split(".")[1:]) if "." in key else key
        # "remember …" counts when the model says so or the quoted turn says it
        explicit = bool(f.get("explicit")) or is_explicit(said_by.content)
        confidence = float(f.get("confidence", 0.7))
        return Candidate(
            key=key,
            value=str(f.get("value") or f["fact"])[:200],
            statement=f["fact"].strip(),
            type=f["type"],
            confidence=max(confidence, 0.9) if explicit else confidence,
            quote=f["evidence"].strip(),
            turn_ids=ids,
            extractor=self.name,
            explicit=explicit,
            importance=0.9 if explicit else 0.6,
        )


class LLMSummariser:
    """``Summariser`` backed by a chat model; keeps to the budget and ends with the note."""

    def __init__(self, client: ChatClient) -> None:
        self._client = client
        self.name = f"llm/{client.s.model}"[:64]

    async def summarise(self, turns: Sequence[Turn], budget_tokens: int) -> str:
        room = max(10, budget_tokens - tokens(NOTE))
        prompt = SUMMARY_PROMPT.format(budget=room, transcript=transcript(turns))
        text = await self._client.ask([{"role": "user", "content": prompt}], _summary_text)
        return f"{_fit(text.replace(NOTE, '').strip(), room)} {NOTE}"


def _summary_text(text: str) -> str:
    if not text.strip():
        raise ValueError("empty summary")
    return text


def _fit(text: str, budget: int) -> str:
    """Cut ``text`` to ``budget`` tokens (the model may not keep to it)."""
    if tokens(text) <= budget:
        return text
    out: list[str] = []
    for piece in re.findall(r"[\u4e00-\u9fff]|[^\u4e00-\u9fff]+?(?=\s|[\u4e00-\u9fff]|$)\s*", text):
        if tokens("".join(out) + piece) > budget:
            break
        out.append(piece)
    if not out:
        raise ExtractionFailed("the summary does not fit the budget")
    return "".join(out).rstrip() + "…"
