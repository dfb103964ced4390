"""What the bot learns from a Slack thread itself: whether it takes part, and what was said so far."""

from __future__ import annotations

import logging
from typing import Any

from agent.domain.types import Message
from bots.slack.events import SlackEvent, inbound_text

log = logging.getLogger("agentbot.slack")


class Me:
    """Who the bot is in this workspace (from auth.test)."""

    def __init__(self, user_id: str = "", bot_id: str = ""):
        self.user_id, self.bot_id = user_id, bot_id

    def wrote(self, m: dict[str, Any]) -> bool:
        return m.get("user") == self.user_id or bool(self.bot_id and m.get("bot_id") == self.bot_id)

    def mentioned_in(self, m: dict[str, Any]) -> bool:
        return bool(self.user_id) and f"<@{self.user_id}>" in (m.get("text") or "")


async def bot_in_thread(client: Any, ev: SlackEvent, me: Me) -> bool:
    """A reply in a thread the bot has no record of yet: it belongs to the bot when the thread's root
    mentions it or the bot already wrote there. This covers a reply that arrives before its root
    mention was stored (that delivery failed and awaits Slack's retry)."""
    try:
        page = await client.conversations_replies(channel=ev.channel, ts=ev.root_ts, limit=50)
    except Exception as e:  # noqa: BLE001 - e.g. a missing history scope: only mentions are answered
        log.warning("cannot read thread %s: %s", ev.session_key, e)
        return False
    messages = page.get("messages") or []
    return any(me.wrote(m) or (m.get("ts") == ev.root_ts and me.mentioned_in(m)) for m in messages)


async def thread_history(client: Any, ev: SlackEvent, me: Me) -> list[Message]:
    """The thread so far, when the bot meets a thread it has no session for (cold start)."""
    try:
        response = await client.conversations_replies(channel=ev.channel, ts=ev.root_ts, limit=200)
    except Exception as e:  # noqa: BLE001 - e.g. missing history scope: answer without the context
        log.warning("no thread history for %s: %s", ev.session_key, e)
        return []
    history = []
    for m in response.get("messages") or []:
        if float(m.get("ts", "0")) >= float(ev.ts or "inf") or not m.get("text"):
            continue  # the current message is the turn's own; later ones are not history yet
        ours = me.wrote(m)
        text = inbound_text(m["text"], me.user_id)
        meta = {"slack_user": m.get("user", ""), "slack_ts": m.get("ts", "")}
        history.append(
            Message(role="agent" if ours else "user", text=text, kind="answer" if ours else "user", metadata=meta)
        )
    return history
