"""The LLM half of the composition root: providers, the retry layer, llm and cascade understanding.

Imported only when `understanding` is `llm` or `cascade`, so rules mode never loads an LLM SDK.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from agent.config import BotConfig, LLMSettings
from agent.errors import ConfigError
from agent.interfaces import AlertNotifier, Classifier, LLMProvider, Planner, Tracer
from agent.llm.budget import DailyBudget
from agent.llm.calls import LLMCalls
from agent.tools.gateway import ToolGateway
from agent.understanding.llm import CascadeClassifier, LLMClassifier
from agent.understanding.llm_agent import LLMAgent
from agent.understanding.planner import TemplatePlanner
from agent.understanding.rules import RulesClassifier

PROVIDERS = ("openai", "anthropic", "compat")
# Money-moving and destructive tools: an LLM agent asks before it requests them.
CONFIRM_TOOLS = frozenset({"issue_refund", "delete_task"})


def _need(env: Mapping[str, str], name: str) -> str:
    value = env.get(name)
    if not value:
        raise ConfigError("environment", "not set; the chosen LLM provider needs it", field=name)
    return value


def build_llm(settings: LLMSettings, env: Mapping[str, str]) -> LLMProvider:
    """The configured provider inside the one retry layer. Only the chosen SDK is imported."""
    from adapters.llm.retry import RetryingProvider

    common: dict[str, Any] = {
        "prices": settings.prices,
        "timeout": settings.timeout_seconds,
        "context_window": settings.context_window,
    }
    provider: LLMProvider
    if settings.provider == "openai":
        from adapters.llm.openai import OpenAIProvider

        provider = OpenAIProvider(_need(env, "OPENAI_API_KEY"), settings.model, env.get("OPENAI_BASE_URL"), **common)
    elif settings.provider == "anthropic":
        from adapters.llm.anthropic import AnthropicProvider

        provider = AnthropicProvider(
            _need(env, "ANTHROPIC_API_KEY"), settings.model, env.get("ANTHROPIC_BASE_URL"), **common
        )
    elif settings.provider == "compat":
        from adapters.llm.compat import CompatProvider

        provider = CompatProvider(
            _need(env, "AGENTBOT_COMPAT_BASE_URL"),
            settings.model,
            env.get("AGENTBOT_COMPAT_API_KEY") or "not-needed",
            env.get("AGENTBOT_COMPAT_JSON_MODE") or "json_schema",
            **common,
        )
    else:
        raise ConfigError(
            "settings.yaml",
            f"unknown LLM provider {settings.provider!r}; choose one of {', '.join(PROVIDERS)}",
            field="llm.provider",
        )
    return RetryingProvider(provider, settings.retry)


def observed_provider(provider: LLMProvider, tracer: Tracer | None, settings: LLMSettings) -> LLMProvider:
    """Every call counted toward the turn's usage, and a span per call when tracing is on."""
    from agent.observe import MeteredProvider

    if tracer is not None:
        from adapters.telemetry.otel import OTelTracer, TracedProvider

        if isinstance(tracer, OTelTracer):
            provider = TracedProvider(provider, tracer, settings.provider, settings.context_window)
    return MeteredProvider(provider)


def llm_understanding(
    mode: str,
    settings: LLMSettings,
    config: BotConfig,
    rules: RulesClassifier,
    templates: TemplatePlanner,
    gateway: ToolGateway,
    env: Mapping[str, str],
    *,
    llm: LLMProvider | None = None,
    tracer: Tracer | None = None,
    alerts: AlertNotifier | None = None,
) -> tuple[Classifier, dict[str, Planner] | None, list[Callable[[], Awaitable[None]]]]:
    """The classifier for `llm`/`cascade`, the LLM agents for `llm` (None: keep the rules agents),
    and what to close with the router."""
    model_api = llm or build_llm(settings, env)
    closers = [model_api.aclose] if hasattr(model_api, "aclose") else []
    model_api = observed_provider(model_api, tracer, settings)
    budget = DailyBudget(settings.daily_budget_per_customer, settings.daily_budget_per_channel)
    calls = LLMCalls(model_api, settings, budget, alerts)
    understand = LLMClassifier(calls, rules)
    if mode == "cascade":
        return CascadeClassifier(rules, understand, settings.cascade_threshold), None, closers
    agents: dict[str, Planner] = {
        name: LLMAgent(
            name,
            agent.constitution,
            calls,
            gateway.schemas(name),
            templates,
            config.settings.max_agent_passes,
            CONFIRM_TOOLS,
            settings.phrase_answers,
        )
        for name, agent in config.agents.agents.items()
        if agent.constitution
    }
    return understand, agents, closers


def configured_provider(
    env: Mapping[str, str], config_dir: str | None = None, provider: str | None = None, model: str | None = None
) -> LLMProvider:
    """The LLM settings' provider, outside a router: for the eval judge and for recording."""
    from agent.config import load_config
    from bots.compose import resolve_dir

    settings = load_config(resolve_dir(config_dir, "config")).settings.llm
    overrides = {k: v for k, v in (("provider", provider), ("model", model)) if v}
    return build_llm(settings.model_copy(update=overrides), env)
