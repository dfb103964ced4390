"""The composition root: reads config and environment once and returns the whole App."""

from __future__ import annotations

import functools
import os
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple, TypedDict

from adapters.data.demo_dates import DemoCalendar
from adapters.data.json_source import JSONDataSource
from adapters.data.overlay import OverlayDataSource
from adapters.data.store_files import FileInventory, MarkdownKnowledgeBase
from adapters.storage.bundle import sql_storage
from adapters.storage.sql import SqlStore
from adapters.telemetry.sinks import FanoutSink, LogSink
from agent.app import App
from agent.config.files import load_config, load_yaml_model
from agent.config.intents import IntentsRegistry
from agent.config.schema import BotConfig, Settings, UnderstandingMode
from agent.context.output import AlertNotifier
from agent.context.telemetry import TelemetrySink
from agent.conversation.confirmations import Confirmations
from agent.conversation.preferences import PreferenceExtractor, PreferenceRecorder
from agent.domain.catalog import StoreSettings, load_store_settings
from agent.domain.types import Clock, utcnow
from agent.llm.provider import LLMProvider
from agent.planners.generic import TemplatePlanner
from agent.planners.registry import PlannerNeeds, build_planners
from agent.policy.engine import YamlPolicyEngine
from agent.policy.rules import load_policies
from agent.redaction import Redactor
from agent.review.banks import ReviewedBank
from agent.sources import DataSource, ReleaseSource
from agent.storage import Storage
from agent.tools.gateway import ToolExecutor, ToolGateway
from agent.tools.registry import ToolDeps, find_tools
from agent.tools.section_fit import FitThresholds, KnowledgeSettings
from agent.turn.router import AgentRouter, RouterParts
from agent.turn.understanding import Understanding
from agent.understanding.banks import NluBanks, load_banks
from agent.understanding.llm import CascadeClassifier, LLMClassifier
from agent.understanding.politeness import Politeness
from agent.understanding.reading import BankReader
from agent.understanding.rules import RulesClassifier
from agent.understanding.scorer import MeaningSimilarity
from bots.alerts import AlertFanout, LogNotifier, Titled
from bots.metrics import PrometheusMetrics
from bots.secrets import scrubber
from bots.settings import DeploySettings, run_settings
from bots.wiring import check_tools, draw_slot_values, make_release_source, make_tracer, resolve_dir, zep_memory

if TYPE_CHECKING:  # the SDK is imported only when tracing is on
    from adapters.telemetry.otel import OTelTracer


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
    store_words += [v for name in ("category", "device", "brand") if name in slots for v in slots[name].values]
    store_words += [a for name in ("category", "device") if name in slots for a in slots[name].aliases]
    masks = tuple((s.pattern, s.mask) for s in slots.values() if s.pattern and s.mask)
    vocabulary = config.intents.vocabulary
    politeness = (tuple(vocabulary.openers), tuple(vocabulary.closers))
    kinds = tuple(sorted(inventory.kinds().items()))
    learned = tuple(ReviewedBank.open(Path(config.directory)).pairs())
    return _fitted_reader(banks.model_dump_json(), kinds, tuple(store_words), masks, politeness, learned)


# Fitted models kept between starts, beside the default database, and read memory-mapped by every
# worker on the machine (adapters/nlu/arrays.py).
MODEL_CACHE = Path("var/models")


