"""The composition root: reads config and environment once and returns the whole App."""

from __future__ import annotations

import functools
import os
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import NamedTuple

from adapters.data.demo_dates import DemoCalendar
from adapters.data.json_source import JSONDataSource
from adapters.data.overlay import OverlayDataSource
from adapters.data.store_files import FileInventory, MarkdownKnowledgeBase
from adapters.storage.inbox import SqlInbox
from adapters.storage.records import SqlRecords
from adapters.storage.spend import SqlSpend
from adapters.storage.sql import SqlStore
from adapters.telemetry.sinks import FanoutSink, LogSink
from agent.app import App
from agent.catalog import load_store_settings
from agent.config import BotConfig
from agent.config_files import load_config, load_yaml_model
from agent.conversation.confirmations import Confirmations
from agent.errors import ConfigError
from agent.intents import IntentsRegistry
from agent.interfaces import (
    AlertNotifier,
    Classifier,
    DataSource,
    LLMProvider,
    MeaningSimilarity,
    Planner,
    ReleaseSource,
    SessionStore,
    TelemetrySink,
    ToolExecutor,
    Tracer,
)
from agent.planners.generic import TemplatePlanner
from agent.planners.release import ReleasePlanner
from agent.planners.release_risk import RiskThresholds
from agent.planners.sales import SalesPlanner
from agent.planners.support import SupportPlanner
from agent.planners.tasks import TaskPlanner
from agent.policy.engine import YamlPolicyEngine
from agent.policy.rules import load_policies
from agent.preferences import PreferenceExtractor, PreferenceRecorder
from agent.router import AgentRouter, RouterParts
from agent.snapshot import TurnSnapshot
from agent.tools.calculator import math_tools
from agent.tools.gateway import ToolGateway
from agent.tools.inventory import inventory_tools
from agent.tools.knowledge import Troubleshooting, knowledge_tools
from agent.tools.orders import support_tools
from agent.tools.refunds import refund_tools
from agent.tools.release import release_tools
from agent.tools.section_fit import KnowledgeSettings
from agent.tools.task_list import task_tools
from agent.understanding.banks import NluBanks, load_banks
from agent.understanding.politeness import Politeness
from agent.understanding.reading import BankReader
from agent.understanding.rules import RulesClassifier
from bots.alerts import AlertFanout, LogNotifier
from bots.metrics import PrometheusMetrics
from bots.secrets import scrubber
from bots.wiring import (
    check_tools,
    draw_slot_values,
    env_number,
    make_release_source,
    make_tracer,
    preference_memory,
    resolve_dir,
)

UNDERSTANDING_MODES = ("rules", "llm", "cascade")


class Embedded(NamedTuple):
    reader: BankReader  # the example banks, fitted
    meaning: MeaningSimilarity  # the same word vectors, for what knowledge-base sections are about


def embedded_reader(config: BotConfig, inventory: FileInventory) -> BankReader:
    """The embedded understanding: the store's example banks read by two small models, wordllama's
    word vectors (what words mean) and a linear model over the banks' words (which words decide)."""
    return _embedded(config, inventory).reader


def _embedded(config: BotConfig, inventory: FileInventory) -> Embedded:
    banks = load_banks(Path(config.directory), config.intents)
    slots = config.intents.slots
    store_words = [*inventory.distinct("category"), *inventory.distinct("brand")]
    store_words += [v for name in ("category", "device") if name in slots for v in slots[name].values]
    masks = tuple((s.pattern, s.mask) for s in slots.values() if s.pattern and s.mask)
    vocabulary = config.intents.vocabulary
    politeness = (tuple(vocabulary.openers), tuple(vocabulary.closers))
    kinds = tuple(sorted(inventory.kinds().items()))
    return _fitted_reader(banks.model_dump_json(), kinds, tuple(store_words), masks, politeness)


@functools.lru_cache(maxsize=4)
def _fitted_reader(
    banks: str,
    names: tuple[tuple[str, str], ...],
    store_words: tuple[str, ...],
    masks: tuple[tuple[str, str], ...] = (),
    politeness: tuple[tuple[str, ...], tuple[str, ...]] = ((), ()),
) -> Embedded:
    """Fitting the models takes a second or two; a process that builds the app again from the same
    banks and data (tests, `agentbot eval`) reuses the fitted reader, which holds no per-turn state."""
    from adapters.nlu.averaged import AveragedScorer
    from adapters.nlu.lexical import LexicalScorer
    from adapters.nlu.wordllama import WordLlamaScorer

    fitted = NluBanks.model_validate_json(banks)
    vectors = WordLlamaScorer(fitted.embedding.dimensions, fitted.embedding.top_k)
    # One scorer averaging the two as arrays: the same scores as BankReader averaging two.
    scorer = AveragedScorer([vectors, LexicalScorer()])
    polite = Politeness(list(politeness[0]), list(politeness[1]))
    reader = BankReader(fitted, scorer, dict(names), list(store_words), vectors.words(), list(masks), polite)
    return Embedded(reader, vectors)


