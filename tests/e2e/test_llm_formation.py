"""The LLM extractor and summariser over real HTTP, against a small OpenAI-compatible server this
test starts on 127.0.0.1: schema-valid answers are used (a fact whose evidence is not in the
transcript is dropped), schema-invalid, slow and failing answers are retried, then fail as
``ExtractionFailed``; the breaker then fails fast; the gateway falls back to the rules and loses
no turn."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from gateway.core.model.errors import ExtractionFailed
from gateway.core.model.models import Turn
from gateway.extractors.chat import ChatClient, ChatSettings
from gateway.extractors.llm import LLMExtractor, LLMSummariser
from gateway.extractors.llm_observe import OBSERVATIONS_SCHEMA, LLMObserver
from gateway.extractors.summary import NOTE
from tests.e2e.conftest import gateway_settings, running_gateway
from tests.tags import fresh_tag


@dataclass
class FakeModel:
    """What the server answers: ``mode`` valid | invalid | slow | fail | not-json."""

    mode: str = "valid"
    facts: list[dict[str, Any]] = field(default_factory=list)
    summary: str = "The user decided to fly on Friday at 9:00."
    answer: Any = None  # when set, the JSON answer to a non-summary prompt
    requests: list[dict[str, Any]] = field(default_factory=list)
    auth: list[str] = field(default_factory=list)
    #: when set, a summary request waits until ``hold`` is set (``held`` says one is waiting)
    hold: threading.Event | None = None
    held: threading.Event = field(default_factory=threading.Event)


def _handler(model: FakeModel) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:  # quiet
            pass

        def do_POST(self) -> None:  # noqa: N802
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            model.requests.append(body)
            model.auth.append(self.headers.get("Authorization", ""))
            if self.path != "/v1/chat/completions":
                return self._send(404, {"error": "not found"})
            if model.mode == "fail":
                return self._send(503, {"error": "overloaded"})
            if model.mode == "slow":
                time.sleep(1.0)
            prompt = body["messages"][-1]["content"]
            if "摘要" in prompt:
                if model.hold is not None:
                    model.held.set()
                    model.hold.wait(timeout=30)
                content = model.summary
            elif model.mode == "invalid":
                content = json.dumps(
                    [{"fact": "likes tea", "type": "opinion"}]
                )  # bad type, no evidence
            elif model.mode == "not-json":
                content = "Sure! Here are the facts: the user likes tea."
            elif model.answer is not None:
                content = json.dumps(model.answer, ensure_ascii=False)
            else:
                content = "```json\n" + json.dumps(model.facts, ensure_ascii=False) + "\n```"
            return self._send(
                200, {"choices": [{"message": {"role": "assistant", "content": content}}]}
            )

        def _send(self, code: int, data: dict[str, Any]) -> None:
            raw = json.dumps(data).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)

    return Handler


@pytest.fixture
def model() -> Iterator[tuple[FakeModel, str]]:
    fake = FakeModel()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(fake))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield fake, f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


TURNS = [
    Turn("t1", "user", "Remember: I'm allergic to peanuts."),
    Turn("t2", "assistant", "Got it, no peanuts."),
    Turn("t3", "user", "I moved to Lisbon last year, loving it."),
]
GOOD = [
    {
        "fact": "The user is allergic to peanuts",
        "type": "constraint",
        "evidence": "I'm allergic to peanuts",
        "key": "user.allergy.peanuts",
        "value": "peanuts",
        "confidence": 0.8,
    },
    {
        "fact": "The user lives in Lisbon",
        "type": "attribute",
        "evidence": "I moved to Lisbon last year",
        "key": "user.home_city",
        "value": "Lisbon",
    },
    {  # invented: no such words in the transcript
        "fact": "The user is a vegan",
        "type": "constraint",
        "evidence": "I am vegan",
        "key": "user.diet",
    },
]


def _client(url: str, **kw: Any) -> ChatClient:
    base: dict[str, Any] = dict(
        base_url=url, model="tiny", api_key="k-test", timeout_s=0.5, retries=1, cooldown_s=60
    )
    return ChatClient(ChatSettings(**{**base, **kw}))


def test_valid_answer_is_used_and_unsupported_facts_dropped(model: tuple[FakeModel, str]) -> None:
    fake, url = model
    fake.facts = GOOD
    got = asyncio.run(LLMExtractor(_client(url)).extract(TURNS))
    assert [(c.key, c.value, c.turn_ids) for c in got] == [
        ("user.allergy.peanuts", "peanuts", ("t1",)),
        ("user.home_city", "Lisbon", ("t3",)),
    ]
    assert got[0].explicit and got[0].confidence >= 0.9  # "Remember:" in its turn's words
    assert got[0].extractor == "llm/tiny"
    # the seed's prompt, the transcript with turn ids, the key as a bearer token, temperature 0
    sent = fake.requests[0]
    assert "用户画像分析师" in sent["messages"][0]["content"]
    assert "[t3] user: I moved to Lisbon" in sent["messages"][0]["content"]
    assert sent["model"] == "tiny" and sent["temperature"] == 0
    assert fake.auth[0] == "Bearer k-test"


@pytest.mark.parametrize("mode", ["invalid", "not-json", "fail", "slow"])
def test_bad_answers_are_retried_then_fail(model: tuple[FakeModel, str], mode: str) -> None:
    fake, url = model
    fake.mode = mode
    with pytest.raises(ExtractionFailed):
        asyncio.run(LLMExtractor(_client(url, retries=1)).extract(TURNS))
    assert len(fake.requests) == 2  # one retry


def test_breaker_opens_and_fails_fast(model: tuple[FakeModel, str]) -> None:
    fake, url = model
    fake.mode = "fail"
    client = _client(url, retries=0, breaker_failures=2)
    extractor = LLMExtractor(client)
    for _ in range(2):
        with pytest.raises(ExtractionFailed):
            asyncio.run(extractor.extract(TURNS))
    assert client.breaker.state == "open"
    with pytest.raises(ExtractionFailed, match="breaker is open"):
        asyncio.run(extractor.extract(TURNS))
    assert len(fake.requests) == 2  # the open breaker did not call the model


def test_summariser_keeps_budget_and_note(model: tuple[FakeModel, str]) -> None:
    fake, url = model
    text = asyncio.run(LLMSummariser(_client(url)).summarise(TURNS, 60))
    assert text == f"{fake.summary} {NOTE}"
    assert "200" not in fake.requests[0]["messages"][0]["content"]  # asked for the budget given
    fake.summary = "word " * 500
    long = asyncio.run(LLMSummariser(_client(url)).summarise(TURNS, 60))
    assert long.endswith(NOTE) and len(long.split()) < 80


def test_gateway_uses_the_model_and_falls_back_to_rules(
    model: tuple[FakeModel, str], tmp_path: Path
) -> None:
    fake, url = model
    fake.facts = GOOD
    settings = gateway_settings(
        tmp_path,
        extractor="llm",
        summariser="llm",
        llm_base_url=url,
        llm_model="tiny",
        llm_timeout_s=0.5,
        llm_retries=0,
        dialogue_max_turns=4,
    )
    ns = "user/llm"
    with running_gateway(settings) as gw, gw.client("master") as c:
        for t in TURNS:
            c.append_turn(ns, "s1", role=t.role, content=t.content)
        r = c.end_session(ns, "s1", wait=True)
        assert r.extractor == "llm/tiny" and r.outcomes == {
            "promoted": 1,
            "pending": 1,
            "observed": 1,
            "kept": 3,  # the three turns themselves, both sides (issue 43)
        }
        [hit] = c.recall("peanut allergy", namespaces=[ns], layers=["semantic"], top_k=1)
        mem = c.get(hit.id)
        assert mem.metadata["memgate.formed.extractor"] == "llm/tiny"
        assert mem.evidence == ["I'm allergic to peanuts"]
        # the model fails: the rules take over, no turn is lost, nothing is formed twice
        fake.mode = "fail"
        for t in TURNS:
            c.append_turn(ns, "s2", role=t.role, content=t.content)
        r2 = c.end_session(ns, "s2", wait=True)
        assert r2.extractor == "rules/1" and r2.turns == 3
        assert r2.outcomes.get("confirmed") == 1  # the allergy, already stored
        # overflow summaries fall back too: the task zone holds a summary with the note
        for i in range(3):
            c.append_turn(ns, "s2", role="user", content=f"We agreed on step {i} at 10:0{i}.")
        task = [t for t in c.window(ns, "s2") if t.zone == "task"]
        assert task and task[-1].content.endswith(NOTE)


def test_overflow_does_not_wait_for_the_model(
    model: tuple[FakeModel, str], tmp_path: Path, backend: dict[str, str]
) -> None:
    """An overflowing AppendTurn returns while the model is still working on the summary (the
    extractive one is in the task zone meanwhile); the model's summary replaces it later, from
    the formation lane."""
    fake, url = model
    fake.hold = threading.Event()
    settings = gateway_settings(
        tmp_path,
        summariser="llm",
        llm_base_url=url,
        llm_model="tiny",
        llm_timeout_s=60,
        llm_retries=0,
        dialogue_max_turns=4,
        **backend,
    )
    ns = f"user/overflow-{fresh_tag(8)}"
    with running_gateway(settings) as gw, gw.client("master") as c:
        for i in range(5):
            r = c.append_turn(ns, "s1", role="user", content=f"We agreed on step {i} at 10:0{i}.")
        assert r.compacted
        assert fake.held.wait(10), "the summary job never reached the model"
        assert not fake.hold.is_set()  # the model has not answered: AppendTurn did not wait
        [summary] = [t for t in c.window(ns, "s1") if t.zone == "task"]
        assert summary.content.endswith(NOTE) and fake.summary not in summary.content
        assert "step 0" in summary.content  # the extractive summary, there at once
        fake.hold.set()
        want = [f"[history_summary] {fake.summary} {NOTE}"]  # in place of the extractive one
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            task = [t.content for t in c.window(ns, "s1") if t.zone == "task"]
            if task == want:
                break
            time.sleep(0.05)
        assert task == want
        dialogue = [t for t in c.window(ns, "s1") if t.zone == "dialogue"]
        assert len(dialogue) == 3  # 5 turns, the oldest 2 rolled off


AT = datetime(2018, 11, 5, 18, 0, tzinfo=UTC)
CHAT = [
    Turn(
        "u1", "user", "I moved to Lisbon last year, loving it.", at=AT, metadata={"speaker": "Sam"}
    ),
    Turn("a1", "assistant", "Nice! I live in Porto.", at=AT, metadata={"speaker": "Alex"}),
    Turn("u2", "user", "My sister is a nurse there", at=AT, metadata={"speaker": "Sam"}),
]


def test_the_model_observes_with_a_schema_and_only_what_was_said(
    model: tuple[FakeModel, str],
) -> None:
    fake, url = model
    fake.answer = {
        "observations": [
            {
                "turn": "0",
                "text": "Sam moved to Lisbon last year.",
                "type": "event",
                "evidence": "I moved to Lisbon last year",
            },
            {
                "turn": "2",
                "text": "Sam's sister is a nurse in Lisbon.",
                "type": "fact",
                "evidence": "My sister is a nurse there",
            },
            # the other speaker's line, invented words, someone else as the subject: dropped
            {
                "turn": "1",
                "text": "Alex lives in Porto.",
                "type": "fact",
                "evidence": "I live in Porto",
            },
            {
                "turn": "0",
                "text": "Sam hates Lisbon.",
                "type": "preference",
                "evidence": "I hate it",
            },
            {"turn": "2", "text": "The nurse is tired.", "type": "fact", "evidence": "a nurse"},
        ]
    }
    observer = LLMObserver(_client(url, response_format="json_schema"))
    found = asyncio.run(observer.observe(CHAT, "user/sam"))
    assert [(o.text, o.turn_ids, o.when) for o in found] == [
        ("Sam moved to Lisbon in 2017.", ("u1",), "2017"),
        ("Sam's sister is a nurse in Lisbon.", ("u2",), ""),
    ]
    sent = fake.requests[-1]["response_format"]
    assert sent["type"] == "json_schema" and sent["json_schema"]["schema"] == OBSERVATIONS_SCHEMA
    # llama-cpp-python's form
    asyncio.run(LLMObserver(_client(url, response_format="json_object")).observe(CHAT, "user/sam"))
    assert fake.requests[-1]["response_format"] == {
        "type": "json_object",
        "schema": OBSERVATIONS_SCHEMA,
    }


def test_a_failing_model_leaves_the_rules_to_observe(model: tuple[FakeModel, str]) -> None:
    fake, url = model
    fake.mode = "fail"
    found = asyncio.run(LLMObserver(_client(url, retries=0)).observe(CHAT, "user/sam"))
    assert [o.text for o in found] == [
        "Sam moved to Lisbon in 2017.",
        "Sam's sister is a nurse there.",
    ]