@functools.lru_cache(maxsize=4)
def _fitted_reader(
    banks: str,
    names: tuple[tuple[str, str], ...],
    store_words: tuple[str, ...],
    masks: tuple[tuple[str, str], ...] = (),
    politeness: tuple[tuple[str, ...], tuple[str, ...]] = ((), ()),
    learned: tuple[tuple[str, str], ...] = (),
) -> Embedded:
    """Fitting the models takes a second or two; a process that builds the app again from the same
    banks and data (tests, `agentbot eval`) reuses the fitted reader, which holds no per-turn state."""
    from adapters.nlu.averaged import AveragedScorer
    from adapters.nlu.lexical import LexicalScorer
    from adapters.nlu.wordllama import WordLlamaScorer

    fitted = NluBanks.model_validate_json(banks)
    vectors = WordLlamaScorer(fitted.embedding.dimensions, fitted.embedding.top_k, cache=MODEL_CACHE)
    # One scorer averaging the two as arrays: the same scores as BankReader averaging two.
    scorer = AveragedScorer([vectors, LexicalScorer(cache=MODEL_CACHE)])
    polite = Politeness(list(politeness[0]), list(politeness[1]))
    reader = BankReader(
        fitted, scorer, dict(names), list(store_words), vectors.words(), list(masks), polite, list(learned)
    )
    return Embedded(reader, vectors)


async def check_store(app: App) -> None:
    """Fail at startup, not on the first message: the database answers and its schema is current.
    Then the app does its first-time work (entering the app does it too), before it serves."""
    if app.storage.database is not None:
        await app.storage.database.ensure_schema()
    await app.warm_up()


# How many sentences of each intent and move are read before serving: enough to touch the model's
# pages and fill its columns for the common words; more would only lengthen start-up.
WARM_SENTENCES = 2


def first_time_work(
    project: Project, storage: Storage, rules: RulesClassifier
) -> tuple[list[Callable[[], None]], list[Callable[[], Awaitable[None]]]]:
    """What a first turn would otherwise do while its user waits, and every turn arriving with it
    again: read messages through the model (its memory-mapped pages, each new word's column) and
    build the pydantic models that wait for their first use, which need no connection (the app's
    preloads); and read the demo's first day (its warm-up)."""
    sentences = warm_sentences(rules)

    def read() -> None:
        for sentence in sentences:
            rules.read(sentence)
        _complete_models()

    async def demo_day() -> None:
        if storage.demo is not None:
            await storage.demo.demo_started_on(project.clock().date())

    return [read], [demo_day]


def warm_sentences(rules: RulesClassifier) -> list[str]:
    """The first few sentences of each intent and move, from the banks as the reader has them."""
    banks = rules.banks
    return [s for bank in (banks.intents, banks.moves) for said in bank.values() for s in said[:WARM_SENTENCES]]


def _complete_models() -> None:
    """Pydantic builds a model whose fields name a class defined after it on its first use (the
    conversation's Goal: 16 ms of a first turn); here, the app's own models are all built."""
    from pydantic import BaseModel

    pending = list(BaseModel.__subclasses__())
    while pending:
        model = pending.pop()
        pending += model.__subclasses__()
        if model.__module__.split(".")[0] in ("agent", "adapters", "bots") and not model.__pydantic_complete__:
            model.model_rebuild()


@dataclass
class Project:
    """What the app is built from, read once: config, settings as they will run (settings.yaml with
    the environment's overrides and the flags; the database URL is theirs), the store's own settings
    and files, the environment's settings, and the environment itself (whose secrets every writer masks)."""

    config: BotConfig
    settings: Settings
    store: StoreSettings
    data_dir: Path
    inventory: FileInventory
    deploy: DeploySettings
    env: Mapping[str, str]
    clock: Clock = utcnow  # the time turns run at: tools' dates, the demo's calendar, the policy's counters

    @functools.cached_property
    def embedded(self) -> Embedded:
        """The embedded understanding of this project, its banks read once for the reader and the
        knowledge base's meaning alike."""
        return _embedded(self.config, self.inventory)


@dataclass
class Observers:
    """Who watches the app run: telemetry sinks, admin alerts, traces, operators' metrics, and the
    scrubber everything they write passes."""

    telemetry: list[TelemetrySink]
    alerts: AlertNotifier
    tracer: OTelTracer | None
    metrics: PrometheusMetrics
    redactor: Redactor


