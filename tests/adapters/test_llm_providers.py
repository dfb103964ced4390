"""The real openai and anthropic SDKs against the stand-in server: wire formats, errors, retries."""

from __future__ import annotations

from typing import Any

import pytest

from adapters.llm.anthropic import AnthropicProvider
from adapters.llm.compat import CompatProvider
from adapters.llm.openai import OpenAIProvider
from adapters.llm.retry import RetryingProvider
from agent.config.schema import ModelPrice, RetrySettings
from agent.errors import (
    ProviderAuthError,
    ProviderBadRequest,
    ProviderError,
    ProviderRateLimited,
    ProviderTimeout,
    ProviderUnavailable,
)
from agent.llm.models import LLMRequest
from agent.llm.provider import LLMProvider
from tests.standins.llm_server import Reply, StandInLLM

PRICES = {"m-1": ModelPrice(input=1.0, output=2.0)}
FAST = RetrySettings(max_attempts=3, base_delay=0.01, max_delay=0.05, retry_after_cap=5)
TOOL = {
    "name": "check_order_status",
    "description": "Look up an order",
    "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}}, "required": ["order_id"]},
}
SCHEMA = {"name": "classification", "schema": {"type": "object", "properties": {"intent_id": {"type": "string"}}}}


def make(kind: str, server: StandInLLM, timeout: float = 5.0) -> Any:
    if kind == "openai":
        return OpenAIProvider("sk-test", "m-1", server.openai_url, PRICES, timeout=timeout)
    if kind == "anthropic":
        return AnthropicProvider("ak-test", "m-1", server.anthropic_url, PRICES, timeout=timeout)
    return CompatProvider(server.openai_url, "m-1", prices=PRICES, timeout=timeout)


KINDS = ["openai", "anthropic", "compat"]


@pytest.mark.parametrize("kind", KINDS)
async def test_tool_calls_come_back_parsed_with_usage_and_cost(kind: str, llm_server: StandInLLM) -> None:
    llm_server.queue.append(Reply(tool_calls=[("check_order_status", {"order_id": "O-12345"})]))
    provider = make(kind, llm_server)
    try:
        r = await provider.generate(
            LLMRequest([{"role": "system", "content": "be brief"}, {"role": "user", "content": "hi"}], tools=[TOOL])
        )
    finally:
        await provider.aclose()
    assert [(c.name, c.arguments) for c in r.tool_calls] == [("check_order_status", {"order_id": "O-12345"})]
    assert (r.tokens_in, r.tokens_out, r.model) == (120, 30, "m-1")
    assert r.cost == pytest.approx((120 * 1.0 + 30 * 2.0) / 1e6)
    seen = llm_server.seen[0]
    if kind == "anthropic":
        # The stable prefix (system prompt, tool specs) is marked for Anthropic's prompt cache.
        cached = {"type": "ephemeral"}
        assert seen.path == "/v1/messages"
        assert seen.body["system"] == [{"type": "text", "text": "be brief", "cache_control": cached}]
        assert seen.body["tools"][0]["input_schema"]["required"] == ["order_id"]
        assert seen.body["tools"][-1]["cache_control"] == cached
    else:
        assert seen.path == "/v1/chat/completions"
        assert seen.body["tools"][0]["function"]["name"] == "check_order_status"


@pytest.mark.parametrize("kind", KINDS)
async def test_structured_output_is_one_json_object(kind: str, llm_server: StandInLLM) -> None:
    llm_server.queue.append(Reply(text='{"intent_id": "order_status"}'))
    provider = make(kind, llm_server)
    try:
        r = await provider.generate(
            LLMRequest([{"role": "user", "content": "where is my parcel"}], response_format=SCHEMA)
        )
    finally:
        await provider.aclose()
    assert r.content is not None and '"order_status"' in r.content
    body = llm_server.seen[0].body
    if kind == "anthropic":
        assert body["tool_choice"] == {"type": "tool", "name": "classification"}
    else:
        assert body["response_format"]["type"] == "json_schema"
    if kind == "openai":
        assert body["response_format"]["json_schema"]["strict"] is True  # schema guaranteed by the API


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
async def test_cached_prompt_tokens_are_priced_at_the_cache_rate(kind: str, llm_server: StandInLLM) -> None:
    llm_server.cached = 100  # of the 120 prompt tokens, 100 came from the provider's cache
    provider = make(kind, llm_server)
    try:
        r = await provider.generate(LLMRequest([{"role": "user", "content": "hi"}]))
    finally:
        await provider.aclose()
    share = 0.1 if kind == "anthropic" else 0.5  # Anthropic cache reads, OpenAI cache hits
    assert (r.tokens_in, r.cached_tokens) == (120, 100)
    assert r.cost == pytest.approx((20 * 1.0 + 100 * 1.0 * share + 30 * 2.0) / 1e6)


