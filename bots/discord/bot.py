"""The Discord channel on discord.py: slash commands, mentions, thread messages and buttons.

Platform event -> `DiscordEvent` in the inbox (acked first: interactions are deferred at once) ->
`Dispatcher` (exactly once, one session at a time in arrival order) -> `Interaction` ->
`router.handle` -> replies into the thread. No business logic here.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
import socket
from datetime import UTC, datetime
from typing import Any, Protocol

import discord
import yarl
from discord.utils import escape_markdown as md

from adapters.storage.discord_records import DiscordRecords
from agent.app import App
from agent.domain.records import InboxEvent
from agent.domain.types import ChannelContext, ChannelType, Interaction, Message, OutboundMessage
from agent.errors import AgentbotError, ConfigError, StorageError
from agent.text import visible
from bots.discord.alerts import DiscordAdminAlerts
from bots.discord.commands import AgentbotTree, SlashCommands
from bots.discord.delivery import ChannelTarget, ChoiceButton, DecideButton, FollowupTarget, ReplyButton, ResumeButton
from bots.discord.events import DiscordEvent, DiscordSettings, RecentIds, session_key, thread_name
from bots.discord.gateway import EventGuard, InteractionChannels, SkippedEvents
from bots.dispatch import DeliveryFailed, Dispatcher
from bots.outbox import OutboxReply, SkippedPreMessages

log = logging.getLogger("agentbot.discord")

THREAD_EXISTS = 160004  # Discord: "A thread has already been created for this message"


def point_at(api_base: str, gateway_url: str) -> None:
    """Aim discord.py at Discord (or a stand-in): the library keeps both endpoints as class attributes."""
    discord.http.Route.BASE = api_base.rstrip("/")
    discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY = yarl.URL(gateway_url)


# agentbot never joins voice channels: the voice libraries' "not installed" warnings are noise.
discord.VoiceClient.warn_nacl = False
discord.VoiceClient.warn_dave = False


class DiscordMetrics(SkippedEvents, SkippedPreMessages, Protocol):
    """What the Discord channel counts (`/metrics`)."""


class InboxSubmitter:
    """The bot's `EventSubmitter`: an event is stored in the inbox and its turn scheduled by the dispatcher."""

    def __init__(self, dispatcher: Dispatcher):
        self.dispatcher = dispatcher

    async def submit(self, key: str, session: str, event: DiscordEvent) -> None:
        event_in = InboxEvent(
            key=key, session_key=session, payload=event.model_dump(mode="json"), written_at=written(key)
        )
        await self.dispatcher.submit(event_in)


