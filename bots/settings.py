"""Every environment variable agentbot reads, declared once with its type, default and meaning.

`DeploySettings` holds the variables in groups (project, server, llm, slack, discord, memory,
observability, data); each group is a pydantic-settings model whose fields are read by
pydantic-settings' own environment source from the variable their alias names, exactly as spelled,
an empty value counting as unset. It is built once by the composition root
(`DeploySettings.from_env`, from `os.environ` or a mapping a test or `agentbot bench` passes), so
nothing deeper reads the environment. A wrong value stops startup with a `ConfigError` naming the
variable; secrets are `SecretStr`, so no repr or log line shows them.

Where a variable overrides `settings.yaml` (`AGENTBOT_DB_URL` over `database_url`, ...), its field
says which (`var(..., setting=...)`). The run's settings are built here too (`run_settings`), by
pydantic-settings from its sources, the first that sets a field winning: the command's flags as
init values, those variables, `settings.yaml` (`YamlConfigSettingsSource`), the fields' defaults.

`.env.example` and the documentation's table are drawn from these fields: `python -m bots.env_vars`
rewrites `.env.example`, and tests/bots/test_env_vars.py checks both it and that every variable
the code names is declared here.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from contextvars import ContextVar
from pathlib import Path
from typing import Annotated, Any, Literal, Self

import yaml
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, SecretStr, ValidationError
from pydantic.config import JsonDict
from pydantic.fields import FieldInfo
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict, YamlConfigSettingsSource

from agent.config.files import load_yaml_model
from agent.config.schema import Settings, UnderstandingMode
from agent.errors import ConfigError


def _words(value: Any) -> Any:
    """A comma- or space-separated variable as a list ("U1, U2" -> ["U1", "U2"])."""
    return [w for w in re.split(r"[,\s]+", value) if w] if isinstance(value, str) else value


def _lower(value: Any) -> Any:
    return value.strip().lower() if isinstance(value, str) else value


def _upper(value: Any) -> Any:
    return value.strip().upper() if isinstance(value, str) else value


Words = Annotated[list[str], BeforeValidator(_words)]
Ids = Annotated[set[int], BeforeValidator(_words)]
Port = Annotated[int, Field(ge=1, le=65535)]
# A port to listen on where 0 asks the system for any free one (the metrics port of a worker that
# restarts or runs beside others).
ListenPort = Annotated[int, Field(ge=0, le=65535)]


def var(name: str, description: str, example: str = "", *, setting: str = "", scale: float = 1, **kwargs: Any) -> Any:
    """A field read from the variable `name`; `example` is what `.env.example` shows (empty: a
    commented-out line to fill in); unset, the field is `default` (None unless given). `setting`
    names the settings.yaml field the variable overrides when set (its value times `scale`)."""
    extra: JsonDict = {"example": example} if example else {}
    if setting:
        extra |= {"setting": setting, "scale": scale}
    kwargs.setdefault("default", None)
    return Field(validation_alias=name, description=description, json_schema_extra=extra or None, **kwargs)


# Set while `Group.read` builds a group from a mapping: the process's environment is not read then.
_GIVEN: ContextVar[bool] = ContextVar("agentbot_settings_given", default=False)


class Group(BaseSettings):
    """A group of variables, read from the environment by pydantic-settings: each field from the
    variable its alias names, exactly as spelled; an empty value is unset, and surrounding blanks
    are dropped. Lists are comma- or space-separated words, not JSON (`enable_decoding=False`)."""

    model_config = SettingsConfigDict(
        extra="forbid",
        validate_by_name=True,
        validate_by_alias=True,
        frozen=True,
        case_sensitive=True,
        env_ignore_empty=True,
        enable_decoding=False,
        str_strip_whitespace=True,
    )

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        # `.env` is loaded into the environment first (bots/project.py), so libraries see it too.
        # A mapping given to `read` stands for the environment: its values come in as init values.
        return (init_settings,) if _GIVEN.get() else (init_settings, env_settings)

    @classmethod
    def read(cls, env: Mapping[str, str] | None = None) -> Self:
        """The group from `env` alone, or from the process's environment when None. A mapping is
        validated as the environment source reads one: by the variables' names, exactly as
        spelled, an empty value counting as unset."""
        if env is None:
            return cls()
        names = {str(f.validation_alias) for f in cls.model_fields.values()}
        values: dict[str, Any] = {k: v for k, v in env.items() if k in names and v.strip()}
        given = _GIVEN.set(True)
        try:
            return cls(**values)
        finally:
            _GIVEN.reset(given)


class ProjectVariables(Group):
    home: Path | None = var("AGENTBOT_HOME", "project folder holding `config/` and `data/` (see `agentbot init`)")
    db_url: str | None = var(
        "AGENTBOT_DB_URL",
        "any SQLAlchemy URL, e.g. `postgresql+asyncpg://user@host/agentbot` (`agentbot[postgres]`); "
        "overrides settings `database_url`",
        example="sqlite+aiosqlite:///var/agentbot.db",
        setting="database_url",
        repr=False,  # it may carry a password
    )
    understanding: Annotated[UnderstandingMode | None, BeforeValidator(_lower)] = var(
        "AGENTBOT_UNDERSTANDING",
        "`rules` (default), `llm` or `cascade`; overrides settings `understanding`",
        "rules",
        setting="understanding",
    )
    db_synchronous: Annotated[Literal["normal", "full"] | None, BeforeValidator(_lower)] = var(
        "AGENTBOT_DB_SYNCHRONOUS",
        "SQLite durability: `normal` (default) or `full`; overrides settings `db_synchronous`",
        setting="db_synchronous",
    )
    inbox_settle_ms: float | None = var(
        "AGENTBOT_INBOX_SETTLE_MS",
        "how long a channel event waits before its turn, for an earlier-written message still on its way, "
        "0 to 5000 (default 50; overrides settings `inbox_settle_seconds`)",
        setting="inbox_settle_seconds",
        scale=0.001,
        ge=0,
        le=5000,
    )
    # Left commented in .env.example: `.env` is read by every command, and INFO would put log
    # records in the console chat.
    log_level: Annotated[Literal["DEBUG", "INFO", "WARNING", "ERROR"] | None, BeforeValidator(_upper)] = var(
        "AGENTBOT_LOG_LEVEL", "`DEBUG`, `INFO`, `WARNING` or `ERROR` (default `WARNING`; `INFO` for the servers)"
    )
    log_format: Annotated[Literal["text", "json"], BeforeValidator(_lower)] = var(
        "AGENTBOT_LOG_FORMAT", "`text` (default) or `json` (one JSON object per line)", "text", default="text"
    )


class ServerVariables(Group):
    port: Port | None = var("PORT", "`agentbot slack` HTTP port (default 3000; set by Heroku-style platforms)")
    host: str | None = var("HOST", "`agentbot slack` interface (default 0.0.0.0 in a container, else 127.0.0.1)")
    metrics_port: Annotated[ListenPort | Literal["off"], BeforeValidator(_lower)] = var(
        "AGENTBOT_METRICS_PORT",
        "`agentbot discord`'s port for `/metrics`, `/healthz`, `/readyz` (default 9464; 0: any free port; `off`: none)",
        default=9464,
    )
    web_concurrency: Annotated[int, Field(ge=1, le=64)] = var(
        "WEB_CONCURRENCY",
        "`agentbot slack`: worker processes forked from one parent that loaded the model (default 1; `--workers` wins)",
        default=1,
    )


class LLMVariables(Group):
    openai_api_key: SecretStr | None = var("OPENAI_API_KEY", "OpenAI key for `llm`/`cascade` mode")
    openai_base_url: str | None = var("OPENAI_BASE_URL", "another OpenAI endpoint (ends in `/v1`)")
    anthropic_api_key: SecretStr | None = var("ANTHROPIC_API_KEY", "Anthropic key")
    anthropic_base_url: str | None = var("ANTHROPIC_BASE_URL", "another Anthropic endpoint (no `/v1`)")
    compat_base_url: str | None = var(
        "AGENTBOT_COMPAT_BASE_URL", "OpenAI-compatible server (Ollama, OpenRouter, vLLM), ends in `/v1`"
    )
    compat_api_key: SecretStr | None = var("AGENTBOT_COMPAT_API_KEY", "its key, if it wants one")
    compat_json_mode: Annotated[Literal["json_schema", "json_object"], BeforeValidator(_lower)] = var(
        "AGENTBOT_COMPAT_JSON_MODE",
        "`json_schema` (default) or `json_object` for servers without structured output",
        default="json_schema",
    )


class SlackVariables(Group):
    bot_token: SecretStr | None = var("SLACK_BOT_TOKEN", "Bot User OAuth Token (`xoxb-...`)")
    signing_secret: SecretStr | None = var("SLACK_SIGNING_SECRET", "HTTP mode: verifies Slack's requests")
    app_token: SecretStr | None = var("SLACK_APP_TOKEN", "Socket Mode instead of HTTP (`xapp-...`)")
    client_id: str | None = var(
        "SLACK_CLIENT_ID", "many workspaces: installs through OAuth (`/slack/install`); with it, no `SLACK_BOT_TOKEN`"
    )
    client_secret: SecretStr | None = var("SLACK_CLIENT_SECRET", "the OAuth client secret, with `SLACK_CLIENT_ID`")
    redirect_uri: str | None = var(
        "SLACK_REDIRECT_URI",
        "the OAuth redirect URL (`https://<host>/slack/oauth_redirect`) when the app lists several",
    )
    admin_channel: str | None = var(
        "SLACK_ADMIN_CHANNEL",
        "channel id for admin alerts (OAuth: each workspace sets its own with `/agentbot admin-channel`)",
    )
    admin_users: Words = var(
        "SLACK_ADMIN_USERS", "comma-separated user ids allowed to claim handoffs and admin commands", default=[]
    )
    command: str = var("SLACK_COMMAND", "the slash command's name (default `/agentbot`)", default="/agentbot")
    api_url: str = var(
        "SLACK_API_URL", "another Slack Web API address (tests use a stand-in)", default="https://slack.com/api/"
    )


class DiscordVariables(Group):
    bot_token: SecretStr | None = var("DISCORD_BOT_TOKEN", "the bot's token")
    guild_id: int | None = var("DISCORD_GUILD_ID", "sync slash commands to this server at once (unset: global)")
    admin_channel_id: int | None = var("DISCORD_ADMIN_CHANNEL_ID", "channel id for admin alerts")
    admin_user_ids: Ids = var("DISCORD_ADMIN_USER_IDS", "comma-separated user ids that are admins", default=set())
    admin_role_ids: Ids = var(
        "DISCORD_ADMIN_ROLE_IDS", "comma-separated role ids whose members are admins", default=set()
    )
    ask_command: Annotated[str, BeforeValidator(_lower)] = var(
        "DISCORD_ASK_COMMAND",
        "the slash command's name: 1 to 32 of `a-z`, `0-9`, `-`, `_` (default `ask`)",
        default="ask",
        pattern=r"^[-_a-z0-9]{1,32}$",
    )
    api_base: str = var(
        "DISCORD_API_BASE",
        "another Discord REST address (tests use a stand-in)",
        default="https://discord.com/api/v10",
    )
    gateway_url: str = var(
        "DISCORD_GATEWAY_URL", "another Discord gateway address", default="wss://gateway.discord.gg/"
    )
    keep_commands: bool = var(
        "DISCORD_KEEP_COMMANDS",
        "`1`: leave this app's other command registrations alone (default: startup removes stale ones)",
        default=False,
    )
    shard_count: Annotated[Annotated[int, Field(ge=1)] | Literal["auto"] | None, BeforeValidator(_lower)] = var(
        "DISCORD_SHARD_COUNT",
        "gateway shards in all (a number, or `auto` for Discord's count; unset: one connection)",
    )
    shard_ids: Annotated[list[Annotated[int, Field(ge=0)]] | None, BeforeValidator(_words)] = var(
        "DISCORD_SHARD_IDS", "the shards this process runs, comma-separated (default: all of `DISCORD_SHARD_COUNT`)"
    )


class MemoryVariables(Group):
    zep_api_key: SecretStr | None = var("ZEP_API_KEY", "preference memory in Zep instead of the database")
    zep_base_url: str | None = var("ZEP_BASE_URL", "another Zep address")


class ObservabilityVariables(Group):
    tracing: bool | None = var(
        "AGENTBOT_TRACING",
        "`off` turns traces off, `on` on (default: settings `tracing`, which is on)",
        setting="tracing",
    )
    traces_dir: str | None = var(
        "AGENTBOT_TRACES_DIR",
        "where trace files go (default `traces/` beside the SQLite file; settings `traces_dir`)",
        setting="traces_dir",
    )
    trace_sample_rate: float | None = var(
        "AGENTBOT_TRACE_SAMPLE_RATE",
        "the share of conversations traced, 0 to 1 (default: settings `trace_sample_rate`)",
        setting="trace_sample_rate",
        ge=0,
        le=1,
    )
    trace_retention_days: float | None = var(
        "AGENTBOT_TRACE_RETENTION_DAYS",
        "trace files untouched this many days are removed (default 7: `trace_retention_days`; 0: kept)",
        setting="trace_retention_days",
        ge=0,
    )
    trace_retention_mb: float | None = var(
        "AGENTBOT_TRACE_RETENTION_MB",
        "then the oldest go while all hold more MB than this (default 1024: `trace_retention_mb`; 0: none)",
        setting="trace_retention_mb",
        ge=0,
    )
    admin_token: SecretStr | None = var(
        "AGENTBOT_ADMIN_TOKEN",
        "opens the operator page `/admin` (sign-in token, or `Authorization: Bearer`); unset: no page",
    )
    otlp_endpoint: str | None = var("OTEL_EXPORTER_OTLP_ENDPOINT", "send traces over OTLP/HTTP instead of files")
    baselines_dir: str | None = var("AGENTBOT_BASELINES_DIR", "where `agentbot eval` keeps baselines")


class DataVariables(Group):
    releases_url: str | None = var(
        "AGENTBOT_RELEASES_URL", "release summaries over HTTP instead of `data/releases.json`"
    )


class DeploySettings(BaseModel):
    """What the process reads from its environment: secrets, addresses, and overrides of settings.yaml."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    project: ProjectVariables
    server: ServerVariables
    llm: LLMVariables
    slack: SlackVariables
    discord: DiscordVariables
    memory: MemoryVariables
    observability: ObservabilityVariables
    data: DataVariables

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> DeploySettings:
        """The settings from `env` (default: the process's environment) alone; a wrong value raises
        `ConfigError` naming its variable and what it should be."""
        groups: dict[str, Group] = {}
        try:
            for name, field in cls.model_fields.items():
                group = field.annotation
                assert isinstance(group, type) and issubclass(group, Group)
                groups[name] = group.read(env)
        except ValidationError as e:
            raise config_error(e) from None
        return cls.model_validate(groups)