async def test_tool_results_round_trip_in_each_wire_format(llm_server: StandInLLM) -> None:
    history = [
        {"role": "user", "content": "where is O-12345"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [{"id": "c1", "name": "check_order_status", "arguments": {"order_id": "O-12345"}}],
        },
        {"role": "tool", "tool_call_id": "c1", "content": '{"success": true, "data": {"status": "shipped"}}'},
    ]
    for kind in ("openai", "anthropic"):
        provider = make(kind, llm_server)
        try:
            await provider.generate(LLMRequest(history, tools=[TOOL]))
        finally:
            await provider.aclose()
    openai_body, anthropic_body = llm_server.seen[0].body, llm_server.seen[1].body
    assert openai_body["messages"][1]["tool_calls"][0]["function"]["arguments"] == '{"order_id": "O-12345"}'
    assert openai_body["messages"][2] == {
        "role": "tool",
        "tool_call_id": "c1",
        "content": '{"success": true, "data": {"status": "shipped"}}',
    }
    assert anthropic_body["messages"][1]["content"][0] == {
        "type": "tool_use",
        "id": "c1",
        "name": "check_order_status",
        "input": {"order_id": "O-12345"},
    }
    assert anthropic_body["messages"][2]["content"][0]["type"] == "tool_result"


async def test_malformed_openai_tool_arguments_are_reported_not_raised(llm_server: StandInLLM) -> None:
    llm_server.queue.append(Reply(tool_calls=[("check_order_status", '{"order_id": "O-123')]))
    provider = make("compat", llm_server)
    try:
        r = await provider.generate(LLMRequest([{"role": "user", "content": "x"}], tools=[TOOL]))
    finally:
        await provider.aclose()
    assert r.tool_calls[0].arguments == {}
    assert r.tool_calls[0].invalid_arguments == '{"order_id": "O-123'


async def test_anthropic_always_sends_the_given_key(llm_server: StandInLLM, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "from-the-environment")
    provider = make("anthropic", llm_server)
    try:
        await provider.generate(LLMRequest([{"role": "user", "content": "hi"}]))
    finally:
        await provider.aclose()
    headers = llm_server.seen[0].headers
    assert "ak-test" in (headers.get("x-api-key", "") + headers.get("authorization", ""))
    assert "from-the-environment" not in str(headers)


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
async def test_429_with_retry_after_1_is_retried_once_after_about_a_second(kind: str, llm_server: StandInLLM) -> None:
    llm_server.queue.append(Reply(status=429, headers={"retry-after": "1"}))
    provider = RetryingProvider(make(kind, llm_server), RetrySettings(max_attempts=3, base_delay=0.01))
    try:
        r = await provider.generate(LLMRequest([{"role": "user", "content": "where is my parcel O-12345"}]))
    finally:
        await provider.aclose()
    assert (r.attempts, r.retry_delays) == (2, [1.0])
    assert len(llm_server.seen) == 2
    # It honoured Retry-After (no upper bound: a loaded machine may wake it late, which is no fault).
    assert llm_server.seen[1].at - llm_server.seen[0].at >= 0.95


