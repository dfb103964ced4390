"""Any OpenAI-compatible endpoint: Ollama, OpenRouter, vLLM, LM Studio (base URL + model + key)."""

from __future__ import annotations

from collections.abc import Mapping

from adapters.llm.openai import OpenAIProvider
from agent.config.schema import ModelPrice


class CompatProvider(OpenAIProvider):
    """The OpenAI wire format at another base URL.

    Args:
        base_url: e.g. http://localhost:11434/v1 (Ollama), https://openrouter.ai/api/v1.
        model: the server's model name (llama3.1, qwen2.5:7b, ...).
        api_key: local servers ignore it, but the SDK needs a value.
        json_mode: `json_schema` where the server supports it, else `json_object`.
        prices, timeout, context_window: as for OpenAIProvider.
    """

    name = "compat"

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str = "not-needed",
        json_mode: str = "json_schema",
        prices: Mapping[str, ModelPrice] | None = None,
        timeout: float = 60.0,
        context_window: int | None = None,
    ):
        super().__init__(api_key, model, base_url, prices, timeout, context_window)
        self.json_mode = json_mode
        self.capabilities.json_schema = json_mode == "json_schema"
        self.capabilities.streaming = False
