"""Slack's assistant threads (the AI-app split view) through bolt's `AsyncAssistant`.

Request path: `assistant_thread_started` / a user's message in the thread -> bolt's AsyncAssistant
matches it -> our listener middleware stores it in the inbox (before the ack, like every event)
-> the dispatcher runs it later: a greeting and the store's suggested prompts, or a turn whose
pre-message becomes the thread's status line and whose first request titles the thread.
`assistant_thread_context_changed` (the channel the person is looking at) is saved by bolt's
default listener into `SqlThreadContextStore`, and each turn reads it back.
"""

from __future__ import annotations

from typing import Any

from slack_bolt.context.assistant.thread_context import AssistantThreadContext
from slack_bolt.context.assistant.thread_context_store.async_store import AsyncAssistantThreadContextStore
from slack_bolt.context.set_status.async_set_status import AsyncSetStatus
from slack_bolt.context.set_suggested_prompts.async_set_suggested_prompts import AsyncSetSuggestedPrompts
from slack_bolt.context.set_title.async_set_title import AsyncSetTitle

from adapters.storage.slack_records import SlackRecords
from agent.config.schema import AssistantSettings
from agent.domain.types import OutboundMessage
from bots.slack.delivery import ThreadReply

TITLE_LIMIT = 60  # a title longer than the sidebar shows is cut with an ellipsis
WORKING = "is working on it..."  # the status line from the moment a turn starts, until a pre-message names the work


class SqlThreadContextStore(AsyncAssistantThreadContextStore):
    """bolt's thread context store in the bot's database (bolt's default keeps it in the metadata of
    the bot's first reply, which our messages use for their outbound ids)."""

    def __init__(self, records: SlackRecords):
        self.records = records

    async def save(self, *, channel_id: str, thread_ts: str, context: dict[str, str]) -> None:
        await self.records.save_thread_context(channel_id, thread_ts, dict(context))

    async def find(self, *, channel_id: str, thread_ts: str) -> AssistantThreadContext | None:
        found = await self.records.thread_context(channel_id, thread_ts)
        return AssistantThreadContext(found) if found and found.get("channel_id") else None


def status_line(pre_message: str) -> str:
    """A pre-message as Slack's status line, which follows the app's name: "Checking order
    O-12345..." reads "agentbot is checking order O-12345..."."""
    first, _, rest = pre_message.strip().partition(" ")
    if first.lower().endswith("ing"):
        return f"is {first[:1].lower()}{first[1:]} {rest}".strip()
    return WORKING


def title_for(request: str) -> str:
    text = " ".join(request.split())
    return text if len(text) <= TITLE_LIMIT else text[: TITLE_LIMIT - 1].rstrip() + "…"


class AssistantThreadReply:
    """The Slack sender of a turn in an assistant thread: the status line shows the turn is under
    way (`working`), the pre-message becomes it, everything else is posted, and `clear` ends it
    (Slack also clears it when the answer is posted).

    Args:
        thread: the ThreadReply posting into the assistant thread.
        client: the workspace's `AsyncWebClient`.
    """

    def __init__(self, thread: ThreadReply, client: Any):
        self.thread = thread
        self.status = AsyncSetStatus(client, thread.channel, thread.thread_ts or "")

    async def deliver(self, message: OutboundMessage, *, recovering: bool) -> str:
        if message.kind == "pre":
            await self.status(status_line(message.text), loading_messages=[message.text])
            return ""
        return await self.thread.deliver(message, recovering=recovering)

    async def working(self) -> None:
        await self.status(WORKING)

    async def clear(self) -> None:
        await self.status("")


async def offer_prompts(client: Any, channel: str, thread_ts: str, settings: AssistantSettings) -> None:
    """The store's suggested prompts under the greeting."""
    prompts = [{"title": p.title, "message": p.message} for p in settings.prompts]
    await AsyncSetSuggestedPrompts(client, channel, thread_ts)(prompts=prompts, title=settings.prompts_title)


async def set_title(client: Any, channel: str, thread_ts: str, request: str) -> None:
    await AsyncSetTitle(client, channel, thread_ts)(title_for(request))
