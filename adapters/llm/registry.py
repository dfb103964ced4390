"""The provider registry: picks the configured LLM provider by name, importing only its SDK."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from agent.config.schema import LLMSettings
from agent.errors import ConfigError
from agent.llm.provider import LLMProvider

if TYPE_CHECKING:
    from adapters.llm.retry import AttemptObserver

PROVIDERS = ("openai", "anthropic", "compat")


@dataclass(frozen=True)
class ProviderAccess:
    """The providers' keys and addresses, as the composition root read them (bots/settings.py);
    None: not set. Keys never print."""

    openai_api_key: str | None = field(default=None, repr=False)
    openai_base_url: str | None = None
    anthropic_api_key: str | None = field(default=None, repr=False)
    anthropic_base_url: str | None = None
    compat_base_url: str | None = None
    compat_api_key: str | None = field(default=None, repr=False)
    compat_json_mode: str = "json_schema"


def _need(value: str | None, name: str) -> str:
    if not value:
        raise ConfigError("environment", "not set; the chosen LLM provider needs it", field=name)
    return value


def build_llm(settings: LLMSettings, access: ProviderAccess, observer: AttemptObserver | None = None) -> LLMProvider:
    """The configured provider inside the one retry layer, then `llm.fallback_models` in order
    (each with its own retries). Only the chosen SDK is imported.

    Args:
        settings: the `llm:` section of settings.
        access: the providers' API keys and base URLs.
        observer: sees every HTTP attempt of every retry layer (the OpenTelemetry tracer), or None.
    """
    if not settings.fallback_models:
        return _build_one(settings, access, observer)
    from adapters.llm.fallback import FallbackProvider

    models = [settings.model, *settings.fallback_models]
    return FallbackProvider([_build_one(settings.model_copy(update={"model": m}), access, observer) for m in models])


def _build_one(settings: LLMSettings, access: ProviderAccess, observer: AttemptObserver | None) -> LLMProvider:
    from adapters.llm.retry import RetryingProvider

    common: dict[str, Any] = {
        "prices": settings.prices,
        "timeout": settings.timeout_seconds,
        "context_window": settings.context_window,
    }
    provider: LLMProvider
    if settings.provider == "openai":
        from adapters.llm.openai import OpenAIProvider

        provider = OpenAIProvider(
            _need(access.openai_api_key, "OPENAI_API_KEY"), settings.model, access.openai_base_url, **common
        )
    elif settings.provider == "anthropic":
        from adapters.llm.anthropic import AnthropicProvider

        provider = AnthropicProvider(
            _need(access.anthropic_api_key, "ANTHROPIC_API_KEY"), settings.model, access.anthropic_base_url, **common
        )
    elif settings.provider == "compat":
        from adapters.llm.compat import CompatProvider

        provider = CompatProvider(
            _need(access.compat_base_url, "AGENTBOT_COMPAT_BASE_URL"),
            settings.model,
            access.compat_api_key or "not-needed",
            access.compat_json_mode,
            **common,
        )
    else:
        raise ConfigError(
            "settings.yaml",
            f"unknown LLM provider {settings.provider!r}; choose one of {', '.join(PROVIDERS)}",
            field="llm.provider",
        )
    return RetryingProvider(provider, settings.retry, observer=observer)
