"""The one retry layer: exponential backoff with full jitter, Retry-After honoured up to a cap.

The SDKs are built with `max_retries=0`, so every retry happens here, is counted on the response
(`attempts`, `retry_delays`) or on the final error, and reaches telemetry through the core.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable
from contextlib import AbstractContextManager, nullcontext
from typing import Protocol

from agent.config.schema import RetrySettings
from agent.errors import ProviderError
from agent.llm.models import LLMCapabilities, LLMRequest, LLMResponse
from agent.llm.provider import LLMProvider

Sleep = Callable[[float], Awaitable[None]]
# Called when an attempt failed: (the error, seconds until the next attempt or None for no retry).
Mark = Callable[[ProviderError, "float | None"], None]


class AttemptObserver(Protocol):
    """Sees every HTTP attempt (adapters/telemetry/otel.py: a span each, and the retry metric)."""

    def attempt(self, number: int) -> AbstractContextManager[Mark]: ...


def _unobserved(error: ProviderError, wait: float | None) -> None:
    return None


class RetryingProvider:
    """Wraps a provider; retries errors marked `retryable`.

    Args:
        inner: the provider adapter.
        policy: attempts and delays (settings `llm.retry`).
        sleep: how to wait (tests may record instead); defaults to asyncio.sleep.
        rng: jitter source in [0, 1).
        observer: gets a span (or similar) per attempt, with its error type and backoff.
    """

    def __init__(
        self,
        inner: LLMProvider,
        policy: RetrySettings,
        sleep: Sleep = asyncio.sleep,
        rng: Callable[[], float] = random.random,
        observer: AttemptObserver | None = None,
    ):
        self.observer = observer
        self.inner = inner
        self.policy = policy
        self.sleep = sleep
        self.rng = rng
        self.capabilities: LLMCapabilities = inner.capabilities

    async def aclose(self) -> None:
        close = getattr(self.inner, "aclose", None)
        if close is not None:
            await close()

    def get_cost(self, tokens_in: int, tokens_out: int) -> float:
        return self.inner.get_cost(tokens_in, tokens_out)

    def estimate_tokens(self, text: str) -> int:
        return self.inner.estimate_tokens(text)

    def delay(self, attempt: int, error: ProviderError) -> float | None:
        """Seconds to wait before attempt `attempt + 1`, or None to give up now."""
        p = self.policy
        if not error.retryable or attempt >= p.max_attempts:
            return None
        hinted = getattr(error, "retry_after", None)
        if hinted is not None:
            # The server said when; waiting longer than the cap would hold the user too long.
            return None if hinted > p.retry_after_cap else min(hinted, p.retry_after_cap)
        return min(p.max_delay, p.base_delay * 2 ** (attempt - 1)) * self.rng()

    async def generate(self, request: LLMRequest) -> LLMResponse:
        delays: list[float] = []
        attempt = 1
        while True:
            observed = self.observer.attempt(attempt) if self.observer else nullcontext(_unobserved)
            with observed as mark:
                try:
                    response = await self.inner.generate(request)
                    response.attempts, response.retry_delays = attempt, delays
                    return response
                except ProviderError as e:
                    wait = self.delay(attempt, e)
                    mark(e, wait)
                    if wait is None:
                        e.attempts, e.retry_delays = attempt, delays
                        raise
            delays.append(round(wait, 3))
            await self.sleep(wait)
            attempt += 1
