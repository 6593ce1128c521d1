"""A small client of any OpenAI-compatible ``/v1/chat/completions`` endpoint (a local llama.cpp,
vLLM or Ollama server, or a hosted one): stdlib HTTP, a timeout per call, retries with backoff on
timeouts, connection errors, 5xx and unusable answers, and a circuit breaker of its own — after
``breaker_failures`` failed calls in a row it fails fast for ``cooldown_s``, then lets one call
through to probe. Every failure is an ``ExtractionFailed``."""

from __future__ import annotations

import asyncio
import json
import logging
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from gateway.core.model.errors import ExtractionFailed

log = logging.getLogger("memgate.llm")
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class ChatSettings:
    base_url: str  # up to /v1, e.g. http://127.0.0.1:8080/v1
    model: str
    api_key: str = ""
    timeout_s: float = 30.0
    retries: int = 1
    breaker_failures: int = 3
    cooldown_s: float = 60.0
    max_tokens: int = 1024
    #: how the answer's JSON schema is sent: "json_schema" (OpenAI's form; vLLM, llama.cpp's
    #: llama-server), "json_object" (``{"type": "json_object", "schema": …}``: llama-cpp-python's
    #: server) or "none" (a server that knows neither: the answer is still checked here)
    response_format: str = "json_schema"


class Breaker:
    """closed → open after ``failures`` in a row → half-open after ``cooldown_s`` (one probe)."""

    def __init__(
        self, failures: int, cooldown_s: float, clock: Callable[[], float] = time.monotonic
    ):
        self._limit = failures
        self._cooldown = cooldown_s
        self._clock = clock
        self._failures = 0
        self._opened_at: float | None = None

    @property
    def state(self) -> str:
        if self._opened_at is None:
            return "closed"
        return "half_open" if self._clock() - self._opened_at >= self._cooldown else "open"

    def allow(self) -> bool:
        return self.state != "open"

    def success(self) -> None:
        self._failures, self._opened_at = 0, None

    def failure(self) -> None:
        self._failures += 1
        if self._failures >= self._limit or self._opened_at is not None:
            self._opened_at = self._clock()


class ChatClient:
    def __init__(self, settings: ChatSettings) -> None:
        self.s = settings
        self.breaker = Breaker(settings.breaker_failures, settings.cooldown_s)

    async def ask(
        self,
        messages: list[dict[str, str]],
        parse: Callable[[str], T],
        schema: dict[str, Any] | None = None,
    ) -> T:
        """The parsed answer to ``messages``. ``parse`` raises ``ValueError`` on output it cannot
        use (that counts as a failure and is retried). ``schema``: the JSON schema the server is
        asked to hold the answer to (``response_format``, as ``ChatSettings.response_format``
        says; the answer is parsed and checked here either way)."""
        if not self.breaker.allow():
            raise ExtractionFailed(
                f"the model at {self.s.base_url} failed {self.s.breaker_failures} times in a row; "
                f"not calling it for {self.s.cooldown_s:.0f}s (its breaker is open)"
            )
        last = ""
        for attempt in range(self.s.retries + 1):
            if attempt:
                await asyncio.sleep(min(0.2 * 2**attempt, 2.0))
            try:
                text = await asyncio.to_thread(self._post, messages, schema)
                result = parse(text)
            except _Fatal as exc:
                self.breaker.failure()
                raise ExtractionFailed(str(exc)) from None
            except (ValueError, OSError, TimeoutError, _Retryable) as exc:
                last = f"{type(exc).__name__}: {exc}"
                log.warning("model call %d/%d failed: %s", attempt + 1, self.s.retries + 1, last)
                continue
            self.breaker.success()
            return result
        self.breaker.failure()
        raise ExtractionFailed(f"the model at {self.s.base_url} gave no usable answer ({last})")

    def _post(self, messages: list[dict[str, str]], schema: dict[str, Any] | None = None) -> str:
        body: dict[str, Any] = {
            "model": self.s.model,
            "messages": messages,
            "temperature": 0,
            "max_tokens": self.s.max_tokens,
        }
        if schema is not None and self.s.response_format == "json_schema":
            body["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "answer", "strict": True, "schema": schema},
            }
        elif schema is not None and self.s.response_format == "json_object":
            body["response_format"] = {"type": "json_object", "schema": schema}
        req = urllib.request.Request(
            self.s.base_url.rstrip("/") + "/chat/completions",
            data=json.dumps(body).encode(),
            headers={"Content-Type": "application/json"},
            method="POST",
        )
        if self.s.api_key:
            req.add_header("Authorization", f"Bearer {self.s.api_key}")
        try:
            with urllib.request.urlopen(req, timeout=self.s.timeout_s) as resp:  # noqa: S310
                data: Any = json.loads(resp.read().decode("utf-8"))
        except urllib.error.HTTPError as err:
            if err.code >= 500 or err.code == 429:
                raise _Retryable(f"HTTP {err.code}") from None
            raise _Fatal(
                f"the model endpoint answered HTTP {err.code}: check llm_base_url, llm_model "
                "and llm_api_key"
            ) from None
        try:
            return str(data["choices"][0]["message"]["content"])
        except (KeyError, IndexError, TypeError):
            raise ValueError("not a chat-completions response") from None


class _Retryable(Exception):
    pass


class _Fatal(Exception):
    pass
