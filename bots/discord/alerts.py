"""Admin alerts in a Discord channel, one AlertNotifier behind the AlertFanout (which de-duplicates).

A handoff alert links the conversation's thread and carries a "Resume bot" button that gives the
conversation back to the bot; until then the bot stays silent in that thread.
"""

from __future__ import annotations

import logging

import discord

from adapters.storage.discord_records import DiscordRecords
from agent.domain.types import Alert, CoreAlert
from bots.alerts import heading
from bots.discord.delivery import NO_MENTIONS, resume_view, split
from bots.discord.events import guild_of

log = logging.getLogger("agentbot.discord.alerts")


def alert_text(alert: Alert) -> str:
    lines = [f"**{heading(alert)}**", alert.summary]
    if alert.session_id.startswith("discord:") and not alert.session_id.startswith("discord:dm:"):
        lines.append(f"Conversation: <#{alert.session_id.rsplit(':', 1)[1]}>")
    else:
        lines.append(f"Session: `{alert.session_id}`")
    last = alert.details.get("last_messages") or []
    if last:
        lines.append("Last messages:")
        lines.extend(f"> {line[:300]}" for line in last)
    return "\n".join(lines)


class DiscordAdminAlerts:
    """Posts each alert in the admin channel of the server its conversation lives in.

    A server's own channel (set there with `/agentbot admin-channel`) comes first; the default
    channel takes DMs' alerts and those of its own server, never another server's: an alert
    with nowhere to go stays with the log notifier beside this one.

    Args:
        default_channel_id: `DISCORD_ADMIN_CHANNEL_ID` (None: only servers' own channels).
    """

    def __init__(self, default_channel_id: int | None = None):
        self.default_channel_id = default_channel_id
        self._client: discord.Client | None = None
        self._records: DiscordRecords | None = None
        self._default_guild: int | None = None  # the default channel's server, once known

    def bind(self, client: discord.Client, records: DiscordRecords) -> None:
        """The client is built after the router (it needs it), so it attaches itself here."""
        self._client, self._records = client, records

    async def notify(self, alert: Alert) -> None:
        if self._client is None or self._records is None:
            log.warning("discord admin alert %s dropped: no client yet", alert.kind)
            return
        channel_id = await self.channel_for(alert.session_id)
        if channel_id is None:
            log.info("discord admin alert %s: no admin channel for this conversation's server", alert.kind)
            return
        channel = self._client.get_partial_messageable(channel_id)
        text = split(alert_text(alert))[0]
        if alert.kind == CoreAlert.HANDOFF:
            await channel.send(text, allowed_mentions=NO_MENTIONS, view=resume_view(alert.session_id))
        else:
            await channel.send(text, allowed_mentions=NO_MENTIONS)

    async def channel_for(self, session_id: str) -> int | None:
        """The admin channel for a conversation: its server's, else the default one if that is its
        server's (or the conversation is a DM)."""
        assert self._records is not None
        guild = guild_of(session_id)
        if guild is not None and (own := await self._records.admin_channel(guild)) is not None:
            return own
        if self.default_channel_id is None:
            return None
        if guild is None or guild == await self.default_guild():
            return self.default_channel_id
        return None

    async def default_guild(self) -> int | None:
        """The server the default channel is in: from discord.py's cache, else asked of Discord once."""
        if self._default_guild is None and self._client is not None and self.default_channel_id is not None:
            channel = self._client.get_channel(self.default_channel_id)
            if channel is None:
                try:
                    channel = await self._client.fetch_channel(self.default_channel_id)
                except discord.HTTPException as e:
                    log.warning("cannot see DISCORD_ADMIN_CHANNEL_ID's channel (%s %s)", e.status, e.code)
                    return None
            if isinstance(channel, discord.abc.GuildChannel | discord.Thread):
                self._default_guild = channel.guild.id
        return self._default_guild
