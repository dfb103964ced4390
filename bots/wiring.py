"""Wiring helpers of the composition root: where config and data live, and the optional parts."""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from adapters.data.store_files import FileInventory
from agent.config.schema import BotConfig, Settings
from agent.domain.catalog import StoreSettings
from agent.errors import ConfigError
from agent.interfaces import PreferenceMemory, ReleaseSource
from agent.redaction import Redactor
from agent.tools.gateway import ToolGateway
from bots.project import find_dir, packaged_defaults

if TYPE_CHECKING:  # the SDK is imported only when tracing is on
    from adapters.telemetry.otel import OTelTracer

# The default project: a checkout's root, or the copy of config/ and data/ inside an installed wheel.
REPO = packaged_defaults()


def resolve_dir(path: str | Path | None, default: str, env: Mapping[str, str] | None = None) -> Path:
    """The flag, else $AGENTBOT_HOME/<default>, else ./<default>, else the packaged one (bots/project.py)."""
    return find_dir(path, default, os.environ if env is None else env).path


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


def zep_memory(env: Mapping[str, str]) -> PreferenceMemory | None:
    """Customers' preferences in Zep when ZEP_API_KEY is set (ZEP_BASE_URL overrides its address);
    None leaves them in the store's own database."""
    if not env.get("ZEP_API_KEY"):
        return None
    from adapters.memory.zep import ZepPreferenceMemory

    return ZepPreferenceMemory(env["ZEP_API_KEY"], base_url=env.get("ZEP_BASE_URL") or None)


def traces_dir(settings: Settings, db_url: str, env: Mapping[str, str]) -> Path:
    """Where trace files go: AGENTBOT_TRACES_DIR, settings, else `traces/` beside the SQLite file."""
    if configured := env.get("AGENTBOT_TRACES_DIR") or settings.traces_dir:
        return Path(configured)
    from sqlalchemy.engine import make_url

    url = make_url(db_url)
    if url.get_backend_name() == "sqlite" and url.database not in (None, "", ":memory:"):
        return Path(str(url.database)).parent / "traces"
    return Path("var/traces")


def make_tracer(settings: Settings, db_url: str, env: Mapping[str, str], redactor: Redactor) -> OTelTracer | None:
    """OpenTelemetry when tracing is on (AGENTBOT_TRACING=off turns it off); OTLP if its endpoint is set."""
    if not settings.tracing or env.get("AGENTBOT_TRACING", "").lower() in ("0", "off", "false", "no"):
        return None
    from adapters.telemetry.otel import build_tracer

    rate = env_number(env, "AGENTBOT_TRACE_SAMPLE_RATE", settings.trace_sample_rate, 0, 1, "a number from 0 to 1")
    no_limit = "a number of 0 or more (0: no limit)"
    days = env_number(env, "AGENTBOT_TRACE_RETENTION_DAYS", settings.trace_retention_days, 0, math.inf, no_limit)
    megabytes = env_number(env, "AGENTBOT_TRACE_RETENTION_MB", settings.trace_retention_mb, 0, math.inf, no_limit)
    return build_tracer(
        traces_dir(settings, db_url, env),
        env.get("OTEL_EXPORTER_OTLP_ENDPOINT") or None,
        sample_rate=rate,
        redactor=redactor,
        max_age_seconds=days * 86_400 if days else None,
        max_bytes=int(megabytes * 1_000_000) if megabytes else None,
    )


def env_number(env: Mapping[str, str], name: str, default: float, low: float, high: float, meaning: str) -> float:
    """A number from the environment within [low, high], else `default`; anything else names the variable."""
    text = env.get(name)
    if text is None:
        return default
    try:
        value = float(text)
    except ValueError:
        value = low - 1
    if not low <= value <= high:
        raise ConfigError(name, f"{text!r} is not {meaning}")
    return value


def make_release_source(data_dir: str | Path | None, env: Mapping[str, str]) -> ReleaseSource:
    """AGENTBOT_RELEASES_URL (GET {url}/releases/{id}) if set, else `releases.json` in the data folder."""
    from adapters.data.releases import HTTPReleaseSource, JSONReleaseSource

    if url := env.get("AGENTBOT_RELEASES_URL"):
        return HTTPReleaseSource(url)
    return JSONReleaseSource(resolve_dir(data_dir, "data", env) / "releases.json")
