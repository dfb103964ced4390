"""The LLM half of the composition root: providers, the retry layer, llm and cascade understanding.

Imported only when `understanding` is `llm` or `cascade`, so rules mode never loads an LLM SDK.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING

from pydantic import SecretStr

from adapters.llm.registry import ProviderAccess, build_llm
from agent.config.schema import BotConfig, LLMSettings
from agent.context.output import AlertNotifier
from agent.llm.breaker import CircuitBreaker
from agent.llm.calls import LLMCalls
from agent.llm.provider import LLMProvider
from agent.llm.spend import DailyBudget
from agent.planners.base import Planner
from agent.planners.llm_agent import LLMAgent
from agent.storage import SpendLedger
from agent.tools.gateway import ToolGateway
from bots.metrics import PrometheusMetrics
from bots.settings import DeploySettings, LLMVariables, run_settings
from bots.wiring import resolve_dir

if TYPE_CHECKING:  # the SDK is imported only when tracing is on
    from adapters.telemetry.otel import OTelTracer


def observed_provider(provider: LLMProvider, tracer: OTelTracer | None, settings: LLMSettings) -> LLMProvider:
    """A span per call when tracing is on (LLMCalls counts each call and its attempts toward the
    turn's usage); the retry layers `build_llm` made add a span per HTTP attempt inside it."""
    if tracer is None:
        return provider
    from adapters.telemetry.traced import TracedProvider

    return TracedProvider(provider, tracer, settings.provider, settings.context_window)


def provider_access(variables: LLMVariables) -> ProviderAccess:
    """The providers' keys and addresses from the environment's settings, for the adapters."""

    def secret(value: SecretStr | None) -> str | None:
        return value.get_secret_value() if value is not None else None

    return ProviderAccess(
        openai_api_key=secret(variables.openai_api_key),
        openai_base_url=variables.openai_base_url,
        anthropic_api_key=secret(variables.anthropic_api_key),
        anthropic_base_url=variables.anthropic_base_url,
        compat_base_url=variables.compat_base_url,
        compat_api_key=secret(variables.compat_api_key),
        compat_json_mode=variables.compat_json_mode,
    )


def llm_calls(
    settings: LLMSettings,
    variables: LLMVariables,
    *,
    llm: LLMProvider | None = None,
    tracer: OTelTracer | None = None,
    alerts: AlertNotifier | None = None,
    spend: SpendLedger | None = None,
    metrics: PrometheusMetrics | None = None,
) -> tuple[LLMCalls, list[Callable[[], Awaitable[None]]]]:
    """The LLM behind its budget, circuit breaker and spans, and what to close with the router."""
    model_api = llm or build_llm(settings, provider_access(variables), observer=tracer)
    closers: list[Callable[[], Awaitable[None]]] = [model_api.aclose]
    model_api = observed_provider(model_api, tracer, settings)
    budget = DailyBudget(settings.daily_budget_per_customer, settings.daily_budget_per_channel, spend)
    breaker = CircuitBreaker(settings.provider, settings.breaker.failures, settings.breaker.cooldown_seconds)
    if metrics is not None:
        metrics.watch(breaker)
    return LLMCalls(model_api, settings, budget, alerts, breaker), closers


def llm_agents(
    calls: LLMCalls,
    settings: LLMSettings,
    config: BotConfig,
    planners: Mapping[str, Planner],
    gateway: ToolGateway,
    *,
    currency: str = "$",
) -> dict[str, Planner]:
    """The LLM agents of `llm` mode: one per agent with a constitution, wrapping that agent's own
    planner (`planners`, one per agent in agents.yaml) for its questions, confirmations, goal
    lifetime and every fallback. `currency`: the store's sign, for the model to write amounts in."""
    return {
        name: LLMAgent(
            name,
            agent.constitution,
            calls,
            gateway.schemas(name),
            planners[name],
            config.settings.max_agent_passes,
            gateway.needing_approval(),  # the product words the exact action for the user's yes
            settings.phrase_answers,
            currency,
            config.intents.messages.too_complex,
        )
        for name, agent in config.agents.agents.items()
        if agent.constitution
    }


def configured_provider(
    deploy: DeploySettings, config_dir: str | None = None, provider: str | None = None, model: str | None = None
) -> LLMProvider:
    """The LLM settings' provider, outside a router: for the eval judge and for recording."""
    settings = run_settings(resolve_dir(config_dir, "config", deploy), deploy, provider=provider, model=model).llm
    return build_llm(settings, provider_access(deploy.llm))
