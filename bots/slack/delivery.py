"""Posting a turn's messages into a Slack thread: escaping, splitting, Block Kit buttons.

Each OutboundMessage is posted as a new message in the thread (the pre-message is not edited into
the answer): Slack notifies people of new messages but not of edits, so a customer who looked away
while a slow tool ran is pinged when the answer lands, and the thread keeps the visible trace
"Checking order O-12345..." -> answer.
"""

from __future__ import annotations

import logging
import re
from typing import Any

from agent.domain.types import Option, OutboundMessage
from agent.text import visible
from bots.delivery import split_text
from bots.slack.mrkdwn import to_mrkdwn

log = logging.getLogger("agentbot.slack")

METADATA_EVENT = "agentbot_message"  # Slack message metadata type naming our outbound ids

# A section block's text is limited to 3000 characters; plain text to 4000 (longer is truncated).
SECTION_LIMIT = 3000

BUTTONS = {
    "confirm": ("Confirm", "agentbot_confirm", "primary"),
    "cancel": ("Cancel", "agentbot_cancel", "danger"),
    "human": ("Talk to a human", "agentbot_human", None),
}

# A question's choices are buttons "agentbot_choose_<n>" (action ids are unique in a block);
# their value names the conversation, the question and the choice: "<session>#<question>#<choice>".
CHOOSE_ACTION = "agentbot_choose_"
BUTTON_TEXT_LIMIT = 75  # Slack's limit on a button's text

_BROADCAST = re.compile(r"@(channel|here|everyone)\b", re.IGNORECASE)


def escape(text: str) -> str:
    """Make text inert in Slack: no <!channel>, <!here>, <@U..> or links can be formed from it.

    Bidi overrides and other invisible characters are dropped (they make text read differently
    than it is), Slack's control characters are escaped, so `<!here>` arrives as literal text, and
    a bare `@here` gets a word joiner so no client or `link_names` setting turns it into a ping.
    """
    text = visible(text)
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return _BROADCAST.sub(lambda m: "@\u2060" + m.group(1), text)


def split(text: str, limit: int = SECTION_LIMIT) -> list[str]:
    return split_text(text, limit)


def button_value(session_key: str, action_hash: str | None) -> str:
    """What a button carries: the conversation, and the exact action a Confirm/Cancel answers."""
    return f"{session_key}#{action_hash}" if action_hash else session_key


def plain(text: str) -> dict[str, Any]:
    """Text Slack shows as typed: user words in it cannot start bold, code, quotes or links."""
    return {"type": "plain_text", "text": text, "emoji": True}


def choice_value(session_key: str, question: str, value: str) -> str:
    """What a choice's button carries: the conversation, the question and the choice."""
    return f"{session_key}#{question}#{value}"


def _label(text: str) -> str:
    return text if len(text) <= BUTTON_TEXT_LIMIT else text[: BUTTON_TEXT_LIMIT - 1] + "…"


def button_blocks(
    text: str,
    buttons: list[str],
    session_key: str,
    action_hash: str | None = None,
    choices: list[Option] | None = None,
) -> list[dict[str, Any]]:
    """A section with the (escaped) text and an actions block of the question's choices and the
    requested buttons."""
    elements: list[dict[str, Any]] = [
        {
            "type": "button",
            "text": plain(_label(visible(option.label))),
            "action_id": f"{CHOOSE_ACTION}{n}",
            "value": choice_value(session_key, action_hash or "", option.value),
        }
        for n, option in enumerate(choices or [])
    ]
    for name in buttons:
        label, action_id, style = BUTTONS[name]
        element: dict[str, Any] = {
            "type": "button",
            "text": {"type": "plain_text", "text": label},
            "action_id": action_id,
            # The conversation the click continues, and for Confirm/Cancel the action it answers.
            "value": button_value(session_key, action_hash if name != "human" else None),
        }
        if style:
            element["style"] = style
        elements.append(element)
    return [
        {"type": "section", "text": plain(text)},
        {"type": "actions", "block_id": "agentbot_buttons", "elements": elements},
    ]


def asked_blocks(user: str, text: str) -> list[dict[str, Any]]:
    """ "<@user> asked: ..." with the question as plain text: it cannot format, link or mention."""
    return [
        {"type": "context", "elements": [{"type": "mrkdwn", "text": f"<@{user}> asked:"}]},
        {"type": "section", "text": plain(visible(text))},
    ]


