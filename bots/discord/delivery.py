"""Discord delivery: where a turn's messages go (a thread, a DM, interaction follow-ups) and how.

Every message is split at Discord's 2000-character limit, sent with mentions disabled (so user
text echoed back can never ping @everyone or a role), and carries the turn's buttons on its last
part. Buttons are `DynamicItem`s: the custom_id holds the action and the one user allowed to
press it, so they keep working after a restart without any stored view.
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any, Protocol

import discord

from agent.domain.types import Option, OutboundMessage
from bots.delivery import split_text
from bots.outbox import nonce

if TYPE_CHECKING:
    import re

log = logging.getLogger("agentbot.discord")

LIMIT = 2000
NO_MENTIONS = discord.AllowedMentions.none()
# Interaction tokens live 15 minutes; follow-ups stop a minute early and fall back to the channel.
FOLLOWUP_WINDOW = timedelta(minutes=14)
NOT_YOURS = "Only the person who asked can use these buttons."
LABEL_LIMIT = 80  # Discord's limit on a button's label
CUSTOM_ID_LIMIT = 100

# button -> (label, style, what the click says to the bot)
BUTTONS: dict[str, tuple[str, discord.ButtonStyle, str]] = {
    "confirm": ("Confirm", discord.ButtonStyle.success, "yes"),
    "cancel": ("Cancel", discord.ButtonStyle.secondary, "no"),
    "human": ("Talk to a human", discord.ButtonStyle.primary, "I want to talk to a human"),
}


def split(text: str, limit: int = LIMIT) -> list[str]:
    return split_text(text, limit)


class ButtonHandler(Protocol):
    """What the client does with a click (the bot in discord_bot.py)."""

    async def on_reply_button(self, interaction: discord.Interaction, action: str) -> None: ...

    async def on_resume_button(self, interaction: discord.Interaction, session_key: str) -> None: ...

    async def on_decide_button(
        self, interaction: discord.Interaction, verdict: str, escalation: str, session_key: str
    ) -> None: ...

    async def on_choice_button(
        self, interaction: discord.Interaction, question: str, value: str, label: str
    ) -> None: ...


async def only_owner(interaction: discord.Interaction, owner: int) -> bool:
    """Whether the click is the asked person's; anyone else is told privately that it is not theirs."""
    if interaction.user.id == owner:
        return True
    await interaction.response.send_message(NOT_YOURS, ephemeral=True)
    return False


class ReplyButton(
    discord.ui.DynamicItem[discord.ui.Button[Any]], template=r"agentbot:(?P<action>confirm|cancel|human):(?P<owner>\d+)"
):
    """Confirm / Cancel / Talk to a human, pressable only by `owner` (the user the bot answered)."""

    def __init__(self, action: str, owner: int):
        label, style, _ = BUTTONS[action]
        super().__init__(discord.ui.Button(label=label, style=style, custom_id=f"agentbot:{action}:{owner}"))
        self.action = action
        self.owner = owner

    @classmethod
    async def from_custom_id(
        cls, interaction: discord.Interaction, item: discord.ui.Item[Any], match: re.Match[str], /
    ) -> ReplyButton:
        return cls(match["action"], int(match["owner"]))

    async def interaction_check(self, interaction: discord.Interaction) -> bool:
        return await only_owner(interaction, self.owner)

    async def callback(self, interaction: discord.Interaction) -> None:  # type: ignore[override]
        handler: ButtonHandler = interaction.client  # type: ignore[assignment]
        await handler.on_reply_button(interaction, self.action)


