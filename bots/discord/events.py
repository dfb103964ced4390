"""Discord settings and the event a Discord channel stores in the inbox before doing any work.

Raw discord.py objects never leave bots/discord_*.py: an interaction or message becomes a
`DiscordEvent` (JSON in the inbox, so a crash can replay it) and then an agent `Interaction`.
"""

from __future__ import annotations

from collections import OrderedDict
from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from agent.errors import ConfigError
from bots.settings import DeploySettings, DiscordVariables

DEFAULT_API_BASE = DiscordVariables.model_fields["api_base"].default
DEFAULT_GATEWAY = DiscordVariables.model_fields["gateway_url"].default


class DiscordSettings(BaseModel):
    """Everything the Discord channel needs; `from_settings` is called by the composition root only."""

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
    def from_settings(cls, deploy: DeploySettings) -> DiscordSettings:
        """The channel's settings from the environment's (bots/settings.py); no token stops startup."""
        variables = deploy.discord
        if variables.bot_token is None:
            raise ConfigError(
                "environment",
                "not set; create a Discord bot at https://discord.com/developers/applications "
                "and set its token (see the docs, 'Discord setup')",
                field="DISCORD_BOT_TOKEN",
            )
        shard_count, shard_ids = _shards(variables)
        return cls(
            token=variables.bot_token.get_secret_value(),
            guild_id=variables.guild_id,
            admin_channel_id=variables.admin_channel_id,
            admin_user_ids=variables.admin_user_ids,
            admin_role_ids=variables.admin_role_ids,
            api_base=variables.api_base,
            gateway_url=variables.gateway_url,
            ask_command=variables.ask_command,
            reconcile_commands=not variables.keep_commands,
            shard_count=shard_count,
            shard_ids=shard_ids,
        )


def _shards(variables: DiscordVariables) -> tuple[int | None, list[int] | None]:
    """DISCORD_SHARD_COUNT (a number, or `auto` for Discord's recommendation) and DISCORD_SHARD_IDS."""
    count, ids = variables.shard_count, sorted(variables.shard_ids or []) or None
    if count is None:
        if ids:
            raise ConfigError("environment", "shard ids need DISCORD_SHARD_COUNT as well", field="DISCORD_SHARD_IDS")
        return None, None
    if count == "auto":
        if ids:
            raise ConfigError(
                "environment", "shard ids need a fixed DISCORD_SHARD_COUNT, not auto", field="DISCORD_SHARD_IDS"
            )
        return 0, None
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