def answered_blocks(text: str, note: str) -> list[dict[str, Any]]:
    """The question after a click: its buttons replaced by who answered what."""
    return [
        {"type": "section", "text": plain(text)},
        {"type": "context", "elements": [{"type": "mrkdwn", "text": note}]},
    ]


class ThreadReply:
    """Posts a turn's messages into one thread; the Slack half of `bots.outbox.OutboxReply`.

    Every part carries message metadata with its outbound id, so a sender recovering from a
    crash can see in the thread itself (`conversations.replies` with metadata) what was posted.

    Args:
        client: an `AsyncWebClient` (its base URL and retry handlers set by the composition root).
        channel: the Slack channel id.
        thread_ts: the thread to answer in; None answers at the top level (a plain DM).
        session_key: written into buttons so a click finds its conversation.
        user: who wrote the message being answered; private messages go to them only (ephemeral).
    """

    def __init__(self, client: Any, channel: str, thread_ts: str | None, session_key: str, user: str = ""):
        self.client = client
        self.channel = channel
        self.thread_ts = thread_ts
        self.session_key = session_key
        self.user = user
        self.posted: list[str] = []  # ts of every message posted, in order

    async def __call__(self, message: OutboundMessage) -> None:
        await self.deliver(message, recovering=False)

    async def deliver(self, message: OutboundMessage, *, recovering: bool) -> str:
        if not self.channel:
            log.warning("slack: message %s has no channel to go to; not sent", message.id)
            return ""
        if message.private and self.user:
            await self._whisper(message)
            return ""
        chunks = split(to_mrkdwn(message.text, escape))
        seen = await self.posted_ids() if recovering and message.id else {}
        ts = ""
        for i, chunk in enumerate(chunks):
            part_id = f"{message.id}/{i}"
            if part_id in seen:
                ts = seen[part_id]
                continue
            last = i == len(chunks) - 1
            # mrkdwn off: the bot writes plain sentences, and user words quoted in them stay words.
            kwargs: dict[str, Any] = {"channel": self.channel, "text": chunk, "mrkdwn": False}
            if self.thread_ts:
                kwargs["thread_ts"] = self.thread_ts
            if message.id:
                kwargs["metadata"] = {"event_type": METADATA_EVENT, "event_payload": {"id": part_id}}
            if last and (message.buttons or message.choices):
                kwargs["blocks"] = button_blocks(
                    chunk, list(message.buttons), self.session_key, message.action_hash, message.choices
                )
            response = await self.client.chat_postMessage(**kwargs)
            ts = str(response.get("ts", ""))
            self.posted.append(ts)
        return ts

    async def _whisper(self, message: OutboundMessage) -> None:
        """A private notice (chat.postEphemeral), which has no `mrkdwn` switch: its text is escaped
        but not converted to mrkdwn, and shown through a plain-text block, so nothing in it can
        format, link or mention."""
        chunks = split(escape(message.text))
        for i, chunk in enumerate(chunks):
            last = i == len(chunks) - 1
            buttons: list[str] = list(message.buttons) if last else []
            choices = message.choices if last else []
            blocks = (
                button_blocks(chunk, buttons, self.session_key, message.action_hash, choices)
                if buttons or choices
                else [{"type": "section", "text": plain(chunk)}]
            )
            kwargs: dict[str, Any] = {"channel": self.channel, "user": self.user, "text": chunk, "blocks": blocks}
            if self.thread_ts:
                kwargs["thread_ts"] = self.thread_ts
            await self.client.chat_postEphemeral(**kwargs)

    async def posted_ids(self) -> dict[str, str]:
        """Outbound part id -> ts of what this bot already posted where this reply posts."""
        found: dict[str, str] = {}
        cursor = None
        for _ in range(10):  # 2000 messages back is far beyond any crash window
            if self.thread_ts:
                page = await self.client.conversations_replies(
                    channel=self.channel, ts=self.thread_ts, include_all_metadata=True, limit=200, cursor=cursor
                )
            else:
                page = await self.client.conversations_history(
                    channel=self.channel, include_all_metadata=True, limit=200, cursor=cursor
                )
            for m in page.get("messages") or []:
                meta = m.get("metadata") or {}
                if meta.get("event_type") == METADATA_EVENT:
                    found[str((meta.get("event_payload") or {}).get("id"))] = str(m.get("ts", ""))
            cursor = (page.get("response_metadata") or {}).get("next_cursor")
            if not cursor:
                break
        return found
