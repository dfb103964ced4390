"""Every environment variable agentbot reads, in one list: `.env.example` and the documentation's
table (docs/configuration.md, drawn as the site builds) come from it.

tests/bots/test_env_vars.py fails when the code reads a variable this list lacks, or when
`.env.example` drifts from it; `python -m bots.env_vars` rewrites it.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from pydantic import BaseModel


class EnvVar(BaseModel):
    name: str
    group: str
    purpose: str
    example: str = ""  # what .env.example shows; empty = a commented-out line to fill in
    secret: bool = False


ENV_VARS: list[EnvVar] = [
    EnvVar(
        name="AGENTBOT_HOME",
        group="project",
        purpose="project folder holding `config/` and `data/` (see `agentbot init`)",
    ),
    EnvVar(
        name="AGENTBOT_DB_URL",
        group="project",
        purpose="any SQLAlchemy URL, e.g. `postgresql+asyncpg://user@host/agentbot` (`agentbot[postgres]`)",
        example="sqlite+aiosqlite:///var/agentbot.db",
    ),
    EnvVar(
        name="AGENTBOT_UNDERSTANDING", group="project", purpose="`rules` (default), `llm` or `cascade`", example="rules"
    ),
    EnvVar(
        name="AGENTBOT_DB_SYNCHRONOUS",
        group="project",
        purpose="SQLite durability: `normal` (default) or `full`; overrides settings `db_synchronous`",
    ),
    EnvVar(
        name="AGENTBOT_INBOX_SETTLE_MS",
        group="project",
        purpose="how long a channel event waits before its turn, for an earlier-written message still on its way "
        "(default 50; settings `inbox_settle_seconds`)",
    ),
    EnvVar(
        name="AGENTBOT_LOG_LEVEL",
        group="project",
        purpose="`DEBUG`, `INFO`, `WARNING` or `ERROR` (default `WARNING`; `INFO` for `slack` and `discord`)",
        # Left commented: `.env` is read by every command, and INFO would put log records in the console chat.
    ),
    EnvVar(
        name="AGENTBOT_LOG_FORMAT",
        group="project",
        purpose="`text` (default) or `json` (one JSON object per line)",
        example="text",
    ),
    EnvVar(
        name="PORT", group="server", purpose="`agentbot slack` HTTP port (default 3000; set by Heroku-style platforms)"
    ),
    EnvVar(
        name="HOST",
        group="server",
        purpose="`agentbot slack` interface (default 0.0.0.0 in a container, else 127.0.0.1)",
    ),
    EnvVar(
        name="AGENTBOT_METRICS_PORT",
        group="server",
        purpose="`agentbot discord`'s port for `/metrics`, `/healthz`, `/readyz` (default 9464; `off`: none)",
    ),
    EnvVar(name="OPENAI_API_KEY", group="llm", purpose="OpenAI key for `llm`/`cascade` mode", secret=True),
    EnvVar(name="OPENAI_BASE_URL", group="llm", purpose="another OpenAI endpoint (ends in `/v1`)"),
    EnvVar(name="ANTHROPIC_API_KEY", group="llm", purpose="Anthropic key", secret=True),
    EnvVar(name="ANTHROPIC_BASE_URL", group="llm", purpose="another Anthropic endpoint (no `/v1`)"),
    EnvVar(
        name="AGENTBOT_COMPAT_BASE_URL",
        group="llm",
        purpose="OpenAI-compatible server (Ollama, OpenRouter, vLLM), ends in `/v1`",
    ),
    EnvVar(name="AGENTBOT_COMPAT_API_KEY", group="llm", purpose="its key, if it wants one", secret=True),
    EnvVar(
        name="AGENTBOT_COMPAT_JSON_MODE",
        group="llm",
        purpose="`json_schema` (default) or `json_object` for servers without structured output",
    ),
    EnvVar(name="SLACK_BOT_TOKEN", group="slack", purpose="Bot User OAuth Token (`xoxb-...`)", secret=True),
    EnvVar(name="SLACK_SIGNING_SECRET", group="slack", purpose="HTTP mode: verifies Slack's requests", secret=True),
    EnvVar(name="SLACK_APP_TOKEN", group="slack", purpose="Socket Mode instead of HTTP (`xapp-...`)", secret=True),
    EnvVar(
        name="SLACK_CLIENT_ID",
        group="slack",
        purpose="many workspaces: installs through OAuth (`/slack/install`); with it, no `SLACK_BOT_TOKEN`",
    ),
    EnvVar(
        name="SLACK_CLIENT_SECRET",
        group="slack",
        purpose="the OAuth client secret, with `SLACK_CLIENT_ID`",
        secret=True,
    ),
    EnvVar(
        name="SLACK_REDIRECT_URI",
        group="slack",
        purpose="the OAuth redirect URL (`https://<host>/slack/oauth_redirect`) when the app lists several",
    ),
    EnvVar(
        name="SLACK_ADMIN_CHANNEL",
        group="slack",
        purpose="channel id for admin alerts (OAuth: each workspace sets its own with `/agentbot admin-channel`)",
    ),
    EnvVar(
        name="SLACK_ADMIN_USERS",
        group="slack",
        purpose="comma-separated user ids allowed to claim handoffs and admin commands",
    ),
    EnvVar(name="SLACK_COMMAND", group="slack", purpose="the slash command's name (default `/agentbot`)"),
    EnvVar(name="SLACK_API_URL", group="slack", purpose="another Slack Web API address (tests use a stand-in)"),
    EnvVar(name="DISCORD_BOT_TOKEN", group="discord", purpose="the bot's token", secret=True),
    EnvVar(
        name="DISCORD_GUILD_ID", group="discord", purpose="sync slash commands to this server at once (unset: global)"
    ),
    EnvVar(name="DISCORD_ADMIN_CHANNEL_ID", group="discord", purpose="channel id for admin alerts"),
    EnvVar(name="DISCORD_ADMIN_USER_IDS", group="discord", purpose="comma-separated user ids that are admins"),
    EnvVar(name="DISCORD_ADMIN_ROLE_IDS", group="discord", purpose="comma-separated role ids whose members are admins"),
    EnvVar(name="DISCORD_ASK_COMMAND", group="discord", purpose="the slash command's name (default `ask`)"),
    EnvVar(name="DISCORD_API_BASE", group="discord", purpose="another Discord REST address (tests use a stand-in)"),
    EnvVar(name="DISCORD_GATEWAY_URL", group="discord", purpose="another Discord gateway address"),
    EnvVar(
        name="DISCORD_KEEP_COMMANDS",
        group="discord",
        purpose="`1`: leave this app's other command registrations alone (default: startup removes stale ones)",
    ),
    EnvVar(
        name="DISCORD_SHARD_COUNT",
        group="discord",
        purpose="gateway shards in all (a number, or `auto` for Discord's count; unset: one connection)",
    ),
    EnvVar(
        name="DISCORD_SHARD_IDS",
        group="discord",
        purpose="the shards this process runs, comma-separated (default: all of `DISCORD_SHARD_COUNT`)",
    ),
    EnvVar(name="ZEP_API_KEY", group="memory", purpose="preference memory in Zep instead of the database", secret=True),
    EnvVar(name="ZEP_BASE_URL", group="memory", purpose="another Zep address"),
    EnvVar(name="AGENTBOT_TRACING", group="observability", purpose="`off` turns traces off"),
    EnvVar(
        name="AGENTBOT_TRACES_DIR",
        group="observability",
        purpose="where trace files go (default `traces/` beside the SQLite file)",
    ),
    EnvVar(
        name="AGENTBOT_TRACE_SAMPLE_RATE",
        group="observability",
        purpose="the share of conversations traced, 0 to 1 (default: settings `trace_sample_rate`)",
    ),
    EnvVar(
        name="AGENTBOT_TRACE_RETENTION_DAYS",
        group="observability",
        purpose="trace files untouched this many days are removed (default 7: `trace_retention_days`; 0: kept)",
    ),
    EnvVar(
        name="AGENTBOT_TRACE_RETENTION_MB",
        group="observability",
        purpose="then the oldest go while all hold more MB than this (default 1024: `trace_retention_mb`; 0: none)",
    ),
    EnvVar(
        name="AGENTBOT_ADMIN_TOKEN",
        group="observability",
        purpose="opens the operator page `/admin` (sign-in token, or `Authorization: Bearer`); unset: no page",
        secret=True,
    ),
    EnvVar(
        name="OTEL_EXPORTER_OTLP_ENDPOINT", group="observability", purpose="send traces over OTLP/HTTP instead of files"
    ),
    EnvVar(name="AGENTBOT_BASELINES_DIR", group="observability", purpose="where `agentbot eval` keeps baselines"),
    EnvVar(
        name="AGENTBOT_RELEASES_URL",
        group="data",
        purpose="release summaries over HTTP instead of `data/releases.json`",
    ),
]

# What counts as "the code reads a variable": a quoted name with one of these prefixes, or one of the bare names.
NAME_PATTERN = re.compile(r"\"((?:AGENTBOT|SLACK|DISCORD|OPENAI|ANTHROPIC|ZEP|OTEL)_[A-Z0-9_]+|PORT|HOST)\"")


def env_example() -> str:
    """The .env.example text: every variable, grouped; secrets and optional ones commented out."""
    lines = ["# agentbot reads these at startup (docs: Configuration). Copy to .env and fill in what you use."]
    group = ""
    for v in ENV_VARS:
        if v.group != group:
            group = v.group
            lines += ["", f"# --- {group}"]
        lines.append(f"# {re.sub(r'`', '', v.purpose)}")
        lines.append(f"{v.name}={v.example}" if v.example else f"# {v.name}=")
    return "\n".join(lines) + "\n"


def main() -> int:
    target = Path(__file__).resolve().parent.parent / ".env.example"
    target.write_text(env_example(), encoding="utf-8")
    print(f"wrote {target}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
