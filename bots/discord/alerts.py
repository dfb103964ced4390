"""Admin alerts in a Discord channel, one AlertNotifier behind the AlertFanout (which de-duplicates).

A handoff alert links the conversation's thread and carries a "Resume bot" button that gives the
conversation back to the bot; until then the bot stays silent in that thread.
"""

from __future__ import annotations

import logging

import discord

from agent.domain.types import Alert
from bots.discord.delivery import NO_MENTIONS, resume_view, split

log = logging.getLogger("agentbot.discord.alerts")

TITLES = {
    "handoff": "Human handoff requested",
    "policy_denied": "Policy blocked a tool call",
    "policy_escalation": "Policy escalation",
    "tool_failure": "Tool failure",
    "provider_outage": "LLM provider outage",
    "risk_report": "High-risk release report",
}


def alert_text(alert: Alert) -> str:
    lines = [f"**{TITLES.get(alert.kind, alert.kind)}**", alert.summary]
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
    """
    Args:
        channel_id: the admin channel (DISCORD_ADMIN_CHANNEL_ID).
    """

    def __init__(self, channel_id: int):
        self.channel_id = channel_id
        self._client: discord.Client | None = None

    def bind(self, client: discord.Client) -> None:
        """The client is built after the router (it needs it), so it attaches itself here."""
        self._client = client

    async def notify(self, alert: Alert) -> None:
        if self._client is None:
            log.warning("discord admin alert %s dropped: no client yet", alert.kind)
            return
        channel = self._client.get_partial_messageable(self.channel_id)
        text = split(alert_text(alert))[0]
        if alert.kind == "handoff":
            await channel.send(text, allowed_mentions=NO_MENTIONS, view=resume_view(alert.session_id))
        else:
            await channel.send(text, allowed_mentions=NO_MENTIONS)