class ChoiceButton(
    discord.ui.DynamicItem[discord.ui.Button[Any]],
    template=r"agentbot:choose:(?P<owner>\d+):(?P<question>[\w-]+):(?P<value>[\w.-]+)",
):
    """One of a question's choices ("Did you mean ...?", "Which one ...?"), pressable only by `owner`.
    The custom_id names the question and the choice, so a click answers that question and no other."""

    def __init__(self, owner: int, question: str, value: str, label: str = ""):
        super().__init__(
            discord.ui.Button(
                label=(label or value)[:LABEL_LIMIT],
                style=discord.ButtonStyle.secondary,
                custom_id=f"agentbot:choose:{owner}:{question}:{value}"[:CUSTOM_ID_LIMIT],
            )
        )
        self.owner = owner
        self.question = question
        self.value = value

    @classmethod
    async def from_custom_id(
        cls, interaction: discord.Interaction, item: discord.ui.Item[Any], match: re.Match[str], /
    ) -> ChoiceButton:
        label = item.label if isinstance(item, discord.ui.Button) else None
        return cls(int(match["owner"]), match["question"], match["value"], label or "")

    async def interaction_check(self, interaction: discord.Interaction) -> bool:
        return await only_owner(interaction, self.owner)

    async def callback(self, interaction: discord.Interaction) -> None:  # type: ignore[override]
        handler: ButtonHandler = interaction.client  # type: ignore[assignment]
        await handler.on_choice_button(interaction, self.question, self.value, self.item.label or self.value)


class ResumeButton(discord.ui.DynamicItem[discord.ui.Button[Any]], template=r"agentbot:resume:(?P<session>[\w:.-]+)"):
    """On an admin alert: give the conversation back to the bot (admins only; checked by the bot)."""

    def __init__(self, session_key: str):
        super().__init__(
            discord.ui.Button(
                label="Resume bot", style=discord.ButtonStyle.primary, custom_id=f"agentbot:resume:{session_key}"
            )
        )
        self.session_key = session_key

    @classmethod
    async def from_custom_id(
        cls, interaction: discord.Interaction, item: discord.ui.Item[Any], match: re.Match[str], /
    ) -> ResumeButton:
        return cls(match["session"])

    async def callback(self, interaction: discord.Interaction) -> None:  # type: ignore[override]
        handler: ButtonHandler = interaction.client  # type: ignore[assignment]
        await handler.on_resume_button(interaction, self.session_key)


class DecideButton(
    discord.ui.DynamicItem[discord.ui.Button[Any]],
    template=r"agentbot:(?P<verdict>approve|deny):(?P<escalation>[\w-]+):(?P<session>[\w:.-]+)",
):
    """On an escalated action's alert: approve it (it runs once) or deny it (admins only; checked by the bot)."""

    def __init__(self, verdict: str, escalation: str, session_key: str):
        style = discord.ButtonStyle.success if verdict == "approve" else discord.ButtonStyle.danger
        super().__init__(
            discord.ui.Button(
                label=verdict.capitalize(), style=style, custom_id=f"agentbot:{verdict}:{escalation}:{session_key}"
            )
        )
        self.verdict, self.escalation, self.session_key = verdict, escalation, session_key

    @classmethod
    async def from_custom_id(
        cls, interaction: discord.Interaction, item: discord.ui.Item[Any], match: re.Match[str], /
    ) -> DecideButton:
        return cls(match["verdict"], match["escalation"], match["session"])

    async def callback(self, interaction: discord.Interaction) -> None:  # type: ignore[override]
        handler: ButtonHandler = interaction.client  # type: ignore[assignment]
        await handler.on_decide_button(interaction, self.verdict, self.escalation, self.session_key)


def reply_view(
    buttons: list[str], owner: int, choices: list[Option] | None = None, question: str | None = None
) -> discord.ui.View | None:
    """The buttons of a message: a question's choices first, then confirm / cancel / human."""
    if not buttons and not choices:
        return None
    view = discord.ui.View(timeout=None)
    for option in choices or []:
        view.add_item(ChoiceButton(owner, question or "", option.value, option.label))
    for action in buttons:
        view.add_item(ReplyButton(action, owner))
    return view


def message_view(message: OutboundMessage, owner: int) -> discord.ui.View | None:
    return reply_view(list(message.buttons), owner, message.choices, message.action_hash)


