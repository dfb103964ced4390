"""OpenAI chat completions (tools, `json_schema` output) through the official SDK.

The SDK runs with `max_retries=0` (adapters/llm/retry.py owns retries) and every SDK exception is
translated here into agent/errors.py's ProviderError tree.
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
    import openai
except ImportError as e:  # pragma: no cover - depends on the installed extras
    raise ImportError("The OpenAI provider needs the openai package: pip install 'agentbot[openai]'") from e


def to_openai_messages(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Provider-neutral messages as chat-completions messages (tool arguments become JSON text)."""
    out: list[dict[str, Any]] = []
    for m in messages:
        if m["role"] == "assistant" and m.get("tool_calls"):
            out.append(
                {
                    "role": "assistant",
                    "content": m.get("content") or None,
                    "tool_calls": [
                        {
                            "id": c["id"],
                            "type": "function",
                            "function": {"name": c["name"], "arguments": json.dumps(c["arguments"])},
                        }
                        for c in m["tool_calls"]
                    ],
                }
            )
        elif m["role"] == "tool":
            out.append({"role": "tool", "tool_call_id": m["tool_call_id"], "content": m["content"]})
        else:
            out.append({"role": m["role"], "content": m.get("content") or ""})
    return out


def parse_arguments(raw: str | None) -> tuple[dict[str, Any], str | None]:
    """Tool-call arguments arrive as JSON text, sometimes not valid JSON: (arguments, invalid raw text)."""
    if not raw or not raw.strip():
        return {}, None
    try:
        value = json.loads(raw)
    except ValueError:
        return {}, raw
    return (value, None) if isinstance(value, dict) else ({}, raw)


class OpenAIProvider(SDKProvider):
    """
    Args:
        api_key: the key (from OPENAI_API_KEY, read at the composition root).
        model: e.g. gpt-4o-mini.
        base_url: ends in /v1; None for api.openai.com.
        prices: model -> dollars per million tokens (settings `llm.prices`).
        timeout: seconds per HTTP attempt.
        context_window: overrides the model's known window.
    """

    name = "openai"
    json_mode = "json_schema"  # compat servers may only know "json_object"

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
        self.client = openai.AsyncOpenAI(api_key=api_key, base_url=base_url, max_retries=0, timeout=timeout)

    def _response_format(self, response_format: dict[str, Any]) -> dict[str, Any]:
        if self.json_mode == "json_object":
            return {"type": "json_object"}
        return {
            "type": "json_schema",
            # strict: the API guarantees the schema (every property required, no others).
            "json_schema": {"name": response_format["name"], "schema": response_format["schema"], "strict": True},
        }

    async def generate(self, request: LLMRequest) -> LLMResponse:
        chat = to_openai_messages(request.messages)
        kwargs: dict[str, Any] = {"model": self.model, "messages": chat, "temperature": request.temperature}
        if request.max_tokens:
            kwargs["max_tokens"] = request.max_tokens
        if request.tools:
            kwargs["tools"] = [{"type": "function", "function": t} for t in request.tools]
        if response_format := request.response_format:
            kwargs["response_format"] = self._response_format(response_format)
            if self.json_mode == "json_object":
                schema = json.dumps(response_format["schema"])
                chat.append({"role": "system", "content": f"Reply with one JSON object matching: {schema}"})
        started = time.perf_counter()
        try:
            completion = await self.client.chat.completions.create(**kwargs)
        except openai.APITimeoutError as e:
            raise ProviderTimeout(f"{self.name}: request timed out") from e
        except openai.APIConnectionError as e:
            raise ProviderConnectionError(f"{self.name}: cannot connect ({e})") from e
        except openai.APIStatusError as e:
            raise from_status(
                e.status_code, f"{self.name}: HTTP {e.status_code}: {e.message}", e.response.headers
            ) from e
        except openai.OpenAIError as e:
            raise ProviderError(f"{self.name}: {e}") from e
        latency = (time.perf_counter() - started) * 1000
        if not completion.choices:
            raise ProviderOutputInvalid(f"{self.name}: the response has no choices")
        message = completion.choices[0].message
        calls = []
        for c in message.tool_calls or []:
            fn = getattr(c, "function", None)
            if fn is None:
                continue
            arguments, invalid = parse_arguments(fn.arguments)
            calls.append(LLMToolCall(id=c.id, name=fn.name, arguments=arguments, invalid_arguments=invalid))
        usage = completion.usage
        tokens_in = usage.prompt_tokens if usage else 0
        tokens_out = usage.completion_tokens if usage else 0
        details = getattr(usage, "prompt_tokens_details", None) if usage else None
        cached = int(getattr(details, "cached_tokens", 0) or 0)
        return LLMResponse(
            content=message.content,
            tool_calls=calls,
            model=completion.model or self.model,
            tokens_in=tokens_in,
            tokens_out=tokens_out,
            latency_ms=latency,
            cached_tokens=cached,
            cost=self.get_cost(tokens_in, tokens_out, cached_in=cached),
        )