def build_app(
    config_dir: str | Path | None = None,
    data_dir: str | Path | None = None,
    db_url: str | None = None,
    understanding: str | None = None,
    *,
    telemetry: TelemetrySink | None = None,
    data_source: DataSource | None = None,
    storage: Storage | None = None,
    alerts: AlertNotifier | None = None,
    env: Mapping[str, str] | None = None,
    releases: ReleaseSource | None = None,
    tracer: OTelTracer | None = None,
    provider: str | None = None,
    model: str | None = None,
    llm: LLMProvider | None = None,
    metrics: PrometheusMetrics | None = None,
    clock: Clock = utcnow,
) -> App:
    """Wire the whole app from config, data and environment: load the project, open its storage,
    build the tools, understanding and agents, and the router over them.

    Args:
        config_dir: folder with intents.yaml, agents.yaml, settings.yaml (default `config/`).
        data_dir: folder with orders.json and customers.json (default `data/`).
        db_url: SQLAlchemy async URL; else `AGENTBOT_DB_URL`, else settings (SQLite in `var/`).
        understanding: `rules` (the offline default), `llm` or `cascade` (rules first, LLM when unsure);
            else `AGENTBOT_UNDERSTANDING`, else settings.
        telemetry: a live sink for events; they are also stored with each turn.
        data_source: replaces the JSON data source (e.g. `SQLiteDataSource`).
        storage: replaces the SQL store: the capabilities another store provides (`Storage`).
        alerts: where admin alerts go (default: de-duplicated log lines).
        env: the environment to read (default `os.environ`).
        releases: replaces the release-summary source (default: AGENTBOT_RELEASES_URL or data/releases.json).
        tracer: replaces the OpenTelemetry tracer built from settings (a trace file per conversation).
        provider: `openai`, `anthropic` or `compat`; overrides settings `llm.provider`.
        model: overrides settings `llm.model`.
        llm: a ready provider (e.g. a scripted one in tests) instead of building one from settings.
        metrics: the Prometheus metrics to count into (default: a registry of the app's own).
        clock: the current UTC time for turns (a replayed eval passes its recording's).
    """
    env = os.environ if env is None else env
    project = load_project(config_dir, data_dir, db_url, env, understanding, provider=provider, model=model)
    project = replace(project, clock=clock)
    storage = storage or open_storage(project)
    data = business_data(project, storage, data_source)
    releases = releases or make_release_source(project.data_dir, project.deploy.data.releases_url)
    gateway = build_tools(project, storage, data, releases)
    seen = observers(project, storage, telemetry, alerts, tracer, metrics)
    agents = build_understanding(project, storage, gateway, llm, seen)
    app = assemble(project, storage, data, gateway, agents, seen)
    preloads, warmups = first_time_work(project, storage, agents.rules)
    app.preloads += preloads
    app.warmups += warmups

    def rebuild() -> Understanding:
        """The understanding from the project's config as it is on disk now (reloaded banks)."""
        fresh = load_project(config_dir, data_dir, db_url, env, understanding, provider=provider, model=model)
        return build_understanding(fresh, storage, gateway, llm, seen)

    from bots.reload import Reloader

    app.reload = Reloader(app, rebuild, project.config.directory)
    return app


def load_project(
    config_dir: str | Path | None,
    data_dir: str | Path | None,
    db_url: str | None,
    env: Mapping[str, str],
    understanding: str | None,
    *,
    provider: str | None = None,
    model: str | None = None,
) -> Project:
    """Config, settings and the store's files; flags win over the environment, which wins over
    settings.yaml, which wins over the settings' defaults (pydantic-settings' sources, bots/settings.py)."""
    deploy = DeploySettings.from_env(env)
    config_path = resolve_dir(config_dir, "config", deploy)
    settings = run_settings(
        config_path, deploy, understanding=understanding, db_url=db_url, provider=provider, model=model
    )
    # The config holds the settings that actually run, flags and environment included (banners, /readyz, logs).
    config = load_config(config_path, settings)
    data_path = resolve_dir(data_dir, "data", deploy)
    store = load_store_settings(config.directory)
    inventory = FileInventory(data_path, store.inventory)
    draw_slot_values(config, store, inventory)
    return Project(config, settings, store, data_path, inventory, deploy, env)


