"""The declared settings (bots/settings.py), drawn into `.env.example` and the docs, name exactly the
variables the code reads; a wrong value names its variable; a secret never prints."""

from __future__ import annotations

import logging
import re
from pathlib import Path

import pytest

from agent.errors import ConfigError
from bots.logs import configure_logging
from bots.settings import DeploySettings, declared, env_example, is_secret, run_settings
from tests.helpers import REPO

# What counts as "the code names a variable": a quoted name with one of these prefixes, or one of the bare names.
NAME_PATTERN = re.compile(r"\"((?:AGENTBOT|SLACK|DISCORD|OPENAI|ANTHROPIC|ZEP|OTEL)_[A-Z0-9_]+|PORT|HOST)\"")


def names_read_by_the_code() -> set[str]:
    found: set[str] = set()
    for package in ("agent", "adapters", "bots"):
        for path in (REPO / package).rglob("*.py"):
            if path.name.endswith("standin.py"):
                continue
            found |= set(NAME_PATTERN.findall(path.read_text(encoding="utf-8")))
    return found


def test_every_variable_the_code_names_is_declared_and_nothing_else() -> None:
    names = [name for _, name, _ in declared()]
    assert len(set(names)) == len(names), "a variable is declared twice"
    read = names_read_by_the_code()
    assert read - set(names) == set(), f"named by the code but not declared in bots/settings.py: {read - set(names)}"
    assert all(field.description for _, _, field in declared()), "every variable says what it does"


def test_only_the_settings_read_a_variable() -> None:
    """agent/ and adapters/ receive values and never touch the environment; in bots/ a variable is
    read through the declared settings, never by name from a mapping (commands hand `os.environ`
    on whole to `build_app` or `DeploySettings.from_env`). The one exception is `.env`'s loader,
    which looks for the file under $AGENTBOT_HOME before any settings can be read."""
    by_name = re.compile(r"(?:environ|env)(?:\.get\(|\[)\s*" + NAME_PATTERN.pattern)
    for package in ("agent", "adapters", "bots"):
        for path in (REPO / package).rglob("*.py"):
            text = path.read_text(encoding="utf-8")
            assert package == "bots" or not re.search(r"os\.environ|os\.getenv", text), f"{path} reads the environment"
            found = set(by_name.findall(text))
            assert found <= ({"AGENTBOT_HOME"} if path.name == "project.py" else set()), f"{path} reads {found}"
    assert not any("pydantic_settings" in p.read_text(encoding="utf-8") for p in (REPO / "agent").rglob("*.py"))


def test_env_example_is_current() -> None:
    hint = "run `.venv/bin/python -m bots.env_vars` to rewrite it"
    assert (REPO / ".env.example").read_text(encoding="utf-8") == env_example(), hint
    secrets = [name for _, name, field in declared() if is_secret(field)]
    assert "SLACK_BOT_TOKEN" in secrets and "AGENTBOT_ADMIN_TOKEN" in secrets
    assert all(f"# {name}=\n" in env_example() for name in secrets), "secrets ship empty and commented"


@pytest.mark.parametrize(
    ("name", "value", "problem"),
    [
        ("PORT", "web", "PORT: input should be a valid integer, unable to parse string as an integer, not 'web'"),
        ("AGENTBOT_METRICS_PORT", "99999", "AGENTBOT_METRICS_PORT: input should be less than or equal to 65535"),
        ("AGENTBOT_INBOX_SETTLE_MS", "soon", "AGENTBOT_INBOX_SETTLE_MS: input should be a valid number"),
        ("AGENTBOT_TRACE_RETENTION_DAYS", "-1", "AGENTBOT_TRACE_RETENTION_DAYS: input should be greater than or equal"),
        ("AGENTBOT_TRACE_SAMPLE_RATE", "2", "AGENTBOT_TRACE_SAMPLE_RATE: input should be less than or equal to 1"),
        ("AGENTBOT_DB_SYNCHRONOUS", "sometimes", "AGENTBOT_DB_SYNCHRONOUS: input should be 'normal' or 'full'"),
    ],
)
def test_a_wrong_value_names_the_variable_and_what_it_should_be(name: str, value: str, problem: str) -> None:
    with pytest.raises(ConfigError) as e:
        DeploySettings.from_env({name: value})
    assert e.value.field == name and str(e.value).startswith(f"environment: {problem}")


