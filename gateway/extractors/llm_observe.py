"""Observations by a chat model (issue 27, ``observer = "llm"``): the model reads the session's
transcript (turn ids, speakers, times) and lists what each user-side speaker said about their
life, in the third person, with the turn and the speaker's own words; its answer is held to a
JSON schema (the server constrains it where it can, ``OBSERVATIONS_SCHEMA``, and it is checked
again here). An observation whose words are not in that turn is dropped (no invented memories);
relative time is resolved by ``timeref`` from the quoted words and the turn's time, not by the
model. A failing model (timeout, HTTP error, unusable answer, open breaker) falls back to the
rules: a formation job never fails for it."""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Sequence
from typing import Any

from gateway.core.model.candidates import OBSERVATION_TYPES, Observation, quote_in
from gateway.core.model.errors import ExtractionFailed
from gateway.core.model.models import Turn
from gateway.extractors import timeref
from gateway.extractors.chat import ChatClient
from gateway.extractors.llm import validate
from gateway.extractors.observe import RuleObserver, speaker_for

log = logging.getLogger("memgate.llm")

OBSERVATIONS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["observations"],
    "properties": {
        "observations": {
            "type": "array",
            "maxItems": 60,
            "items": {
                "type": "object",
                "required": ["turn", "text", "type", "evidence"],
                "properties": {
                    "turn": {"type": "string", "maxLength": 64},
                    "text": {"type": "string", "minLength": 1, "maxLength": 300},
                    "type": {"type": "string", "enum": list(OBSERVATION_TYPES)},
                    "evidence": {"type": "string", "minLength": 1, "maxLength": 500},
                },
            },
        }
    },
}

PROMPT = """Read this chat. For each line said by {names}, list every informative statement
they make about themselves or their life: the people and things in it, events, plans,
preferences, possessions, work or study, places, feelings about something specific.
Write each one as a short sentence in the third person that starts with the speaker's name
(e.g. "{example} went to Boise for a frisbee tournament."), keep their own words, and do not
add anything they did not say. Skip greetings, thanks, reactions, questions, wishes and
hypotheticals, and talk about the chat itself. Give the line's id in "turn", its type
(event, plan, preference or fact) and the exact words from the line in "evidence".
Answer with JSON only: {{"observations": [{{"turn": "...", "text": "...", "type": "...",
"evidence": "..."}}]}}. If there is nothing, answer {{"observations": []}}.

Chat:
{transcript}"""


def parse_observations(text: str) -> list[dict[str, Any]]:
    body = re.sub(r"^\s*```(?:json)?\s*|\s*```\s*$", "", text.strip())
    data = json.loads(body, strict=False)  # a grammar-held answer may put raw newlines in strings
    if isinstance(data, list):
        data = {"observations": data}
    validate(data, OBSERVATIONS_SCHEMA)
    return list(data["observations"])


def transcript(turns: Sequence[Turn], max_chars: int = 16_000) -> str:
    lines = []
    for n, t in enumerate(turns):
        who = t.metadata.get("speaker") or t.role
        lines.append(f"[{n}] ({t.at:%Y-%m-%d}) {who}: {' '.join(t.content.split())}")
    return "\n".join(lines)[-max_chars:]


class LLMObserver:
    """``Observer`` backed by a chat model, with the rules as its fallback."""

    def __init__(self, client: ChatClient, fallback: RuleObserver | None = None) -> None:
        self._client = client
        self._fallback = fallback or RuleObserver()
        self.name = f"llm-observe/{client.s.model}"[:64]
        self.fell_back = 0  # calls answered by the rules because the model failed
        self.dropped = 0  # the model's observations not grounded in their turn

    async def observe(self, turns: Sequence[Turn], namespace: str) -> list[Observation]:
        mine = [t for t in turns if t.role == "user"]
        if not mine:
            return []
        names = sorted({speaker_for(t, namespace) for t in mine})
        prompt = PROMPT.format(
            names=" or ".join(names), example=names[0], transcript=transcript(turns)
        )
        try:
            found = await self._client.ask(
                [{"role": "user", "content": prompt}],
                parse_observations,
                schema=OBSERVATIONS_SCHEMA,
            )
        except ExtractionFailed as exc:
            log.warning("%s failed (%s); using %s", self.name, exc.message, self._fallback.name)
            self.fell_back += 1
            return await self._fallback.observe(turns, namespace)
        out = []
        for item in found:
            obs = self._checked(item, turns, namespace)
            if obs is None:
                self.dropped += 1
                log.info("dropped an observation not grounded in its turn: %r", item["text"])
            else:
                out.append(obs)
        return out

    def _checked(
        self, item: dict[str, Any], turns: Sequence[Turn], namespace: str
    ) -> Observation | None:
        try:
            turn = turns[int(item["turn"].strip("[] "))]
        except (ValueError, IndexError):
            return None
        if turn.role != "user" or not quote_in([turn], item["evidence"]):
            return None
        name = speaker_for(turn, namespace)
        text = " ".join(item["text"].split())
        if not text.lower().startswith(name.lower()):
            return None  # about someone else, or not in the third person
        when = timeref.resolve(item["evidence"], turn.at)
        if when is not None and when.phrase.lower() in text.lower():
            text = when.rewrite(text)
        kind = item["type"]
        return Observation(
            text=text if text.endswith(".") else text + ".",
            type=kind,
            stable=kind in ("fact", "preference"),
            when=when.label if when is not None else "",
            event_time=when.start if when is not None else turn.at,
            turn_ids=(turn.id,),
            quote=item["evidence"].strip()[:500],
            confidence=0.75 if kind in ("fact", "preference") else 0.65,
            entities=[name],
            speaker=name,
        )
