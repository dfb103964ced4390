"""Admin alerts as messages in a Slack admin channel; one AlertNotifier behind the AlertFanout."""

from __future__ import annotations

import logging
from typing import Any

from agent.types import Alert
from bots.slack.delivery import escape
from bots.slack.events import CLAIM_ACTION, RESUME_ACTION, parse_session_key

log = logging.getLogger("agentbot.slack.alerts")

TITLES = {
    "handoff": ":raising_hand: Human handoff requested",
    "tool_failure": ":warning: Tool failure",
    "provider_outage": ":rotating_light: Provider outage",
    "policy_denied": ":no_entry: Policy denied a tool call",
    "policy_escalation": ":eyes: Policy escalation",
    "risk_report": ":chart_with_upwards_trend: High-risk release report",
}


class SlackAlertNotifier:
    """
    Args:
        client: an `AsyncWebClient`.
        channel: the admin channel id (`SLACK_ADMIN_CHANNEL`).
    """

    def __init__(self, client: Any, channel: str):
        self.client = client
        self.channel = channel

    async def notify(self, alert: Alert) -> None:
        link = await self._thread_link(alert.session_id)
        text = f"{TITLES.get(alert.kind, alert.kind)}: {escape(alert.summary)}"
        await self.client.chat_postMessage(channel=self.channel, text=text, blocks=self.blocks(alert, link))

    def blocks(self, alert: Alert, link: str | None) -> list[dict[str, Any]]:
        details = alert.details
        lines = [f"*{TITLES.get(alert.kind, alert.kind)}*", escape(alert.summary)]
        if customer := details.get("customer_id"):
            lines.append(f"*Customer:* {escape(str(customer))}")
        elif alert.kind == "handoff":
            lines.append("*Customer:* guest")
        lines.append(f"*Conversation:* <{link}|open the thread>" if link else f"*Session:* `{alert.session_id}`")
        blocks: list[dict[str, Any]] = [{"type": "section", "text": {"type": "mrkdwn", "text": "\n".join(lines)}}]
        if last := details.get("last_messages"):
            quoted = "\n".join(f"> {escape(str(m))[:300]}" for m in last)
            blocks.append({"type": "section", "text": {"type": "mrkdwn", "text": f"*Last messages:*\n{quoted}"}})
        if alert.kind == "handoff" and parse_session_key(alert.session_id):
            blocks.append(
                {
                    "type": "actions",
                    "block_id": "agentbot_handoff",
                    "elements": [
                        _button("Claim", CLAIM_ACTION, alert.session_id, None),
                        _button("Resume bot", RESUME_ACTION, alert.session_id, "primary"),
                    ],
                }
            )
        return blocks

    async def _thread_link(self, session_id: str) -> str | None:
        parsed = parse_session_key(session_id)
        if parsed is None or not parsed[2]:
            return None
        _team, channel, root = parsed
        try:
            response = await self.client.chat_getPermalink(channel=channel, message_ts=root)
        except Exception:  # noqa: BLE001 - the alert goes out without a link rather than not at all
            log.warning("no permalink for %s", session_id)
            return None
        return str(response.get("permalink") or "") or None


def _button(label: str, action_id: str, value: str, style: str | None) -> dict[str, Any]:
    button: dict[str, Any] = {
        "type": "button",
        "text": {"type": "plain_text", "text": label},
        "action_id": action_id,
        "value": value,
    }
    if style:
        button["style"] = style
    return button
