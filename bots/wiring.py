"""Wiring helpers of the composition root: where config and data live, and the optional parts."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from adapters.data.store_files import FileInventory
from agent.config.schema import BotConfig, Settings
from agent.domain.catalog import StoreSettings
from agent.errors import ConfigError
from agent.redaction import Redactor
from agent.sources import ReleaseSource
from agent.storage import PreferenceMemory
from agent.tools.gateway import ToolGateway
from bots.project import find_dir, packaged_defaults
from bots.settings import DeploySettings, MemoryVariables

if TYPE_CHECKING:  # the SDK is imported only when tracing is on
    from adapters.telemetry.otel import OTelTracer

# The default project: a checkout's root, or the copy of config/ and data/ inside an installed wheel.
REPO = packaged_defaults()


def resolve_dir(path: str | Path | None, default: str, deploy: DeploySettings | None = None) -> Path:
    """The flag, else $AGENTBOT_HOME/<default>, else ./<default>, else the packaged one (bots/project.py)."""
    home = (deploy or DeploySettings.from_env()).project.home
    return find_dir(path, default, home).path


def check_tools(config: BotConfig, gateway: ToolGateway) -> None:
    """Every tool an agent or intent names must exist, an intent's tool must be its agent's, and an
    intent words a confirmation exactly when its tool declares it needs the requester's yes."""
    file = str(Path(config.directory) / "agents.yaml")
    for name, agent in config.agents.agents.items():
        for tool in agent.tools:
            if tool not in gateway.tools:
                raise ConfigError(file, f"unknown tool {tool!r}", field=f"agents.{name}.tools")
    intents_file = str(Path(config.directory) / "intents.yaml")
    for i, spec in enumerate(config.intents.intents):
        if spec.tool and spec.tool not in config.agents.agents[spec.agent].tools:
            raise ConfigError(
                intents_file, f"tool {spec.tool!r} is not among agent {spec.agent!r}'s tools", field=f"intents.{i}.tool"
            )
        # Whether a tool needs a yes is its own declaration; the template only words the question.
        declared = gateway.tools.get(spec.tool or "")
        needs_yes = declared is not None and declared.needs_approval
        if needs_yes and not spec.templates.confirm:
            problem = f"tool {spec.tool!r} needs the requester's yes: word the question in templates.confirm"
            raise ConfigError(intents_file, problem, field=f"intents.{i}.templates")
        if spec.templates.confirm and not needs_yes:
            problem = f"templates.confirm, but tool {spec.tool!r} does not declare needs_approval"
            raise ConfigError(intents_file, problem, field=f"intents.{i}.templates.confirm")


def draw_slot_values(config: BotConfig, store: StoreSettings, inventory: FileInventory) -> None:
    """Extend slot lookup lists with the values in the data, so a new store needs no new word lists."""
    for slot, item_field in store.slot_values.items():
        spec = config.intents.slots.get(slot)
        if spec is None:
            file = str(Path(config.directory) / "store.yaml")
            raise ConfigError(file, f"no slot named {slot!r}", field=f"slot_values.{slot}")
        known = {v.lower() for v in spec.values}
        spec.values += [v for v in inventory.distinct(item_field) if v.lower() not in known]


def zep_memory(memory: MemoryVariables) -> PreferenceMemory | None:
    """Customers' preferences in Zep when ZEP_API_KEY is set (ZEP_BASE_URL overrides its address);
    None leaves them in the store's own database."""
    if memory.zep_api_key is None:
        return None
    from adapters.memory.zep import ZepPreferenceMemory

    return ZepPreferenceMemory(memory.zep_api_key.get_secret_value(), base_url=memory.zep_base_url)


def traces_dir(settings: Settings) -> Path:
    """Where trace files go: settings (AGENTBOT_TRACES_DIR merged in), else `traces/` beside the SQLite file."""
    if settings.traces_dir:
        return Path(settings.traces_dir)
    from sqlalchemy.engine import make_url

    url = make_url(settings.database_url)
    if url.get_backend_name() == "sqlite" and url.database not in (None, "", ":memory:"):
        return Path(str(url.database)).parent / "traces"
    return Path("var/traces")


def make_tracer(settings: Settings, otlp_endpoint: str | None, redactor: Redactor) -> OTelTracer | None:
    """OpenTelemetry when tracing is on (AGENTBOT_TRACING=off turns it off); OTLP if its endpoint is set.
    The sample rate and retention are the run's settings, the environment's overrides merged in."""
    if not settings.tracing:
        return None
    from adapters.telemetry.otel import build_tracer

    days, megabytes = settings.trace_retention_days, settings.trace_retention_mb
    return build_tracer(
        traces_dir(settings),
        otlp_endpoint,
        sample_rate=settings.trace_sample_rate,
        redactor=redactor,
        max_age_seconds=days * 86_400 if days else None,
        max_bytes=int(megabytes * 1_000_000) if megabytes else None,
    )


def make_release_source(data_dir: Path, releases_url: str | None) -> ReleaseSource:
    """AGENTBOT_RELEASES_URL (GET {url}/releases/{id}) if set, else `releases.json` in the data folder."""
    from adapters.data.releases import HTTPReleaseSource, JSONReleaseSource

    if releases_url:
        return HTTPReleaseSource(releases_url)
    return JSONReleaseSource(data_dir / "releases.json")
