"""A Slack thread's earlier messages, for a conversation the bot joins mid-thread (cold start)."""

from __future__ import annotations

import logging
from typing import Any

from agent.interfaces import SessionStore
from agent.types import Message
from bots.slack.events import SlackEvent, inbound_text

log = logging.getLogger("agentbot.slack")


async def thread_history(
    store: SessionStore, client: Any, ev: SlackEvent, bot_user_id: str, bot_id: str
) -> list[Message]:
    """The thread so far, when the bot meets a thread it has no session for; [] otherwise."""
    if not ev.in_thread:
        return []
    saved, _ = await store.load(ev.session_key, 0)
    if saved is not None:
        return []
    try:
        response = await client.conversations_replies(channel=ev.channel, ts=ev.root_ts, limit=200)
    except Exception as e:  # noqa: BLE001 - e.g. missing history scope: answer without the context
        log.warning("no thread history for %s: %s", ev.session_key, e)
        return []
    history = []
    for m in response.get("messages") or []:
        if float(m.get("ts", "0")) >= float(ev.ts or "inf") or not m.get("text"):
            continue  # the current message is the turn's own; later ones are not history yet
        ours = m.get("user") == bot_user_id or (bot_id and m.get("bot_id") == bot_id)
        text = inbound_text(m["text"], bot_user_id)
        # Who said it stays with the message: the thread is shared, its speakers are not.
        meta = {"slack_user": m.get("user", ""), "slack_ts": m.get("ts", "")}
        history.append(
            Message(role="agent" if ours else "user", text=text, kind="answer" if ours else "user", metadata=meta)
        )
    return history