@pytest.mark.parametrize(
    ("kind", "status", "error"),
    [
        ("openai", 500, ProviderUnavailable),
        ("anthropic", 529, ProviderUnavailable),
        ("openai", 429, ProviderRateLimited),
    ],
)
async def test_server_errors_are_retried_up_to_max_attempts(
    kind: str, status: int, error: type[ProviderError], llm_server: StandInLLM
) -> None:
    llm_server.queue += [Reply(status=status)] * 3
    provider = RetryingProvider(make(kind, llm_server), FAST)
    with pytest.raises(error) as caught:
        await provider.generate(LLMRequest([{"role": "user", "content": "hi"}]))
    await provider.aclose()
    assert caught.value.retryable and caught.value.status == status
    assert caught.value.attempts == 3 and len(caught.value.retry_delays) == 2
    assert all(0 <= d <= FAST.max_delay for d in caught.value.retry_delays)
    assert len(llm_server.seen) == 3


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
async def test_401_is_not_retried(kind: str, llm_server: StandInLLM) -> None:
    llm_server.queue += [Reply(status=401)] * 3
    provider = RetryingProvider(make(kind, llm_server), FAST)
    with pytest.raises(ProviderAuthError) as caught:
        await provider.generate(LLMRequest([{"role": "user", "content": "hi"}]))
    await provider.aclose()
    assert (caught.value.attempts, caught.value.kind, len(llm_server.seen)) == (1, "auth", 1)
    assert isinstance(caught.value.__cause__, Exception)  # the SDK error is chained, not leaked


async def test_retry_after_beyond_the_cap_is_not_waited_for(llm_server: StandInLLM) -> None:
    llm_server.queue += [Reply(status=429, headers={"retry-after": "600"})]
    provider = RetryingProvider(make("openai", llm_server), FAST)
    with pytest.raises(ProviderRateLimited) as caught:
        await provider.generate(LLMRequest([{"role": "user", "content": "hi"}]))
    await provider.aclose()
    assert caught.value.retry_after == 600 and caught.value.attempts == 1


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
async def test_a_slow_response_times_out_and_is_retried(kind: str, llm_server: StandInLLM) -> None:
    llm_server.queue += [Reply(delay=1.0, text="late"), Reply(text="on time")]
    provider: LLMProvider = RetryingProvider(make(kind, llm_server, timeout=0.3), FAST)
    r = await provider.generate(LLMRequest([{"role": "user", "content": "hi"}]))
    await provider.aclose()  # type: ignore[attr-defined]
    assert r.content == "on time" and r.attempts == 2


async def test_a_timeout_on_every_attempt_is_a_provider_timeout(llm_server: StandInLLM) -> None:
    llm_server.queue += [Reply(delay=0.6, text="late")] * 2
    provider = RetryingProvider(make("openai", llm_server, timeout=0.2), FAST.model_copy(update={"max_attempts": 2}))
    with pytest.raises(ProviderTimeout) as caught:
        await provider.generate(LLMRequest([{"role": "user", "content": "hi"}]))
    await provider.aclose()
    assert caught.value.attempts == 2


async def test_fallback_models_answer_when_the_main_one_is_down(llm_server: StandInLLM) -> None:
    from adapters.llm.registry import ProviderAccess, build_llm
    from agent.config.schema import LLMSettings

    settings = LLMSettings(model="m-1", fallback_models=["m-2"], prices=PRICES, retry=FAST, timeout_seconds=5)
    llm_server.queue += [Reply(status=503)] * 3  # m-1: three attempts, all overloaded
    llm_server.queue.append(Reply(text="hello from the fallback"))
    provider = build_llm(settings, ProviderAccess(openai_api_key="sk-test", openai_base_url=llm_server.openai_url))
    try:
        r = await provider.generate(LLMRequest([{"role": "user", "content": "hi"}]))
        # A bad request is not an outage: the fallback model is not tried.
        llm_server.queue.append(Reply(status=400))
        with pytest.raises(ProviderBadRequest):
            await provider.generate(LLMRequest([{"role": "user", "content": "hi"}]))
    finally:
        await provider.aclose()  # type: ignore[attr-defined]
    assert r.content == "hello from the fallback" and r.model == "m-2" and r.attempts == 4
    assert [s.body["model"] for s in llm_server.seen] == ["m-1", "m-1", "m-1", "m-2", "m-1"]
