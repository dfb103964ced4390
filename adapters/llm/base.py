"""What the provider adapters share: HTTP-status translation, prices and a token estimate."""

from __future__ import annotations

from collections.abc import Mapping
from email.utils import parsedate_to_datetime
from typing import Any

from agent.config.schema import ModelPrice
from agent.domain.types import utcnow
from agent.errors import (
    ProviderAuthError,
    ProviderBadRequest,
    ProviderError,
    ProviderRateLimited,
    ProviderUnavailable,
)
from agent.llm.models import LLMCapabilities

# Context windows of well-known models; anything else gets the conservative default.
WINDOWS = {"gpt-4o": 128_000, "gpt-4o-mini": 128_000, "gpt-4.1": 1_000_000, "claude": 200_000}
DEFAULT_WINDOW = 32_000


def window_for(model: str) -> int:
    for prefix, size in sorted(WINDOWS.items(), key=lambda kv: -len(kv[0])):
        if model.startswith(prefix):
            return size
    return DEFAULT_WINDOW


def retry_after(headers: Mapping[str, str]) -> float | None:
    """Seconds from `Retry-After` (seconds or an HTTP date) or `retry-after-ms`; None if absent."""
    ms = headers.get("retry-after-ms")
    if ms:
        try:
            return max(0.0, float(ms) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        return max(0.0, (parsedate_to_datetime(value) - utcnow()).total_seconds())
    except (TypeError, ValueError):
        return None


def from_status(status: int, message: str, headers: Mapping[str, str]) -> ProviderError:
    """The agentbot error for an HTTP error status from any provider."""
    if status in (401, 403):
        return ProviderAuthError(message, status=status)
    if status == 429:
        return ProviderRateLimited(message, status=status, retry_after=retry_after(headers))
    if status in (408, 409) or status >= 500:  # 529 is Anthropic's "overloaded"
        return ProviderUnavailable(message, status=status, retry_after=retry_after(headers))
    return ProviderBadRequest(message, status=status)


class Priced:
    """Cost and a token estimate from the configured price table."""

    model: str
    prices: Mapping[str, ModelPrice]

    # A cached prompt token costs this share of an input token unless the price table says otherwise
    # (OpenAI bills cache hits at half price, Anthropic cache reads at a tenth).
    cached_share = 0.5
    # Anthropic bills writing the cache at 1.25 input tokens; OpenAI's caching is free to write.
    cache_write_share = 1.0

    def get_cost(self, tokens_in: int, tokens_out: int, cached_in: int = 0, cache_write: int = 0) -> float:
        """Dollars for a call. `tokens_in` counts every prompt token, `cached_in` those read from the
        provider's cache and `cache_write` those written to it (both part of `tokens_in`)."""
        price = self.prices.get(self.model)
        if price is None:
            return 0.0
        cached_price = price.cached_input if price.cached_input is not None else price.input * self.cached_share
        fresh = max(0, tokens_in - cached_in - cache_write)
        prompt = fresh * price.input + cached_in * cached_price + cache_write * price.input * self.cache_write_share
        return (prompt + tokens_out * price.output) / 1_000_000

    def estimate_tokens(self, text: str) -> int:
        # English averages about four characters per token; counting three overestimates, which keeps
        # the history inside the window.
        return len(text) // 3 + 1

    async def aclose(self) -> None:
        """Nothing to release; a provider with an HTTP client closes it here."""


class SDKProvider(Priced):
    """What the SDK-backed providers share: model, prices, capabilities, and closing the client."""

    client: Any

    def configure(self, model: str, prices: Mapping[str, ModelPrice] | None, context_window: int | None) -> None:
        self.model = model
        self.prices = prices or {}
        self.capabilities = LLMCapabilities(
            tools=True, json_schema=True, streaming=True, context_window=context_window or window_for(model)
        )

    async def aclose(self) -> None:
        await self.client.close()
