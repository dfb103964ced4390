"""The chat-model seam: what each LLM adapter (adapters/llm/) implements."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from agent.llm.models import LLMCapabilities, LLMRequest, LLMResponse


@runtime_checkable
class LLMProvider(Protocol):
    """A chat model. Requests (`LLMRequest`: messages, tools, response format, limits) are
    provider-neutral; each adapter translates them. Failures raise ProviderError subclasses
    (agent/errors.py), never SDK exceptions.
    """

    capabilities: LLMCapabilities

    async def generate(self, request: LLMRequest) -> LLMResponse: ...

    def get_cost(self, tokens_in: int, tokens_out: int) -> float:
        """Dollars for this many tokens at the configured price of the model."""
        ...

    def estimate_tokens(self, text: str) -> int:
        """A cheap, slightly pessimistic token count used to fit history into the window."""
        ...

    async def aclose(self) -> None:
        """Release the provider's HTTP client (closed with the app)."""
        ...
