"""Slack payloads -> one normalized `SlackEvent`: which conversation, who, what they said.

Raw Slack JSON stays in `bots/`; everything past this module sees a `SlackEvent` (stored as the
inbox payload, so a recovered event is rebuilt the same way) and then an `Interaction`.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel

# Message subtypes that still carry text a person wrote; every other subtype (edits, deletions,
# joins, bot messages, topic changes) is not a turn.
USER_SUBTYPES = {None, "file_share", "thread_broadcast"}

# Button action ids -> what clicking the button says in the conversation.
BUTTON_TEXT = {"agentbot_confirm": "yes", "agentbot_cancel": "no", "agentbot_human": "I want to talk to a human"}
# The click as the router's action, so a confirm runs exactly the pending action, once.
BUTTON_ACTION = {"agentbot_confirm": "confirm", "agentbot_cancel": "cancel", "agentbot_human": "human"}
RESUME_ACTION = "agentbot_resume"
CLAIM_ACTION = "agentbot_claim"

_USER_MENTION = re.compile(r"<@([UW][A-Z0-9]+)(?:\|[^>]*)?>")
_LINK = re.compile(r"<([^<>|]+)\|([^<>]+)>|<([^<>|]+)>")


class SlackEvent(BaseModel):
    """A Slack delivery reduced to what a turn needs; the inbox stores it as the event payload."""

    key: str  # event_id, command trigger, or the clicked message: the exactly-once key
    kind: Literal["message", "command", "button", "control", "assistant_started"]
    team: str
    channel: str
    user: str
    text: str
    root_ts: str  # the conversation's thread root ("" for a DM without threads)
    reply_ts: str | None  # thread_ts for replies; None posts at the top level (plain DMs)
    ts: str = ""  # the message itself (a mention's ts; the clicked message for a button)
    in_thread: bool = False  # a reply inside an existing thread: history may predate the bot
    action: str = ""  # the button's action id; for control: claim | release
    user_name: str = ""  # the Slack handle, for notices such as "alex from our support team..."
    question: str = ""  # the clicked message's text, kept when its buttons are removed
    origin_channel: str = ""  # where the clicked message is (the admin channel for control)
    response_url: str = ""  # a command's reply channel to the person who ran it
    action_hash: str | None = None  # a Confirm/Cancel click: the exact action the question was about
    assistant: bool = False  # a message in an assistant thread (Slack's AI-app split view)

    @property
    def session_key(self) -> str:
        return session_key(self.team, self.channel, self.root_ts)


def session_key(team: str, channel: str, root_ts: str) -> str:
    return f"slack:{team}:{channel}:{root_ts or 'dm'}"


def parse_session_key(key: str) -> tuple[str, str, str] | None:
    """(team, channel, thread root ts or "") of a Slack session key; None for other channels."""
    parts = key.split(":")
    if len(parts) != 4 or parts[0] != "slack":
        return None
    return parts[1], parts[2], "" if parts[3] == "dm" else parts[3]


def inbound_text(text: str, bot_user_id: str) -> str:
    """Slack's markup -> plain text: drop the bot's mention, show others as @U.., unescape."""
    text = text.replace(f"<@{bot_user_id}>", " ")
    text = _USER_MENTION.sub(lambda m: f"@{m.group(1)}", text)
    text = _LINK.sub(lambda m: m.group(2) or m.group(3) or "", text)
    text = text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")
    return " ".join(text.split())


def from_message(body: dict[str, Any], bot_user_id: str, *, mention: bool) -> SlackEvent | None:
    """An `app_mention` or `message` event; None for what is not a person talking."""
    event = body.get("event") or {}
    if event.get("bot_id") or event.get("subtype") not in USER_SUBTYPES:
        return None
    user, text = event.get("user") or "", event.get("text") or ""
    if not user or user == bot_user_id or not text.strip():
        return None
    channel, ts = event.get("channel") or "", event.get("ts") or ""
    thread_ts = event.get("thread_ts")
    is_dm = event.get("channel_type") == "im" or channel.startswith("D")
    if thread_ts:
        root, reply = thread_ts, thread_ts
    elif is_dm and not mention:
        # A direct message conversation is the DM itself; answers stay flat like a chat.
        root, reply = "", None
    else:
        root, reply = ts, ts  # a top-level mention starts a thread under itself
    return SlackEvent(
        key=body.get("event_id") or f"{channel}:{ts}",
        kind="message",
        team=body.get("team_id") or event.get("team") or "",
        channel=channel,
        user=user,
        text=inbound_text(text, bot_user_id),
        root_ts=root,
        reply_ts=reply,
        ts=ts,
        in_thread=bool(thread_ts) and thread_ts != ts,
    )


def from_assistant_message(body: dict[str, Any], bot_user_id: str) -> SlackEvent | None:
    """A person's message in an assistant thread: the thread is the conversation, the bot always
    takes part, and nothing in it predates the bot's greeting."""
    ev = from_message(body, bot_user_id, mention=False)
    return ev.model_copy(update={"assistant": True, "in_thread": False}) if ev is not None else None