def open_storage(project: Project) -> Storage:
    """The SQL store on the project's database, with every capability on it (preferences in Zep
    when ZEP_API_KEY is set)."""
    settings = project.settings
    store = SqlStore(
        settings.database_url, busy_timeout_ms=settings.db_busy_timeout_ms, synchronous=settings.db_synchronous
    )
    return sql_storage(store, zep_memory(project.deploy.memory))


def business_data(project: Project, storage: Storage, data_source: DataSource | None) -> DataSource:
    """Orders and customers, with what the bot wrote itself (refunds) laid over them."""
    data = data_source or JSONDataSource(project.data_dir)
    if storage.demo is not None:
        data = DemoCalendar(data, storage.demo, project.clock)  # the demo's order dates move with its first day
    if storage.orders is not None:
        data = OverlayDataSource(data, storage.orders)
    return data  # each turn reads it through its own TurnReads: an order once per turn


def build_tools(project: Project, storage: Storage, data: DataSource, releases: ReleaseSource) -> ToolGateway:
    """Every tool found (agentbot's, installed packages', the project's `tool_modules`) behind the
    gateway, with each agent's permissions from agents.yaml."""
    config, store = project.config, project.store
    deps = ToolDeps(
        data=data,
        inventory=project.inventory,
        knowledge=MarkdownKnowledgeBase(project.data_dir / store.knowledge_base),
        releases=releases,
        tasks=storage.tasks,
        tickets=storage.tickets,
        risk_reports=storage.risk_reports,
        **troubleshooting(project),
    )
    tools = find_tools(deps, config.agents.tool_modules, Path(config.directory).parent)
    permissions = {name: agent.tools for name, agent in config.agents.agents.items()}
    gateway = ToolGateway(
        tools, permissions, storage.sessions, project.settings.tool_timeout_seconds, records=storage.records
    )
    check_tools(config, gateway)
    return gateway


class TroubleshootingDeps(TypedDict, total=False):
    meaning: MeaningSimilarity
    device_words: tuple[str, ...]
    fit: FitThresholds


def troubleshooting(project: Project) -> TroubleshootingDeps:
    """What knowledge-base fixes are chosen by meaning with, for the device and symptom; without
    calibrated thresholds (config/knowledge.yaml) no fix is known to fit a device problem."""
    config = project.config
    fit_path = Path(config.directory) / "knowledge.yaml"
    if not fit_path.exists():
        return {}
    fit = load_yaml_model(fit_path, KnowledgeSettings)
    device_words = config.intents.slots["device"].values if "device" in config.intents.slots else []
    meaning = project.embedded.meaning
    return {"meaning": meaning, "device_words": tuple(device_words), "fit": fit.thresholds}


def observers(
    project: Project,
    storage: Storage,
    telemetry: TelemetrySink | None,
    alerts: AlertNotifier | None,
    tracer: OTelTracer | None,
    metrics: PrometheusMetrics | None,
) -> Observers:
    """The given observers, else those the settings and environment ask for."""
    settings, env = project.settings, project.env
    # One scrubber for every writer: the known secrets by value, named parameters whole, the patterns.
    redactor = scrubber(env, project.config.intents.redaction.params, [settings.database_url])
    return Observers(
        telemetry=[s for s in (telemetry or (LogSink() if settings.log_telemetry else None),) if s is not None],
        alerts=Titled(alerts or AlertFanout([LogNotifier()]), project.config.agents.alerts),
        tracer=tracer or make_tracer(settings, project.deploy.observability.otlp_endpoint, redactor),
        metrics=metrics or PrometheusMetrics(storage.database),
        redactor=redactor,
    )