async def check_store(app: App) -> None:
    """Fail at startup, not on the first message: the database answers and its schema is current."""
    if isinstance(app.store, SqlStore):
        await app.store.ensure_schema()


def build_app(
    config_dir: str | Path | None = None,
    data_dir: str | Path | None = None,
    db_url: str | None = None,
    understanding: str | None = None,
    *,
    telemetry: TelemetrySink | None = None,
    data_source: DataSource | None = None,
    store: SessionStore | None = None,
    alerts: AlertNotifier | None = None,
    env: Mapping[str, str] | None = None,
    releases: ReleaseSource | None = None,
    tracer: Tracer | None = None,
    provider: str | None = None,
    model: str | None = None,
    llm: LLMProvider | None = None,
    metrics: PrometheusMetrics | None = None,
) -> App:
    """Wire the whole app from config, data and environment.

    Args:
        config_dir: folder with intents.yaml, agents.yaml, settings.yaml (default `config/`).
        data_dir: folder with orders.json and customers.json (default `data/`).
        db_url: SQLAlchemy async URL; else `AGENTBOT_DB_URL`, else settings (SQLite in `var/`).
        understanding: `rules` (the offline default), `llm` or `cascade` (rules first, LLM when unsure);
            else `AGENTBOT_UNDERSTANDING`, else settings.
        telemetry: a live sink for events; they are also stored with each turn.
        data_source: replaces the JSON data source (e.g. `SQLiteDataSource`).
        store: replaces the SQL session store.
        alerts: where admin alerts go (default: de-duplicated log lines).
        env: the environment to read (default `os.environ`).
        releases: replaces the release-summary source (default: AGENTBOT_RELEASES_URL or data/releases.json).
        tracer: replaces the OpenTelemetry tracer built from settings (a trace file per conversation).
        provider: `openai`, `anthropic` or `compat`; overrides settings `llm.provider`.
        model: overrides settings `llm.model`.
        llm: a ready provider (e.g. a scripted one in tests) instead of building one from settings.
        metrics: the Prometheus metrics to count into (default: a registry of the app's own).
    """
    env = os.environ if env is None else env
    config = load_config(resolve_dir(config_dir, "config", env))
    settings = config.settings
    mode = understanding or env.get("AGENTBOT_UNDERSTANDING") or settings.understanding
    if mode not in UNDERSTANDING_MODES:
        raise ConfigError(
            str(Path(config.directory) / "settings.yaml"),
            f"unknown understanding mode {mode!r}; choose one of {', '.join(UNDERSTANDING_MODES)}",
            field="understanding",
        )
    # The app's settings say what actually runs, flags and environment included (banners, /readyz, logs).
    overrides = {k: v for k, v in (("provider", provider), ("model", model)) if v}
    settings.understanding, settings.llm = mode, settings.llm.model_copy(update=overrides)
    data_path = resolve_dir(data_dir, "data", env)
    data = data_source or JSONDataSource(data_path)
    store_settings = load_store_settings(config.directory)
    inventory = FileInventory(data_path, store_settings.inventory)
    knowledge = MarkdownKnowledgeBase(data_path / store_settings.knowledge_base)
    draw_slot_values(config, store_settings, inventory)
    settle_ms = env_number(
        env, "AGENTBOT_INBOX_SETTLE_MS", settings.inbox_settle_seconds * 1000, 0, 5000, "0 to 5000 ms"
    )
    settings.inbox_settle_seconds = settle_ms / 1000
    url = db_url or env.get("AGENTBOT_DB_URL") or settings.database_url
    synchronous = env.get("AGENTBOT_DB_SYNCHRONOUS", settings.db_synchronous).lower()
    if synchronous not in ("normal", "full"):
        raise ConfigError("AGENTBOT_DB_SYNCHRONOUS", f"{synchronous!r} is not one of normal, full")
    store = store or SqlStore(url, busy_timeout_ms=settings.db_busy_timeout_ms, synchronous=synchronous)
    # What the bot itself wrote (refunds, tasks, handoffs) lives in the session database; a custom
    # store without SQL leaves refunds unseen by lookups and tasks unavailable.
    records = SqlRecords(store) if isinstance(store, SqlStore) else None
    if records is not None:
        data = OverlayDataSource(DemoCalendar(data, records), records)
    data = TurnSnapshot(data)  # a turn's policy check and tool read an order once
    permissions = {name: agent.tools for name, agent in config.agents.agents.items()}
    releases = releases or make_release_source(data_dir, env)
    embedded = _embedded(config, inventory)
    # Without calibrated thresholds no knowledge-base fix is known to fit a device problem.
    fit_path = Path(config.directory) / "knowledge.yaml"
    troubleshooting = None
    if fit_path.exists():
        fit = load_yaml_model(fit_path, KnowledgeSettings)
        device_words = config.intents.slots["device"].values if "device" in config.intents.slots else []
        troubleshooting = Troubleshooting(inventory, device_words, embedded.meaning, fit.thresholds)
    tools = [
        *support_tools(data),
        *refund_tools(data),
        *(task_tools(records) if records else []),
        *inventory_tools(inventory),
        *knowledge_tools(knowledge, troubleshooting),
        *math_tools(),
        *release_tools(releases, records),
    ]
    gateway = ToolGateway(tools, permissions, store, settings.tool_timeout_seconds)
    check_tools(config, gateway)
    policies = load_policies(Path(config.directory) / "policies.yaml", set(gateway.tools))
    # One scrubber for every writer: the known secrets by value, named parameters whole, the patterns.
    redactor = scrubber(env, config.intents.redaction.params, [url])
    tracer = tracer or make_tracer(settings, url, env, redactor)
    executor: ToolExecutor = gateway
    if tracer is not None:
        from adapters.telemetry.otel import OTelTracer
        from adapters.telemetry.traced import TracedExecutor

        if isinstance(tracer, OTelTracer):
            executor = TracedExecutor(gateway, tracer)  # a span and metrics per tool run
    fanout = alerts or AlertFanout([LogNotifier()])
    reader = embedded.reader
    slots = config.intents.slots
    rules, templates = RulesClassifier(config, reader=reader), TemplatePlanner(config, store_settings.currency)
    planners: dict[str, Planner] = {
        "sales": SalesPlanner(store_settings, templates),
        "support": SupportPlanner(templates, slots["symptom"].pattern if "symptom" in slots else None),
        "tasks": TaskPlanner(config),
    }
    if "release" in config.agents.agents:
        thresholds = load_yaml_model(Path(config.directory) / "release_risk.yaml", RiskThresholds, optional=True)
        planners["release"] = ReleasePlanner(config, thresholds)
    slots = config.intents.slots
    extractor = PreferenceExtractor(
        inventory.distinct("brand") + (slots["brand"].values if "brand" in slots else []),
        slots["feature"].values if "feature" in slots else [],
    )
    memory = preference_memory(url, env, settings.db_busy_timeout_ms, store)
    metrics = metrics or PrometheusMetrics(store if isinstance(store, SqlStore) else None)
    sinks = [s for s in (telemetry or (LogSink() if settings.log_telemetry else None),) if s is not None]
    classifier: Classifier = rules
    closers: list[Callable[[], Awaitable[None]]] = []
    if mode != "rules":
        from bots.llm_wiring import llm_understanding

        classifier, llm_agents, closers = llm_understanding(
            mode,
            settings.llm,
            config,
            rules,
            {**planners, "*": templates},
            gateway,
            env,
            llm=llm,
            tracer=tracer,
            alerts=fanout,
            spend=SqlSpend(store) if isinstance(store, SqlStore) else None,
            metrics=metrics,
        )
        planners = llm_agents or planners
    policy = YamlPolicyEngine(policies, data, records, currency=store_settings.currency)
    router = AgentRouter(
        RouterParts(
            registry=IntentsRegistry(config),
            classifier=classifier,
            planner=templates,
            preferences=PreferenceRecorder(memory, extractor),
            policy=policy,
            executor=executor,
            store=store,
            data=data,
            messages=config.intents.messages,
            settings=settings,
            telemetry=FanoutSink([*sinks, metrics]),
            alerts=fanout,
            planners=planners,
            confirmations=Confirmations(store, settings.confirmation_ttl_seconds),
            handoffs=records,
            tracer=tracer,
            currency=store_settings.currency,
            redactor=redactor,
            metrics=metrics,
            reader=reader,
        )
    )
    return App(
        router=router,
        store=store,
        data=data,
        settings=settings,
        alerts=fanout,
        policy=policy,
        tools=executor,
        inbox=SqlInbox(store) if isinstance(store, SqlStore) else None,
        tracer=tracer,
        storefront=store_settings,
        closers=closers,
        metrics=metrics,
        demo=records,
    )