def from_thread_started(body: dict[str, Any]) -> SlackEvent | None:
    """`assistant_thread_started`: someone opened the split view; the bot greets them."""
    thread = (body.get("event") or {}).get("assistant_thread") or {}
    channel, thread_ts = thread.get("channel_id") or "", thread.get("thread_ts") or ""
    if not channel or not thread_ts:
        return None
    return SlackEvent(
        key=body.get("event_id") or f"assistant:{channel}:{thread_ts}",
        kind="assistant_started",
        team=body.get("team_id") or (thread.get("context") or {}).get("team_id") or "",
        channel=channel,
        user=thread.get("user_id") or "",
        text="",
        root_ts=thread_ts,
        reply_ts=thread_ts,
        ts=thread_ts,
        assistant=True,
    )


def mentions_bot(body: dict[str, Any], bot_user_id: str) -> bool:
    return f"<@{bot_user_id}>" in ((body.get("event") or {}).get("text") or "")


def from_button(body: dict[str, Any]) -> SlackEvent | None:
    """A Confirm / Cancel / human button click in a conversation thread."""
    action = (body.get("actions") or [{}])[0]
    action_id = action.get("action_id", "")
    message = body.get("message") or {}
    container = body.get("container") or {}
    channel = (body.get("channel") or {}).get("id") or container.get("channel_id") or ""
    message_ts = container.get("message_ts") or message.get("ts") or ""
    if action_id not in BUTTON_TEXT or not channel or not message_ts:
        return None
    thread_ts = message.get("thread_ts") or container.get("thread_ts")
    team = (body.get("team") or {}).get("id") or ""
    # The button's value carries the session the question belongs to (set when it was posted) and,
    # for Confirm/Cancel, the action it asked about.
    value, action_hash = (action.get("value") or "").partition("#")[::2]
    parsed = parse_session_key(value)
    if parsed and parsed[0] != team:
        return None  # a button names a conversation of another workspace: not this click's to answer
    root = parsed[2] if parsed else (thread_ts or "")
    user = (body.get("user") or {}).get("id") or ""
    return SlackEvent(
        # One answer per person per question: a double click is a duplicate; someone else's click
        # is theirs (and refused by the router), so it cannot use up the requester's answer.
        key=f"button:{team}:{channel}:{message_ts}:{user}",
        kind="button",
        team=team,
        channel=channel,
        user=user,
        text=BUTTON_TEXT[action_id],
        root_ts=root,
        reply_ts=root or None,
        ts=message_ts,
        action=action_id,
        user_name=(body.get("user") or {}).get("username") or (body.get("user") or {}).get("name") or "",
        question=message.get("text") or "",
        origin_channel=channel,
        action_hash=action_hash or None,
    )


def from_control(body: dict[str, Any]) -> SlackEvent | None:
    """An admin's Claim / Resume bot click on a handoff alert; the value names the conversation."""
    action = (body.get("actions") or [{}])[0]
    action_id = action.get("action_id", "")
    parsed = parse_session_key(action.get("value") or "")
    container = body.get("container") or {}
    alert_channel = (body.get("channel") or {}).get("id") or container.get("channel_id") or ""
    alert_ts = container.get("message_ts") or (body.get("message") or {}).get("ts") or ""
    if action_id not in (RESUME_ACTION, CLAIM_ACTION) or parsed is None:
        return None
    team, channel, root = parsed
    verb = "release" if action_id == RESUME_ACTION else "claim"
    user = body.get("user") or {}
    return SlackEvent(
        key=f"control:{alert_channel}:{alert_ts}:{verb}",
        kind="control",
        team=team,
        channel=channel,
        user=user.get("id") or "",
        text=verb,
        root_ts=root,
        reply_ts=root or None,
        ts=alert_ts,
        action=verb,
        user_name=user.get("username") or user.get("name") or "",
        question=(body.get("message") or {}).get("text") or "",
        origin_channel=alert_channel,
    )
