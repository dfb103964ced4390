"""Discord configuration, message splitting and the commands a user runs."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from agent.errors import ConfigError
from bots.discord.delivery import LIMIT, split
from bots.discord.events import DEFAULT_API_BASE, DiscordSettings
from bots.settings import DeploySettings
from tests.helpers import REPO


def discord_settings(env: dict[str, str]) -> DiscordSettings:
    """The channel's settings from an environment, as its composition root reads them."""
    return DiscordSettings.from_settings(DeploySettings.from_env(env))


def agentbot(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AGENTBOT_", "DISCORD_"))}
    return subprocess.run(
        [sys.executable, "-m", "bots.cli", *args], capture_output=True, text=True, cwd=REPO, env=env, timeout=120
    )


def test_settings_come_from_the_environment() -> None:
    s = discord_settings(
        {
            "DISCORD_BOT_TOKEN": " secret ",
            "DISCORD_GUILD_ID": "42",
            "DISCORD_ADMIN_CHANNEL_ID": "43",
            "DISCORD_ADMIN_ROLE_IDS": "7, 8",
            "DISCORD_ASK_COMMAND": "Help",
            "DISCORD_GATEWAY_URL": "ws://127.0.0.1:9/gateway",
        }
    )
    assert (s.token, s.guild_id, s.admin_channel_id, s.admin_role_ids) == ("secret", 42, 43, {7, 8})
    assert (s.ask_command, s.api_base, s.gateway_url) == ("help", DEFAULT_API_BASE, "ws://127.0.0.1:9/gateway")
    assert "secret" not in repr(s)  # the token never reaches a log line through the settings


@pytest.mark.parametrize(
    ("env", "field"),
    [
        ({}, "DISCORD_BOT_TOKEN"),
        ({"DISCORD_BOT_TOKEN": "t", "DISCORD_GUILD_ID": "my-server"}, "DISCORD_GUILD_ID"),
        ({"DISCORD_BOT_TOKEN": "t", "DISCORD_ASK_COMMAND": "ask me"}, "DISCORD_ASK_COMMAND"),
    ],
)
def test_bad_settings_name_the_variable(env: dict[str, str], field: str) -> None:
    with pytest.raises(ConfigError) as e:
        discord_settings(env)
    assert e.value.field == field


@pytest.mark.parametrize(
    ("shards", "expected"),
    [
        ({}, (None, None, "shard0")),
        ({"DISCORD_SHARD_COUNT": "auto"}, (0, None, "shards-auto")),
        ({"DISCORD_SHARD_COUNT": "4"}, (4, None, "shards0-3")),
        ({"DISCORD_SHARD_COUNT": "4", "DISCORD_SHARD_IDS": "3, 2"}, (4, [2, 3], "shards2,3")),
        ({"DISCORD_SHARD_COUNT": "2", "DISCORD_SHARD_IDS": "1"}, (2, [1], "shard1")),
    ],
)
def test_shards_come_from_the_environment(shards: dict[str, str], expected: tuple[object, ...]) -> None:
    s = discord_settings({"DISCORD_BOT_TOKEN": "t", **shards})
    assert (s.shard_count, s.shard_ids, s.worker) == expected
    assert (
        s.reconcile_commands
        and not discord_settings({"DISCORD_BOT_TOKEN": "t", "DISCORD_KEEP_COMMANDS": "1"}).reconcile_commands
    )


@pytest.mark.parametrize(
    ("shards", "field"),
    [
        ({"DISCORD_SHARD_COUNT": "two"}, "DISCORD_SHARD_COUNT"),
        ({"DISCORD_SHARD_COUNT": "0"}, "DISCORD_SHARD_COUNT"),
        ({"DISCORD_SHARD_IDS": "0"}, "DISCORD_SHARD_IDS"),
        ({"DISCORD_SHARD_COUNT": "2", "DISCORD_SHARD_IDS": "2"}, "DISCORD_SHARD_IDS"),
        ({"DISCORD_SHARD_COUNT": "auto", "DISCORD_SHARD_IDS": "0"}, "DISCORD_SHARD_IDS"),
    ],
)
def test_bad_shard_settings_name_the_variable(shards: dict[str, str], field: str) -> None:
    with pytest.raises(ConfigError) as e:
        discord_settings({"DISCORD_BOT_TOKEN": "t", **shards})
    assert e.value.field == field


def test_a_missing_token_stops_startup_with_a_clear_message() -> None:
    out = agentbot("discord")
    assert out.returncode == 2
    assert "DISCORD_BOT_TOKEN: not set; create a Discord bot" in out.stderr
    assert out.stderr.count("DISCORD_BOT_TOKEN") == 1


def test_long_answers_are_split_at_word_boundaries_within_the_limit() -> None:
    text = ("word " * 900).strip()  # 4499 characters
    parts = split(text)
    assert len(parts) == 3 and all(len(p) <= LIMIT for p in parts)
    assert " ".join(parts) == text
    assert split("x" * 4001) == ["x" * 2000, "x" * 2000, "x"]
    assert split("") == [""]


def test_the_defer_benchmark_runs_from_a_checkout() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "tests.bench_discord", "--interactions", "5", "--slow-ms", "20", "--json"],
        cwd=REPO, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert report["interactions"] == 5 and set(report["defer"]) == {"p50_ms", "p99_ms", "max_ms"}
