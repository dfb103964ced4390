"""Anthropic messages (tools; structured output as a forced tool call) through the official SDK.

The SDK runs with `max_retries=0` (adapters/llm/retry.py owns retries) and is always given
`api_key`, so it never reads credentials from the environment or profile files on its own.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from typing import Any

from adapters.llm.base import SDKProvider, from_status
from agent.config.schema import ModelPrice
from agent.errors import ProviderConnectionError, ProviderError, ProviderOutputInvalid, ProviderTimeout
from agent.llm.models import LLMRequest, LLMResponse, LLMToolCall

try:
    import anthropic
except ImportError as e:  # pragma: no cover - depends on the installed extras
    raise ImportError("The Anthropic provider needs the anthropic package: pip install 'agentbot[anthropic]'") from e


def to_anthropic(messages: list[dict[str, Any]]) -> tuple[str, list[dict[str, Any]]]:
    """Provider-neutral messages as (system prompt, alternating user/assistant messages)."""
    system: list[str] = []
    out: list[dict[str, Any]] = []

    def add(role: str, blocks: list[dict[str, Any]]) -> None:
        if out and out[-1]["role"] == role:
            out[-1]["content"].extend(blocks)  # the API wants roles to alternate
        else:
            out.append({"role": role, "content": blocks})

    for m in messages:
        role, text = m["role"], m.get("content") or ""
        if role == "system":
            system.append(text)
        elif role == "tool":
            add("user", [{"type": "tool_result", "tool_use_id": m["tool_call_id"], "content": text}])
        elif role == "assistant":
            blocks: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
            blocks += [
                {"type": "tool_use", "id": c["id"], "name": c["name"], "input": c["arguments"]}
                for c in m.get("tool_calls") or []
            ]
            if blocks:
                add("assistant", blocks)
        else:
            add("user", [{"type": "text", "text": text}])
    return "\n\n".join(system), out


class AnthropicProvider(SDKProvider):
    """
    Args:
        api_key: the key (from ANTHROPIC_API_KEY, read at the composition root).
        model: e.g. claude-3-5-haiku-latest.
        base_url: without /v1 (the SDK adds /v1/messages); None for api.anthropic.com.
        prices: model -> dollars per million tokens.
        timeout: seconds per HTTP attempt.
        context_window: overrides the model's known window.
    """

    name = "anthropic"
    cached_share = 0.1  # cache reads
    cache_write_share = 1.25  # 5-minute cache writes

    def __init__(
        self,
        api_key: str,
        model: str,
        base_url: str | None = None,
        prices: Mapping[str, ModelPrice] | None = None,
        timeout: float = 30.0,
        context_window: int | None = None,
    ):
        self.configure(model, prices, context_window)
        self.client = anthropic.AsyncAnthropic(api_key=api_key, base_url=base_url, max_retries=0, timeout=timeout)

    def _create_args(self, request: LLMRequest) -> dict[str, Any]:
        """The request in the Messages API's terms."""
        system, chat = to_anthropic(request.messages)
        response_format = request.response_format
        kwargs: dict[str, Any] = {
            "model": self.model,
            "messages": chat,
            "max_tokens": request.max_tokens or 1024,
        }
        # anthropic 2.x's messages.create takes no `temperature`; the model's default applies.
        if system:
            # The system prompt and the tool specs are the stable prefix of every call of an agent:
            # marked for Anthropic's prompt cache (tools come first in the prefix, then the system).
            kwargs["system"] = [{"type": "text", "text": system, "cache_control": {"type": "ephemeral"}}]
        specs = [
            {"name": t["name"], "description": t.get("description", ""), "input_schema": t["parameters"]}
            for t in request.tools or []
        ]
        if response_format:
            # Anthropic has no JSON mode: one forced tool whose input is the object asked for.
            name = response_format["name"]
            specs.append({"name": name, "description": "Record the answer.", "input_schema": response_format["schema"]})
            kwargs["tool_choice"] = {"type": "tool", "name": name}
        if specs:
            specs[-1] = {**specs[-1], "cache_control": {"type": "ephemeral"}}
            kwargs["tools"] = specs
        return kwargs

    async def generate(self, request: LLMRequest) -> LLMResponse:
        kwargs = self._create_args(request)
        started = time.perf_counter()
        try:
            message = await self.client.messages.create(**kwargs)
        except anthropic.APITimeoutError as e:
            raise ProviderTimeout(f"{self.name}: request timed out") from e
        except anthropic.APIConnectionError as e:
            raise ProviderConnectionError(f"{self.name}: cannot connect ({e})") from e
        except anthropic.APIStatusError as e:
            raise from_status(
                e.status_code, f"{self.name}: HTTP {e.status_code}: {e.message}", e.response.headers
            ) from e
        except anthropic.AnthropicError as e:
            raise ProviderError(f"{self.name}: {e}") from e
        return self._response(message, request.response_format, (time.perf_counter() - started) * 1000)

    def _response(self, message: Any, response_format: dict[str, Any] | None, latency: float) -> LLMResponse:
        """The SDK's message in provider-neutral form; a forced answer tool's input becomes the content."""
        texts: list[str] = []
        calls: list[LLMToolCall] = []
        for block in message.content:
            if block.type == "text":
                texts.append(block.text)
            elif block.type == "tool_use":
                if response_format and block.name == response_format["name"]:
                    texts = [json.dumps(block.input)]
                    continue
                arguments = block.input if isinstance(block.input, dict) else {}
                invalid = None if isinstance(block.input, dict) else json.dumps(block.input)
                calls.append(LLMToolCall(id=block.id, name=block.name, arguments=arguments, invalid_arguments=invalid))
        if response_format and not texts:
            raise ProviderOutputInvalid(f"{self.name}: no structured answer in the response")
        usage = message.usage
        read = int(getattr(usage, "cache_read_input_tokens", 0) or 0)
        written = int(getattr(usage, "cache_creation_input_tokens", 0) or 0)
        # Anthropic's input_tokens leaves out the cached ones; agentbot counts every prompt token.
        tokens_in, tokens_out = usage.input_tokens + read + written, usage.output_tokens
        return LLMResponse(
            content="".join(texts) or None,
            tool_calls=calls,
            model=message.model or self.model,
            tokens_in=tokens_in,
            tokens_out=tokens_out,
            latency_ms=latency,
            cached_tokens=read,
            cost=self.get_cost(tokens_in, tokens_out, cached_in=read, cache_write=written),
        )
