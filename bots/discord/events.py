"""Discord settings and the event a Discord channel stores in the inbox before doing any work.

Raw discord.py objects never leave bots/discord_*.py: an interaction or message becomes a
`DiscordEvent` (JSON in the inbox, so a crash can replay it) and then an agent `Interaction`.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from collections.abc import Mapping
from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from agent.errors import ConfigError

DEFAULT_API_BASE = "https://discord.com/api/v10"
DEFAULT_GATEWAY = "wss://gateway.discord.gg/"


def _ids(env: Mapping[str, str], name: str) -> set[int]:
    raw = env.get(name, "")
    try:
        return {int(x) for x in re.split(r"[,\s]+", raw) if x}
    except ValueError as e:
        raise ConfigError("environment", f"expected comma-separated Discord ids, got {raw!r}", field=name) from e


def _id(env: Mapping[str, str], name: str) -> int | None:
    found = _ids(env, name)
    if len(found) > 1:
        raise ConfigError("environment", "expected one Discord id", field=name)
    return next(iter(found), None)


class DiscordSettings(BaseModel):
    """Everything the Discord channel needs; `from_env` is called by the composition root only."""

    model_config = ConfigDict(extra="forbid")

    token: str = Field(repr=False)
    guild_id: int | None = None  # commands sync to this guild at once; unset = global commands
    admin_channel_id: int | None = None
    admin_user_ids: set[int] = Field(default_factory=set)
    admin_role_ids: set[int] = Field(default_factory=set)
    api_base: str = DEFAULT_API_BASE
    gateway_url: str = DEFAULT_GATEWAY
    ask_command: str = "ask"
    guild_ready_timeout: float = 2.0
    # Startup makes Discord's registrations match this process's commands (DISCORD_KEEP_COMMANDS=1: no).
    reconcile_commands: bool = True
    # Sharding: None = one gateway connection (no sharding); 0 = as many shards as Discord recommends.
    shard_count: int | None = None
    shard_ids: list[int] | None = None  # the shards this process runs (default: all of them)
    identify_interval: float = 5.0  # seconds between two shards' IDENTIFY (Discord's limit)

    @property
    def worker(self) -> str:
        """The shards this process runs, for its inbox worker name ("shard0", "shards0-3")."""
        if not self.shard_ids:
            if self.shard_count is None:
                return "shard0"
            return f"shards0-{self.shard_count - 1}" if self.shard_count else "shards-auto"
        ids = sorted(self.shard_ids)
        return f"shard{ids[0]}" if len(ids) == 1 else "shards" + ",".join(map(str, ids))

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> DiscordSettings:
        token = env.get("DISCORD_BOT_TOKEN", "").strip()
        if not token:
            raise ConfigError(
                "environment",
                "not set; create a Discord bot at https://discord.com/developers/applications "
                "and set its token (see the docs, 'Discord setup')",
                field="DISCORD_BOT_TOKEN",
            )
        command = env.get("DISCORD_ASK_COMMAND", "ask").strip().lower()
        if not re.fullmatch(r"[-_a-z0-9]{1,32}", command):
            raise ConfigError(
                "environment", f"not a valid slash command name: {command!r}", field="DISCORD_ASK_COMMAND"
            )
        shard_count, shard_ids = _shards(env)
        return cls(
            token=token,
            guild_id=_id(env, "DISCORD_GUILD_ID"),
            admin_channel_id=_id(env, "DISCORD_ADMIN_CHANNEL_ID"),
            admin_user_ids=_ids(env, "DISCORD_ADMIN_USER_IDS"),
            admin_role_ids=_ids(env, "DISCORD_ADMIN_ROLE_IDS"),
            api_base=env.get("DISCORD_API_BASE") or DEFAULT_API_BASE,
            gateway_url=env.get("DISCORD_GATEWAY_URL") or DEFAULT_GATEWAY,
            ask_command=command,
            reconcile_commands=env.get("DISCORD_KEEP_COMMANDS", "").strip().lower() not in ("1", "true", "yes"),
            shard_count=shard_count,
            shard_ids=shard_ids,
        )


def _shards(env: Mapping[str, str]) -> tuple[int | None, list[int] | None]:
    """DISCORD_SHARD_COUNT (a number, or `auto` for Discord's recommendation) and DISCORD_SHARD_IDS."""
    raw = env.get("DISCORD_SHARD_COUNT", "").strip().lower()
    ids = sorted(_ids(env, "DISCORD_SHARD_IDS")) or None
    if not raw:
        if ids:
            raise ConfigError("environment", "shard ids need DISCORD_SHARD_COUNT as well", field="DISCORD_SHARD_IDS")
        return None, None
    if raw == "auto":
        if ids:
            raise ConfigError(
                "environment", "shard ids need a fixed DISCORD_SHARD_COUNT, not auto", field="DISCORD_SHARD_IDS"
            )
        return 0, None
    if not raw.isdigit() or int(raw) < 1:
        raise ConfigError(
            "environment", f"expected a number of shards or 'auto', got {raw!r}", field="DISCORD_SHARD_COUNT"
        )
    count = int(raw)
    if ids and ids[-1] >= count:
        raise ConfigError("environment", f"shard ids run from 0 to {count - 1}", field="DISCORD_SHARD_IDS")
    return count, ids


class DiscordEvent(BaseModel):
    """One thing a user did on Discord, as stored in the inbox (keyed by interaction or message id)."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["ask", "message", "button"]
    text: str
    # Which reply button (confirm, cancel, human): the router binds a confirm to the exact action.
    button: Literal["confirm", "cancel", "human", "choose"] | None = None
    question: str | None = None  # for a choice: the question it answers
    choice: str | None = None  # for a choice: the value picked
    user_id: int
    user_name: str
    guild_id: int | None  # None in a DM
    channel_id: int  # where it happened: a channel, a thread or a DM
    in_thread: bool = False
    # Start a thread for the conversation: from the answer to /ask, or from the mentioning message.
    start_thread: bool = False
    message_id: int | None = None
    # Interaction follow-ups (slash commands): the webhook is the application id and the token.
    application_id: int | None = None
    token: str | None = Field(default=None, repr=False)
    created_at: datetime


def session_key(guild_id: int | None, channel_id: int) -> str:
    """Guild + thread, or the DM channel: one conversation per Discord thread."""
    return f"discord:{guild_id}:{channel_id}" if guild_id else f"discord:dm:{channel_id}"


def channel_of(key: str) -> int:
    """The thread or DM channel a session key names."""
    return int(key.rsplit(":", 1)[1])


def guild_of(key: str) -> int | None:
    """The server (guild) a session key's conversation lives in; None for a DM or a key not Discord's."""
    parts = key.split(":")
    return int(parts[1]) if len(parts) >= 3 and parts[0] == "discord" and parts[1].isdigit() else None


def thread_name(text: str) -> str:
    """Discord thread names are 1-100 characters."""
    name = " ".join(text.split())[:90]
    return name or "agentbot"


class RecentIds:
    """Ids seen lately in this process, so a duplicate gateway delivery is not even acknowledged twice.

    The inbox is the durable guard (across restarts and workers); this one only avoids acking an
    interaction twice, which Discord would reject.
    """

    def __init__(self, size: int = 10_000):
        self.size = size
        self._ids: OrderedDict[int, None] = OrderedDict()

    def first_sight(self, key: int) -> bool:
        if key in self._ids:
            return False
        self._ids[key] = None
        if len(self._ids) > self.size:
            self._ids.popitem(last=False)
        return True
