"""Admin alerts as messages in a Slack admin channel; one AlertNotifier behind the AlertFanout."""

from __future__ import annotations

import logging
from typing import Any

from agent.domain.types import Alert, CoreAlert
from bots.alerts import heading
from bots.slack.delivery import escape
from bots.slack.events import CLAIM_ACTION, RESUME_ACTION, parse_session_key
from bots.slack.workspaces import Workspace, Workspaces

log = logging.getLogger("agentbot.slack.alerts")


def _title(alert: Alert) -> str:
    return f"{alert.icon} {heading(alert)}" if alert.icon else heading(alert)


class SlackAlertNotifier:
    """Posts each alert in the admin channel of the workspace its conversation belongs to.

    Args:
        workspaces: the workspaces served; each has its client and admin channel (`SLACK_ADMIN_CHANNEL`
            for a single token, set with `/agentbot admin-channel` in an OAuth workspace).
    """

    def __init__(self, workspaces: Workspaces):
        self.workspaces = workspaces

    async def notify(self, alert: Alert) -> None:
        parsed = parse_session_key(alert.session_id)
        ws = await self.workspaces.get(parsed[0] if parsed else "")
        if ws is None or not ws.admin_channel:
            return  # no admin channel there: the log notifier beside this one has the alert
        link = await self._thread_link(ws, alert.session_id)
        text = f"{_title(alert)}: {escape(alert.summary)}"
        await ws.client.chat_postMessage(channel=ws.admin_channel, text=text, blocks=self.blocks(alert, link))

    def blocks(self, alert: Alert, link: str | None) -> list[dict[str, Any]]:
        details = alert.details
        lines = [f"*{_title(alert)}*", escape(alert.summary)]
        if customer := details.get("customer_id"):
            lines.append(f"*Customer:* {escape(str(customer))}")
        elif alert.kind == CoreAlert.HANDOFF:
            lines.append("*Customer:* guest")
        lines.append(f"*Conversation:* <{link}|open the thread>" if link else f"*Session:* `{alert.session_id}`")
        blocks: list[dict[str, Any]] = [{"type": "section", "text": {"type": "mrkdwn", "text": "\n".join(lines)}}]
        if last := details.get("last_messages"):
            quoted = "\n".join(f"> {escape(str(m))[:300]}" for m in last)
            blocks.append({"type": "section", "text": {"type": "mrkdwn", "text": f"*Last messages:*\n{quoted}"}})
        if alert.kind == CoreAlert.HANDOFF and parse_session_key(alert.session_id):
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

    async def _thread_link(self, ws: Workspace, session_id: str) -> str | None:
        parsed = parse_session_key(session_id)
        if parsed is None or not parsed[2]:
            return None
        _team, channel, root = parsed
        try:
            response = await ws.client.chat_getPermalink(channel=channel, message_ts=root)
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
