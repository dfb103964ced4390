"""The composition root: reads config and environment once and wires a router."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from adapters.data.json_source import JSONDataSource
from adapters.storage.sql import SqlStore
from adapters.telemetry.sinks import LogSink
from agent.config import BotConfig, LLMSettings, load_config
from agent.errors import ConfigError
from agent.intents import IntentsRegistry
from agent.interfaces import AlertNotifier, Classifier, DataSource, LLMProvider, Planner, SessionStore, TelemetrySink
from agent.llm.budget import DailyBudget
from agent.llm.calls import LLMCalls
from agent.policy import AllowAllPolicy
from agent.router import AgentRouter, RouterParts
from agent.tools.gateway import ToolGateway
from agent.tools.support import support_tools
from agent.understanding.llm import CascadeClassifier, LLMClassifier
from agent.understanding.llm_agent import LLMAgent
from agent.understanding.planner import TemplatePlanner
from agent.understanding.rules import RulesClassifier

REPO = Path(__file__).resolve().parent.parent
UNDERSTANDING_MODES = ("rules", "llm", "cascade")
PROVIDERS = ("openai", "anthropic", "compat")
# Tools an LLM agent may only request after the user said yes.
CONFIRM_TOOLS = frozenset({"issue_refund", "delete_task"})


def resolve_dir(path: str | Path | None, default: str) -> Path:
    """An explicit path as given; otherwise `./<default>`, falling back to the one shipped in the repo."""
    if path is not None:
        return Path(path)
    local = Path(default)
    return local if local.is_dir() else REPO / default


def check_tools(config: BotConfig, gateway: ToolGateway) -> None:
    """Every tool an agent or intent names must exist, and an intent's tool must be its agent's."""
    file = str(Path(config.directory) / "agents.yaml")
    for name, agent in config.agents.agents.items():
        for tool in agent.tools:
            if tool not in gateway.tools:
                raise ConfigError(file, f"unknown tool {tool!r}", field=f"agents.{name}.tools")
    for i, spec in enumerate(config.intents.intents):
        if spec.tool and spec.tool not in config.agents.agents[spec.agent].tools:
            raise ConfigError(
                str(Path(config.directory) / "intents.yaml"),
                f"tool {spec.tool!r} is not among agent {spec.agent!r}'s tools",
                field=f"intents.{i}.tool",
            )


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
            "settings.yaml", f"unknown LLM provider {settings.provider!r}; choose one of {', '.join(PROVIDERS)}",
            field="llm.provider",
        )
    return RetryingProvider(provider, settings.retry)


def build_router(
    config_dir: str | Path | None = None,
    data_dir: str | Path | None = None,
    db_url: str | None = None,
    understanding: str | None = None,
    *,
    telemetry: TelemetrySink | None = None,
    data_source: DataSource | None = None,
    store: SessionStore | None = None,
    env: Mapping[str, str] | None = None,
    provider: str | None = None,
    model: str | None = None,
    llm: LLMProvider | None = None,
    alerts: AlertNotifier | None = None,
) -> AgentRouter:
    """Wire a router from config, data and environment.

    Args:
        config_dir: folder with intents.yaml, agents.yaml, settings.yaml (default `config/`).
        data_dir: folder with orders.json and customers.json (default `data/`).
        db_url: SQLAlchemy async URL; else `AGENTBOT_DB_URL`, else settings (SQLite in `var/`).
        understanding: `rules` (the offline default), `llm` or `cascade` (rules first, LLM when unsure);
            else `AGENTBOT_UNDERSTANDING`, else settings.
        telemetry: a live sink for events; they are also stored with each turn.
        data_source: replaces the JSON data source (e.g. `SQLiteDataSource`).
        store: replaces the SQL session store.
        env: the environment to read (default `os.environ`).
        provider: `openai`, `anthropic` or `compat`; overrides settings `llm.provider`.
        model: overrides settings `llm.model`.
        llm: a ready provider (e.g. a scripted one in tests) instead of building one from settings.
        alerts: where provider outages and spent LLM budgets are reported.
    """
    env = os.environ if env is None else env
    config = load_config(resolve_dir(config_dir, "config"))
    settings = config.settings
    mode = understanding or env.get("AGENTBOT_UNDERSTANDING") or settings.understanding
    if mode not in UNDERSTANDING_MODES:
        raise ConfigError(
            str(Path(config.directory) / "settings.yaml"),
            f"unknown understanding mode {mode!r}; choose one of {', '.join(UNDERSTANDING_MODES)}",
            field="understanding",
        )
    data = data_source or JSONDataSource(resolve_dir(data_dir, "data"))
    url = db_url or env.get("AGENTBOT_DB_URL") or settings.database_url
    store = store or SqlStore(url, busy_timeout_ms=settings.db_busy_timeout_ms)
    permissions = {name: agent.tools for name, agent in config.agents.agents.items()}
    gateway = ToolGateway(support_tools(data), permissions, store, settings.tool_timeout_seconds)
    check_tools(config, gateway)
    rules, templates = RulesClassifier(config), TemplatePlanner(config)
    classifier: Classifier = rules
    planners: dict[str, Planner] = {}
    closers = []
    if mode != "rules":
        overrides = {k: v for k, v in (("provider", provider), ("model", model)) if v}
        llm_settings = settings.llm.model_copy(update=overrides)
        model_api = llm or build_llm(llm_settings, env)
        if hasattr(model_api, "aclose"):
            closers.append(model_api.aclose)
        budget = DailyBudget(llm_settings.daily_budget_per_customer, llm_settings.daily_budget_per_channel)
        calls = LLMCalls(model_api, llm_settings, budget, alerts)
        understand = LLMClassifier(calls, rules)
        threshold = llm_settings.cascade_threshold
        classifier = understand if mode == "llm" else CascadeClassifier(rules, understand, threshold)
        if mode == "llm":
            planners = {
                name: LLMAgent(
                    name, agent.constitution, calls, gateway.schemas(name), templates,
                    settings.max_agent_passes, CONFIRM_TOOLS, llm_settings.phrase_answers,
                )
                for name, agent in config.agents.agents.items()
                if agent.constitution
            }
    return AgentRouter(
        RouterParts(
            registry=IntentsRegistry(config),
            classifier=classifier,
            planner=templates,
            policy=AllowAllPolicy(),
            executor=gateway,
            store=store,
            data=data,
            messages=config.intents.messages,
            settings=settings,
            telemetry=telemetry or (LogSink() if settings.log_telemetry else None),
            planners=planners,
            closers=closers,
        )
    )