def declared(model: type[BaseModel] = DeploySettings) -> Iterator[tuple[str, str, FieldInfo]]:
    """Every variable: its group, its name and its field, in the order they are declared."""
    for group, group_field in model.model_fields.items():
        variables = group_field.annotation
        assert isinstance(variables, type) and issubclass(variables, BaseModel)
        for field in variables.model_fields.values():
            assert isinstance(field.validation_alias, str)
            yield group, field.validation_alias, field


def example(field: FieldInfo) -> str:
    extra = field.json_schema_extra
    return str(extra.get("example", "")) if isinstance(extra, dict) else ""


def is_secret(field: FieldInfo) -> bool:
    return SecretStr in (field.annotation, *getattr(field.annotation, "__args__", ()))


def config_error(error: ValidationError) -> ConfigError:
    """The first problem, said of its variable: what it should be, and what it was (unless a secret)."""
    fields = {name: field for _, name, field in declared()}
    first = error.errors()[0]
    name = next((str(step) for step in first["loc"] if str(step) in fields), ".".join(map(str, first["loc"])))
    problem = first["msg"][0].lower() + first["msg"][1:]
    if name in fields and not is_secret(fields[name]):
        problem += f", not {first['input']!r}"
    return ConfigError("environment", problem, field=name)


# --- the run's settings: defaults < settings.yaml < environment < flags ---------------------------


