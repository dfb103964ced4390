"""The provider registry: picks the configured LLM provider by name, importing only its SDK."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from agent.config.schema import LLMSettings
from agent.errors import ConfigError
from agent.interfaces import LLMProvider

if TYPE_CHECKING:
    from adapters.llm.retry import AttemptObserver

PROVIDERS = ("openai", "anthropic", "compat")


def _need(env: Mapping[str, str], name: str) -> str:
    value = env.get(name)
    if not value:
        raise ConfigError("environment", "not set; the chosen LLM provider needs it", field=name)
    return value


def build_llm(settings: LLMSettings, env: Mapping[str, str], observer: AttemptObserver | None = None) -> LLMProvider:
    """The configured provider inside the one retry layer, then `llm.fallback_models` in order
    (each with its own retries). Only the chosen SDK is imported.

    Args:
        settings: the `llm:` section of settings.
        env: where API keys and base URLs are read.
        observer: sees every HTTP attempt of every retry layer (the OpenTelemetry tracer), or None.
    """
    if not settings.fallback_models:
        return _build_one(settings, env, observer)
    from adapters.llm.fallback import FallbackProvider

    models = [settings.model, *settings.fallback_models]
    return FallbackProvider([_build_one(settings.model_copy(update={"model": m}), env, observer) for m in models])


def _build_one(settings: LLMSettings, env: Mapping[str, str], observer: AttemptObserver | None) -> LLMProvider:
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
    return RetryingProvider(provider, settings.retry, observer=observer)
