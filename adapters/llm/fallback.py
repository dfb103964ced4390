"""Fallback models: when the main model fails with an outage after its retries, the next one in
`llm.fallback_models` answers (same provider, same key). A bad request or an answer in the wrong
shape is not an outage: the next model would fail the same way, so it is raised at once."""

from __future__ import annotations

from agent.errors import ProviderError
from agent.llm.breaker import OUTAGE_KINDS
from agent.llm.models import LLMCapabilities, LLMRequest, LLMResponse
from agent.llm.provider import LLMProvider


class FallbackProvider:
    """
    Args:
        providers: one provider per model, the main one first, each inside its own retry layer.
    """

    def __init__(self, providers: list[LLMProvider]):
        if not providers:
            raise ValueError("FallbackProvider needs at least one provider")
        self.providers = providers
        self.capabilities: LLMCapabilities = providers[0].capabilities

    async def aclose(self) -> None:
        for p in self.providers:
            await p.aclose()

    def get_cost(self, tokens_in: int, tokens_out: int) -> float:
        return self.providers[0].get_cost(tokens_in, tokens_out)

    def estimate_tokens(self, text: str) -> int:
        return self.providers[0].estimate_tokens(text)

    async def generate(self, request: LLMRequest) -> LLMResponse:
        attempts, delays = 0, []
        for i, provider in enumerate(self.providers):
            try:
                response = await provider.generate(request)
            except ProviderError as e:
                attempts += e.attempts
                delays += e.retry_delays
                if e.kind not in OUTAGE_KINDS or e.kind == "auth" or i == len(self.providers) - 1:
                    e.attempts, e.retry_delays = attempts, delays
                    raise
                continue
            response.attempts += attempts
            response.retry_delays = delays + response.retry_delays
            return response
        raise AssertionError("unreachable: the last provider's error is raised")
