"""A provider that replays given responses: the process-edge double for tests. Never shipped."""

from __future__ import annotations

from collections.abc import Callable

from adapters.llm.base import Priced
from agent.config.schema import ModelPrice
from agent.errors import ProviderError
from agent.llm.models import LLMCapabilities, LLMRequest, LLMResponse

# A step is a response, an error to raise, or a function of the request that returns either.
Step = LLMResponse | ProviderError | Callable[[LLMRequest], "LLMResponse | ProviderError"]


class ScriptedProvider(Priced):
    """
    Args:
        steps: replayed in order, one per `generate` call; running out is an error.
        model: reported as the model name and used for prices.
        prices: model -> dollars per million tokens.
    """

    def __init__(self, steps: list[Step], model: str = "scripted", prices: dict[str, ModelPrice] | None = None):
        self.steps = list(steps)
        self.model = model
        self.prices = prices or {}
        self.requests: list[LLMRequest] = []
        self.capabilities = LLMCapabilities(context_window=8_000)

    async def generate(self, request: LLMRequest) -> LLMResponse:
        self.requests.append(request)
        if not self.steps:
            raise AssertionError(f"scripted provider ran out of responses at call {len(self.requests)}")
        step = self.steps.pop(0)
        out = step(request) if callable(step) else step
        if isinstance(out, ProviderError):
            raise out
        return out.model_copy(update={"model": out.model or self.model})