class VariablesSource(PydanticBaseSettingsSource):
    """The environment's layer of the run's settings: each set variable that declares the
    settings.yaml field it overrides (`var(..., setting=...)`), as `DeploySettings` read it (by its
    name, an empty value unset), times its scale. The environment is read once, by the variables."""

    def __init__(self, settings_cls: type[BaseSettings], deploy: DeploySettings) -> None:
        super().__init__(settings_cls)
        self.deploy = deploy

    def get_field_value(self, field: FieldInfo, field_name: str) -> tuple[Any, str, bool]:
        return None, field_name, False  # unused: `__call__` gives the variables' fields at once

    def __call__(self) -> dict[str, Any]:
        found: dict[str, Any] = {}
        for group_name in type(self.deploy).model_fields:
            group = getattr(self.deploy, group_name)
            for name, field in type(group).model_fields.items():
                extra = field.json_schema_extra
                value = getattr(group, name)
                if isinstance(extra, dict) and "setting" in extra and value is not None:
                    scale = extra["scale"]
                    assert isinstance(scale, int | float)
                    found[str(extra["setting"])] = value * scale if scale != 1 else value
        return found


def run_settings(
    config_dir: str | Path,
    deploy: DeploySettings,
    *,
    understanding: str | None = None,
    db_url: str | None = None,
    provider: str | None = None,
    model: str | None = None,
) -> Settings:
    """The settings a run uses, built by pydantic-settings from its sources, the first that sets a
    field winning: the command's flags (init values; `--db-url` is `database_url`'s), the variables
    that override settings.yaml, the project's settings.yaml, then the fields' defaults. A problem
    names the file's line and field, or the field a flag sets."""
    settings_file = Path(config_dir) / "settings.yaml"

    class RunSettings(BaseSettings, Settings):
        # A class per run: pydantic-settings takes a source's file and values from the class alone.
        model_config = SettingsConfigDict(extra="forbid")

        @classmethod
        def settings_customise_sources(
            cls,
            settings_cls: type[BaseSettings],
            init_settings: PydanticBaseSettingsSource,
            env_settings: PydanticBaseSettingsSource,
            dotenv_settings: PydanticBaseSettingsSource,
            file_secret_settings: PydanticBaseSettingsSource,
        ) -> tuple[PydanticBaseSettingsSource, ...]:
            yaml_file = YamlConfigSettingsSource(settings_cls, yaml_file=settings_file, yaml_file_encoding="utf-8")
            return (init_settings, VariablesSource(settings_cls, deploy), yaml_file)

    flags: dict[str, Any] = {k: v for k, v in (("understanding", understanding), ("database_url", db_url)) if v}
    if llm := {k: v for k, v in (("provider", provider), ("model", model)) if v}:
        flags["llm"] = llm  # over the file's `llm:` field by field, as pydantic-settings merges sources
    try:
        run = RunSettings(**flags)
    except (ValidationError, yaml.YAMLError, TypeError, ValueError) as e:
        # The file's own problem first, with its line, as config files report theirs.
        load_yaml_model(settings_file, Settings, optional=True)
        if not isinstance(e, ValidationError):
            raise
        first = e.errors()[0]
        raise ConfigError("settings.yaml", first["msg"], field=".".join(map(str, first["loc"]))) from None
    # The domain's own model leaves here, whichever sources set it.
    return Settings.model_construct(run.model_fields_set, **dict(run))


# --- .env.example, drawn from the fields ---------------------------------------------------------


def env_example() -> str:
    """The .env.example text: every variable, grouped; secrets and optional ones commented out."""
    lines = ["# agentbot reads these at startup (docs: Configuration). Copy to .env and fill in what you use."]
    current = ""
    for group, name, field in declared():
        if group != current:
            current = group
            lines += ["", f"# --- {group}"]
        lines.append(f"# {re.sub(r'`', '', field.description or '')}")
        lines.append(f"{name}={example(field)}" if example(field) else f"# {name}=")
    return "\n".join(lines) + "\n"