class DiscordBot(SlashCommands, discord.Client):
    """
    Args:
        settings: token, guild, admins, endpoints (read from the environment by the caller).
        app: the application (router, store, data, settings, and the inbox for exactly-once intake).
        admin_alerts: the admin-channel notifier in the router's alert fanout; bound to this client.
        metrics: counts gateway events the library could not read and pre-messages left out
            because their answer was shown first (`/metrics`).
    """

    def __init__(
        self,
        settings: DiscordSettings,
        app: App,
        admin_alerts: DiscordAdminAlerts | None = None,
        metrics: DiscordMetrics | None = None,
        **sharding: Any,
    ):
        point_at(settings.api_base, settings.gateway_url)
        intents = discord.Intents.none()
        intents.guilds = intents.guild_messages = intents.dm_messages = intents.message_content = True
        super().__init__(
            intents=intents,
            allowed_mentions=discord.AllowedMentions.none(),
            guild_ready_timeout=settings.guild_ready_timeout,
            **sharding,
        )
        self.settings = settings
        inbox, outbox, database = app.storage.inbox, app.storage.outbox, app.storage.database
        if inbox is None or outbox is None or database is None:
            raise ConfigError(
                "environment",
                "the Discord channel needs a SQL store with an inbox and an outbox",
                field="AGENTBOT_DB_URL",
            )
        self.app, self.router, self.outbox = app, app.router, outbox
        self.records = DiscordRecords(database)
        # Each gateway event is parsed on its own: an unreadable one is skipped, not the connection's end.
        self.interaction_channels = InteractionChannels()
        self.event_guard = EventGuard(self.interaction_channels, metrics)
        self.metrics = metrics
        self.event_guard.install(self._connection.parsers)
        self._checked_guilds = set()
        # One gateway session per shard and host: a restart under this name takes its conversations
        # back at once instead of waiting out its own leases.
        worker = f"discord@{socket.gethostname()}:{settings.worker}"
        self.dispatcher = Dispatcher(
            inbox,
            self._run,
            lease_seconds=app.settings.lease_seconds,
            worker=worker,
            settle_seconds=app.settings.inbox_settle_seconds,
        )
        self.submitter = InboxSubmitter(self.dispatcher)
        self.tree = AgentbotTree(self, settings.ask_command)
        self.recent = RecentIds()
        self._noticed: set[str] = set()  # events told "trouble saving" (once each)
        if admin_alerts is not None:
            admin_alerts.bind(self, self.records)
        self._add_commands()

    # startup and shutdown

    async def setup_hook(self) -> None:
        self.add_dynamic_items(
            ReplyButton, ChoiceButton, ResumeButton, DecideButton
        )  # buttons sent before a restart still work
        await self.reconcile_commands()
        await self.dispatcher.recover()
        self.dispatcher.start_housekeeping(60.0, realert_unclaimed=self.router.realert_unclaimed)

    async def before_identify_hook(self, shard_id: int | None, *, initial: bool = False) -> None:
        # Discord lets a bot IDENTIFY one shard at a time, five seconds apart (max_concurrency 1).
        if not initial:
            await asyncio.sleep(self.settings.identify_interval)

    async def close(self) -> None:
        await self.dispatcher.aclose()
        await super().close()

    # messages

    async def on_message(self, message: discord.Message) -> None:
        me = self.user
        if (
            me is None
            or message.author.bot
            or message.type not in (discord.MessageType.default, discord.MessageType.reply)
        ):
            return
        channel = message.channel
        # A channel discord.py has not cached arrives as a PartialMessageable that names its guild by id.
        partial_guild = channel.guild_id if isinstance(channel, discord.PartialMessageable) else None
        guild_id = message.guild.id if message.guild else partial_guild
        mentioned = any(u.id == me.id for u in message.mentions)
        in_thread = isinstance(channel, discord.Thread)
        key = session_key(guild_id, channel.id)
        if guild_id is None or in_thread:
            owned = in_thread and channel.owner_id == me.id  # type: ignore[union-attr]
            if not (guild_id is None or mentioned or owned or await self._has_session(key)):
                return
            start = False
        elif mentioned:
            start, key = True, session_key(guild_id, message.id)  # a thread from a message has its id
        else:
            return
        if not self.recent.first_sight(message.id):
            return
        event = DiscordEvent(
            kind="message",
            text=re.sub(rf"<@!?{me.id}>", "", message.content).strip(),
            user_id=message.author.id,
            user_name=message.author.display_name,
            guild_id=guild_id,
            channel_id=channel.id,
            in_thread=in_thread,
            start_thread=start,
            message_id=message.id,
            created_at=message.created_at,
        )
        await self.submitter.submit(str(message.id), key, event)

    async def _has_session(self, key: str) -> bool:
        saved, _ = await self.app.store.load(key, 0)
        return saved is not None

    # one event, in its session's turn

    async def _run(self, stored: InboxEvent) -> None:
        ev = DiscordEvent.model_validate(stored.payload)
        target, thread_id = await self._where(stored.key, ev)
        reply = OutboxReply(
            self.outbox, target, stored.key, session_key(ev.guild_id, thread_id), self.metrics, "discord"
        )
        if stored.status == "committed":
            await reply.resend()  # the turn committed; only its answers are left to send
            return
        try:
            await self._turn(stored.key, ev, reply, thread_id)
        except StorageError:
            # Not saved: the event stays in the inbox and is answered when the database is back.
            if stored.key not in self._noticed:
                self._noticed.add(stored.key)
                text = StorageError.retry_notice
                await reply.notify_once(OutboundMessage(kind="notice", text=text, id=f"{stored.key}:trouble"))
            raise
        except DeliveryFailed:
            raise  # the answers are stored; the dispatcher sends them again later
        except Exception:
            # The one place the channel catches: the user hears that it failed, the dispatcher logs it.
            with contextlib.suppress(Exception):
                await reply(OutboundMessage(kind="error", text=AgentbotError.user_message, id=f"{stored.key}:failed"))
            raise

    async def _where(self, key: str, ev: DiscordEvent) -> tuple[ChannelTarget | FollowupTarget, int]:
        """Where the conversation's messages go, starting its thread when the event asks for one.

        A re-run (after a crash) finds the anchor it posted before and the thread started from it:
        a thread started from a message has that message's id."""
        here = ChannelTarget(self.get_partial_messageable(ev.channel_id, guild_id=ev.guild_id), ev.user_id)
        target: ChannelTarget | FollowupTarget = here
        if ev.token and ev.application_id:
            webhook = discord.Webhook.partial(ev.application_id, ev.token, client=self)
            target = FollowupTarget(webhook, ev.created_at, here, self.user.id if self.user else 0)
        if not ev.start_thread:
            return target, ev.channel_id
        anchor_id = ev.message_id or 0
        if isinstance(target, FollowupTarget):
            # The answer's first follow-up shows the question; the conversation continues under it.
            anchor = OutboundMessage(
                kind="notice", text=f"**{md(ev.user_name)}** asked: {md(visible(ev.text))}", id=f"{key}:anchor"
            )
            await OutboxReply(self.outbox, target, key, "")(anchor)
            ref = await self.outbox.ref(anchor.id)
            if not ref:
                # Never a placeholder id: a thread "from message 0" would key unrelated conversations together.
                raise DeliveryFailed(f"the anchor of {key} has no Discord message id yet")
            anchor_id = int(ref)
        try:
            # By id, not through discord.py's PartialMessage: another shard's guild is not in this
            # process's cache (a session's events run wherever its lease is), and needs not be.
            made = await self.http.start_thread_with_message(
                ev.channel_id, anchor_id, name=thread_name(ev.text), auto_archive_duration=1440
            )
        except discord.HTTPException as e:
            if e.code == THREAD_EXISTS:
                thread = self.get_partial_messageable(anchor_id, guild_id=ev.guild_id)
                return ChannelTarget(thread, ev.user_id), anchor_id
            # Without "Create Public Threads" the bot still answers, in place.
            log.warning("could not start a thread in channel %s; answering in place", ev.channel_id, exc_info=True)
            return target, anchor_id
        thread = self.get_partial_messageable(
            int(made["id"]), guild_id=ev.guild_id, type=discord.ChannelType.public_thread
        )
        return ChannelTarget(thread, ev.user_id), thread.id

    async def _turn(self, key_id: str, ev: DiscordEvent, reply: OutboxReply, thread_id: int) -> None:
        key = session_key(ev.guild_id, thread_id)
        customer = await self.app.data.find_customer("discord", str(ev.user_id))
        interaction = Interaction(
            id=key_id,
            text=ev.text,
            session_key=key,
            customer_id=customer.get("customer_id") if customer else None,
            context=ChannelContext(
                channel_type=ChannelType.discord,
                workspace=str(ev.guild_id or "dm"),
                channel=str(ev.channel_id),
                thread=str(thread_id),
                user=str(ev.user_id),
            ),
            thread_history=await self._thread_history(key, ev) if ev.in_thread else [],
            from_inbox=True,
            action=ev.button,
            action_hash=ev.question,
            choice=ev.choice,
        )
        await self.router.handle(interaction, reply=reply)

    async def _thread_history(self, key: str, ev: DiscordEvent) -> list[Message]:
        """A thread the bot has no session for: what was said so far seeds the new session."""
        if await self._has_session(key):
            return []
        me = self.user.id if self.user else 0
        channel = self.get_partial_messageable(ev.channel_id, guild_id=ev.guild_id)
        limit = self.app.settings.history_limit
        seen: list[Message] = []
        async for m in channel.history(limit=limit + 1):
            if m.id == ev.message_id or not m.content:
                continue
            bot = m.author.id == me
            seen.append(
                Message(
                    role="agent" if bot else "user",
                    kind="answer" if bot else "user",
                    text=re.sub(rf"<@!?{me}>", "", m.content).strip(),
                    timestamp=m.created_at.astimezone(UTC) if m.created_at else datetime.now(UTC),
                )
            )
        return list(reversed(seen))[-limit:] if limit else []


class ShardedDiscordBot(DiscordBot, discord.AutoShardedClient):
    """The bot over several gateway shards in one process (`DISCORD_SHARD_COUNT`, `DISCORD_SHARD_IDS`)."""


def make_bot(
    settings: DiscordSettings,
    app: App,
    admin_alerts: DiscordAdminAlerts | None = None,
    metrics: DiscordMetrics | None = None,
) -> DiscordBot:
    """One connection when the settings name no shards; else the shards they name (0: Discord's count)."""
    if settings.shard_count is None:
        return DiscordBot(settings, app, admin_alerts, metrics)
    return ShardedDiscordBot(
        settings, app, admin_alerts, metrics, shard_count=settings.shard_count or None, shard_ids=settings.shard_ids
    )


DISCORD_EPOCH_MS = 1_420_070_400_000  # the first millisecond of 2015, where Discord's ids count from


def written(snowflake: str) -> float | None:
    """When Discord made this id (message, interaction), in seconds since the epoch: ids carry their time."""
    return ((int(snowflake) >> 22) + DISCORD_EPOCH_MS) / 1000 if snowflake.isdigit() else None