def traced_tools(gateway: ToolGateway, tracer: OTelTracer | None) -> ToolExecutor:
    """The gateway, with a span and metrics per tool run when OpenTelemetry traces."""
    if tracer is None:
        return gateway
    from adapters.telemetry.traced import TracedExecutor

    return TracedExecutor(gateway, tracer)


def build_understanding(
    project: Project,
    storage: Storage,
    gateway: ToolGateway,
    llm: LLMProvider | None,
    seen: Observers,
) -> Understanding:
    """The embedded classifier and each agent's planner from the registry; in `llm` and `cascade`
    modes the LLM reads messages (and, in `llm`, agents with a constitution plan with it)."""
    config, settings = project.config, project.settings
    rules = RulesClassifier(config, reader=project.embedded.reader)
    templates = TemplatePlanner(config, project.store.currency)
    planners = build_planners(PlannerNeeds(config, project.store, templates))
    # The one place the understanding mode is chosen.
    if settings.understanding is UnderstandingMode.RULES:
        return Understanding(rules, rules, templates, planners)
    from bots.llm_wiring import llm_agents, llm_calls

    calls, closers = llm_calls(
        settings.llm,
        project.deploy.llm,
        llm=llm,
        tracer=seen.tracer,
        alerts=seen.alerts,
        spend=storage.spend,
        metrics=seen.metrics,
    )
    reader = LLMClassifier(calls, rules)
    if settings.understanding is UnderstandingMode.CASCADE:
        cascade = CascadeClassifier(rules, reader, settings.llm.cascade_threshold)
        return Understanding(cascade, rules, templates, planners, tuple(closers))
    agents = llm_agents(calls, settings.llm, config, planners, gateway, currency=project.store.currency)
    return Understanding(reader, rules, templates, agents or planners, tuple(closers))


def assemble(
    project: Project, storage: Storage, data: DataSource, gateway: ToolGateway, agents: Understanding, seen: Observers
) -> App:
    """The router over every part, and the App that owns it all."""
    config = project.config
    policies = load_policies(Path(config.directory) / "policies.yaml", set(gateway.tools))
    currency = project.store.currency
    policy = YamlPolicyEngine(
        policies, data, storage.refunds, project.clock, currency, approvals=gateway.needing_approval()
    )
    executor = traced_tools(gateway, seen.tracer)
    parts = RouterParts(
        registry=IntentsRegistry(config),
        understanding=agents,
        preferences=preference_recorder(project, storage),
        policy=policy,
        executor=executor,
        store=storage.sessions,
        data=data,
        messages=config.intents.messages,
        settings=project.settings,
        telemetry=FanoutSink([*seen.telemetry, seen.metrics]),
        alerts=seen.alerts,
        confirmations=Confirmations(
            storage.sessions, project.settings.confirmation_ttl_seconds, config.intents.messages
        ),
        handoffs=storage.handoffs,
        tracer=seen.tracer,
        currency=project.store.currency,
        redactor=seen.redactor,
        metrics=seen.metrics,
        clock=project.clock,
    )
    return App(
        router=AgentRouter(parts),
        storage=storage,
        data=data,
        settings=project.settings,
        alerts=seen.alerts,
        policy=policy,
        tools=executor,
        tracer=seen.tracer,
        storefront=project.store,
        closers=list(agents.closers),
        metrics=seen.metrics,
    )


def preference_recorder(project: Project, storage: Storage) -> PreferenceRecorder | None:
    """Preferences read from what people say (brands, features, budgets), kept if the store keeps them."""
    if storage.preferences is None:
        return None
    slots = project.config.intents.slots
    extractor = PreferenceExtractor(
        project.inventory.distinct("brand") + (slots["brand"].values if "brand" in slots else []),
        slots["feature"].values if "feature" in slots else [],
        project.config.intents.vocabulary.preferences,
        project.config.intents.vocabulary.thousands,
    )
    return PreferenceRecorder(storage.preferences, extractor)