def resume_view(session_key: str, escalation: str = "") -> discord.ui.View:
    """Resume bot; on an escalated action's alert, Approve and Deny first."""
    view = discord.ui.View(timeout=None)
    if escalation:
        view.add_item(DecideButton("approve", escalation, session_key))
        view.add_item(DecideButton("deny", escalation, session_key))
    view.add_item(ResumeButton(session_key))
    return view


class ChannelTarget:
    """Delivers into a channel, thread or DM as ordinary bot messages.

    Each part is sent with a nonce derived from the message's outbound id; discord.py then asks
    Discord to enforce it, so a repeated send (a crash between sending and marking it sent)
    returns the message already posted instead of posting it twice.

    Args:
        channel: anything discord.py can send to (a Thread, a DMChannel, a PartialMessageable).
        owner: the user id the turn's buttons belong to.
    """

    def __init__(self, channel: discord.abc.Messageable, owner: int):
        self.channel = channel
        self.owner = owner

    async def send(self, message: OutboundMessage) -> None:
        await self.deliver(message, recovering=False)

    async def deliver(self, message: OutboundMessage, *, recovering: bool) -> str:
        parts = split(message.text)
        sent = None
        for n, part in enumerate(parts):
            view = message_view(message, self.owner) if n == len(parts) - 1 else None
            extra: dict[str, Any] = {"nonce": nonce(message.id, n)} if message.id else {}
            if view is not None:
                extra["view"] = view
            sent = await self.channel.send(part, allowed_mentions=NO_MENTIONS, **extra)
        return str(sent.id) if sent is not None else ""


class FollowupTarget:
    """Delivers as interaction follow-ups while the token lives, then into the channel.

    Follow-ups take no nonce: a recovering send first looks for the same text from the bot among
    the channel's recent messages.

    Args:
        webhook: the interaction's follow-up webhook (application id + token).
        created_at: when the interaction was created (the token expires 15 minutes later).
        fallback: where messages go once the token window has passed.
        me: the bot's user id, to recognise its own follow-ups when recovering.
    """

    def __init__(self, webhook: discord.Webhook, created_at: datetime, fallback: ChannelTarget, me: int = 0):
        self.webhook = webhook
        self.expires_at = created_at + FOLLOWUP_WINDOW
        self.fallback = fallback
        self.me = me

    async def send(self, message: OutboundMessage) -> None:
        await self.deliver(message, recovering=False)

    async def deliver(self, message: OutboundMessage, *, recovering: bool) -> str:
        if datetime.now(UTC) >= self.expires_at:
            return await self.fallback.deliver(message, recovering=recovering)
        parts = split(message.text)
        seen = await self.recent_texts() if recovering else {}
        ref = ""
        for n, part in enumerate(parts):
            if part in seen:
                ref = seen.pop(part)
                continue
            view = message_view(message, self.fallback.owner) if n == len(parts) - 1 else None
            if view is None:
                # A private notice (someone else's confirmation) is an ephemeral follow-up.
                sent = await self.webhook.send(part, allowed_mentions=NO_MENTIONS, wait=True, ephemeral=message.private)
            else:
                sent = await self.webhook.send(part, allowed_mentions=NO_MENTIONS, wait=True, view=view)
            ref = str(sent.id)
        return ref

    async def recent_texts(self) -> dict[str, str]:
        """Text -> message id of the bot's recent messages where the follow-ups appear."""
        found: dict[str, str] = {}
        try:
            async for m in self.fallback.channel.history(limit=50):  # type: ignore[attr-defined]
                if m.author.id == self.me and m.content not in found:
                    found[m.content] = str(m.id)
        except discord.HTTPException:
            log.warning("cannot read recent messages to check for an earlier follow-up", exc_info=True)
        return found

    async def post(self, text: str) -> discord.WebhookMessage:
        """One follow-up whose message the caller needs (the anchor a thread is started from)."""
        return await self.webhook.send(split(text)[0], allowed_mentions=NO_MENTIONS, wait=True)