def test_a_wrong_variable_stops_the_command_with_one_line_not_a_traceback(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from bots.cli.main import main

    monkeypatch.setenv("AGENTBOT_TRACE_SAMPLE_RATE", "most")
    assert main(["info"]) == 2
    err = capsys.readouterr().err
    problem = "environment: AGENTBOT_TRACE_SAMPLE_RATE: input should be a valid number"
    assert err.startswith(f"agentbot: configuration error: {problem}") and "not 'most'" in err
    assert "Traceback" not in err


def test_a_bad_secret_is_named_but_never_echoed() -> None:
    with pytest.raises(ConfigError) as e:
        DeploySettings.from_env({"DISCORD_ADMIN_USER_IDS": "12,hunter2"})
    assert e.value.field == "DISCORD_ADMIN_USER_IDS"
    assert "hunter2" in str(e.value)  # an id list is not a secret: its value helps
    settings = DeploySettings.from_env({"SLACK_BOT_TOKEN": "xoxb-plain-value-7", "AGENTBOT_ADMIN_TOKEN": "letmein-42"})
    assert settings.slack.bot_token is not None and settings.slack.bot_token.get_secret_value() == "xoxb-plain-value-7"
    for shown in (repr(settings), str(settings), settings.model_dump_json()):
        assert "xoxb-plain-value-7" not in shown and "letmein-42" not in shown


def test_a_secret_never_reaches_the_log(caplog: pytest.LogCaptureFixture) -> None:
    import io

    stream = io.StringIO()
    env = {"OPENAI_API_KEY": "plain-looking-secret-value", "AGENTBOT_LOG_LEVEL": "info"}
    configure_logging(env, stream)
    try:
        settings = DeploySettings.from_env(env)
        logging.getLogger("agentbot.test").info("starting with %r and %s", settings, env["OPENAI_API_KEY"])
    finally:
        logging.basicConfig(force=True, handlers=[logging.NullHandler()])
    assert "starting with DeploySettings(" in stream.getvalue()
    assert "plain-looking-secret-value" not in stream.getvalue()


def test_the_environment_wins_over_settings_yaml_which_wins_over_the_defaults(tmp_path: Path) -> None:
    from agent.config.schema import Settings

    (tmp_path / "settings.yaml").write_text("trace_sample_rate: 0.5\ntraces_dir: from-yaml\nhistory_limit: 7\n")
    yaml = Settings.model_validate({"trace_sample_rate": 0.5, "traces_dir": "from-yaml", "history_limit": 7})
    env = {"AGENTBOT_TRACE_SAMPLE_RATE": "0.25", "AGENTBOT_INBOX_SETTLE_MS": "120", "AGENTBOT_TRACING": "off"}
    merged = run_settings(tmp_path, DeploySettings.from_env(env), understanding="cascade", model="small")
    assert type(merged) is Settings  # the domain's model, whichever sources set it
    assert (merged.trace_sample_rate, merged.inbox_settle_seconds, merged.tracing) == (0.25, 0.12, False)
    assert (merged.traces_dir, merged.history_limit, merged.lease_seconds) == ("from-yaml", 7, 10.0)
    assert (merged.understanding, merged.llm.model, merged.llm.provider) == ("cascade", "small", "openai")
    assert run_settings(tmp_path, DeploySettings.from_env({})) == yaml
    assert run_settings(tmp_path / "nowhere", DeploySettings.from_env({})) == Settings()  # no file: the defaults
    url_env = DeploySettings.from_env({"AGENTBOT_DB_URL": "sqlite+aiosqlite:///from-env.db"})
    assert run_settings(tmp_path, url_env).database_url == "sqlite+aiosqlite:///from-env.db"
    flagged = run_settings(tmp_path, url_env, db_url="sqlite+aiosqlite:///from-flag.db")
    assert flagged.database_url == "sqlite+aiosqlite:///from-flag.db"  # the flag is the one URL the run uses


def test_a_flag_sets_one_field_of_the_files_llm_and_the_file_keeps_the_rest(tmp_path: Path) -> None:
    (tmp_path / "settings.yaml").write_text("llm:\n  provider: anthropic\n  model: big\n  temperature: 0.3\n")
    llm = run_settings(tmp_path, DeploySettings.from_env({}), model="small").llm
    assert (llm.provider, llm.model, llm.temperature) == ("anthropic", "small", 0.3)


def test_a_wrong_settings_yaml_names_its_line_and_field_and_a_wrong_flag_its_field(tmp_path: Path) -> None:
    deploy = DeploySettings.from_env({})
    (tmp_path / "settings.yaml").write_text("history_limit: 3\nllm:\n  timeout_seconds: -1\n")
    with pytest.raises(ConfigError) as e:
        run_settings(tmp_path, deploy)
    assert (e.value.line, e.value.field) == (3, "llm.timeout_seconds")
    (tmp_path / "settings.yaml").write_text("history_limit: [3\n")
    with pytest.raises(ConfigError, match="not valid YAML"):
        run_settings(tmp_path, deploy)
    (tmp_path / "settings.yaml").write_text("history_limt: 3\n")
    with pytest.raises(ConfigError) as e:
        run_settings(tmp_path, deploy)
    assert (e.value.line, e.value.field) == (1, "history_limt")
    (tmp_path / "settings.yaml").write_text("- a list\n")
    with pytest.raises(ConfigError, match="the top level must be a mapping"):
        run_settings(tmp_path, deploy)
    (tmp_path / "settings.yaml").write_text("history_limit: 3\n")
    with pytest.raises(ConfigError) as e:
        run_settings(tmp_path, deploy, understanding="psychic")
    assert e.value.field == "understanding" and e.value.line is None


def test_each_variable_that_overrides_settings_yaml_names_a_field_of_it() -> None:
    """The override a variable's description promises is the one its field declares, and it is a
    real settings.yaml field, so a renamed field cannot leave a variable silently ignored."""
    from agent.config.schema import Settings

    promised = {
        name: m.group(1)
        for _, name, field in declared()
        if (m := re.search(r"overrides settings `(\w+)`", field.description or ""))
    }
    declares = {
        name: str(field.json_schema_extra["setting"])
        for _, name, field in declared()
        if isinstance(field.json_schema_extra, dict) and "setting" in field.json_schema_extra
    }
    assert promised.items() <= declares.items()
    assert set(declares.values()) <= set(Settings.model_fields)
    assert len(declares) == 9


def test_an_explicit_mapping_is_read_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PORT", "8123")
    assert DeploySettings.from_env().server.port == 8123
    assert DeploySettings.from_env({}).server.port is None  # tests and `agentbot bench` pass their own


async def test_build_app_reads_the_mapping_it_is_given(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from bots.app import build_app

    monkeypatch.setenv("AGENTBOT_INBOX_SETTLE_MS", "900")  # the process's own environment is not read
    db_url = f"sqlite+aiosqlite:///{tmp_path / 'bot.db'}"
    env = {"AGENTBOT_INBOX_SETTLE_MS": "120", "AGENTBOT_DB_SYNCHRONOUS": "FULL", "AGENTBOT_TRACING": "off"}
    async with build_app(REPO / "config", REPO / "data", db_url, env=env) as app:
        assert (app.settings.inbox_settle_seconds, app.settings.db_synchronous) == (0.12, "full")
        assert app.settings.tracing is False and app.tracer is None
    with pytest.raises(ConfigError, match="AGENTBOT_INBOX_SETTLE_MS: input should be less than or equal to 5000"):
        build_app(REPO / "config", REPO / "data", db_url, env={"AGENTBOT_INBOX_SETTLE_MS": "6000"})
