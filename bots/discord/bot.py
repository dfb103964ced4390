"""The Discord channel on discord.py: slash commands, mentions, thread messages and buttons.

Platform event -> `DiscordEvent` in the inbox (acked first: interactions are deferred at once) ->
`Dispatcher` (exactly once, one session at a time in arrival order) -> `Interaction` ->
`router.handle` -> replies into the thread. No business logic here.
"""

from __future__ import annotations

import contextlib
import logging
import re

import discord
import yarl
from discord import app_commands
from discord.utils import escape_markdown as md

from agent.app import App
from agent.errors import AgentbotError, ConfigError
from agent.records import InboxEvent
from agent.text import visible
from agent.types import ChannelContext, ChannelType, Interaction, Message, OutboundMessage
from bots.discord.alerts import DiscordAdminAlerts
from bots.discord.delivery import BUTTONS, ChannelTarget, FollowupTarget, ReplyButton, ResumeButton
from bots.discord.events import DiscordEvent, DiscordSettings, RecentIds, channel_of, session_key, thread_name
from bots.discord.history import earlier_messages
from bots.dispatch import Dispatcher

log = logging.getLogger("agentbot.discord")

THREADS = (discord.ChannelType.public_thread, discord.ChannelType.private_thread, discord.ChannelType.news_thread)
NOT_ADMIN = "Only agentbot admins can use this command."


def point_at(api_base: str, gateway_url: str) -> None:
    """Aim discord.py at Discord (or a stand-in): the library keeps both endpoints as class attributes."""
    discord.http.Route.BASE = api_base.rstrip("/")
    discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY = yarl.URL(gateway_url)


# agentbot never joins voice channels: the voice libraries' "not installed" warnings are noise.
discord.VoiceClient.warn_nacl = False
discord.VoiceClient.warn_dave = False


class DiscordBot(discord.Client):
    """
    Args:
        settings: token, guild, admins, endpoints (read from the environment by the caller).
        app: the application (router, store, data, settings, and the inbox for exactly-once intake).
        admin_alerts: the admin-channel notifier in the router's alert fanout; bound to this client.
    """

    def __init__(
        self,
        settings: DiscordSettings,
        app: App,
        admin_alerts: DiscordAdminAlerts | None = None,
    ):
        point_at(settings.api_base, settings.gateway_url)
        intents = discord.Intents.none()
        intents.guilds = intents.guild_messages = intents.dm_messages = intents.message_content = True
        super().__init__(
            intents=intents,
            allowed_mentions=discord.AllowedMentions.none(),
            guild_ready_timeout=settings.guild_ready_timeout,
        )
        self.settings = settings
        if app.inbox is None:
            raise ConfigError("environment", "the Discord channel needs the SQL session store", field="AGENTBOT_DB_URL")
        self.app, self.router = app, app.router
        self.dispatcher = Dispatcher(app.inbox, self._run)
        self.tree = app_commands.CommandTree(self)
        self.recent = RecentIds()
        if admin_alerts is not None:
            admin_alerts.bind(self)
        self._add_commands()

    # startup and shutdown

    async def setup_hook(self) -> None:
        self.add_dynamic_items(ReplyButton, ResumeButton)  # buttons sent before a restart still work
        if self.settings.guild_id:
            guild = discord.Object(id=self.settings.guild_id)
            self.tree.copy_global_to(guild=guild)
            await self.tree.sync(guild=guild)
        else:
            await self.tree.sync()
        await self.dispatcher.recover()
        self.dispatcher.start_housekeeping(60.0, self.router.realert_unclaimed)

    async def close(self) -> None:
        await self.dispatcher.aclose()
        await super().close()

    # commands

    def _add_commands(self) -> None:
        @app_commands.describe(question="What you need, e.g. 'where is my order O-12345?'")
        async def ask(interaction: discord.Interaction, question: str) -> None:
            await self.on_ask(interaction, question)

        self.tree.add_command(
            app_commands.Command(name=self.settings.ask_command, description="Ask agentbot", callback=ask)
        )
        admin = app_commands.Group(name="agentbot", description="agentbot administration")

        @admin.command(name="status", description="This conversation's state (admins)")
        async def status(interaction: discord.Interaction) -> None:
            await self.on_status(interaction)

        @admin.command(name="resume", description="Give this conversation back to the bot after a handoff (admins)")
        async def resume(interaction: discord.Interaction) -> None:
            await self.on_resume(interaction, session_key(interaction.guild_id, interaction.channel_id or 0))

        self.tree.add_command(admin)

    async def on_ask(self, interaction: discord.Interaction, question: str) -> None:
        if not self.recent.first_sight(interaction.id):
            return
        await interaction.response.defer(thinking=True)  # Discord gives 3 s; the turn runs after
        channel = interaction.channel
        in_thread = getattr(channel, "type", None) in THREADS
        guild_id = interaction.guild_id
        start = guild_id is not None and not in_thread
        key = (
            f"discord:{guild_id}:ask:{interaction.id}" if start else session_key(guild_id, interaction.channel_id or 0)
        )
        event = DiscordEvent(
            kind="ask",
            text=question,
            user_id=interaction.user.id,
            user_name=interaction.user.display_name,
            guild_id=guild_id,
            channel_id=interaction.channel_id or 0,
            in_thread=in_thread,
            start_thread=start,
            application_id=interaction.application_id,
            token=interaction.token,
            created_at=interaction.created_at,
        )
        await self._submit(str(interaction.id), key, event)

    def is_admin(self, user: discord.User | discord.Member) -> bool:
        roles = {r.id for r in getattr(user, "roles", [])}
        return user.id in self.settings.admin_user_ids or bool(roles & self.settings.admin_role_ids)

    async def on_status(self, interaction: discord.Interaction) -> None:
        if not self.is_admin(interaction.user):
            await interaction.response.send_message(NOT_ADMIN, ephemeral=True)
            return
        await interaction.response.defer(ephemeral=True, thinking=True)
        key = session_key(interaction.guild_id, interaction.channel_id or 0)
        state, _ = await self.app.store.load(key, 0)
        if state is None:
            text = f"No conversation here yet (`{key}`)."
        else:
            goal = state.active_goal
            handoff = state.handoff.status if state.handoff else "none"
            text = (
                f"`{key}` - version {state.version}, customer {state.customer_id or 'guest'}\n"
                f"active goal: {goal.type if goal else 'none'}; suspended: {len(state.goal_stack)}; handoff: {handoff}"
            )
        await interaction.followup.send(text, ephemeral=True)

    async def on_resume(self, interaction: discord.Interaction, key: str) -> None:
        if not self.is_admin(interaction.user):
            await interaction.response.send_message(NOT_ADMIN, ephemeral=True)
            return
        await interaction.response.defer(ephemeral=True, thinking=True)
        thread = ChannelTarget(self.get_partial_messageable(channel_of(key)), interaction.user.id)
        notice = await self.router.control(key, "release", interaction.user.display_name, reply=thread.send)
        await interaction.followup.send(notice, ephemeral=True)

    async def on_resume_button(self, interaction: discord.Interaction, session_key: str) -> None:
        await self.on_resume(interaction, session_key)

    async def on_reply_button(self, interaction: discord.Interaction, action: str) -> None:
        if not self.recent.first_sight(interaction.id):
            return
        await interaction.response.edit_message(view=None)  # the ack; the question's buttons are used up
        guild_id, channel_id = interaction.guild_id, interaction.channel_id or 0
        event = DiscordEvent(
            kind="button",
            text=BUTTONS[action][2],
            button=action,  # type: ignore[arg-type]
            user_id=interaction.user.id,
            user_name=interaction.user.display_name,
            guild_id=guild_id,
            channel_id=channel_id,
            in_thread=getattr(interaction.channel, "type", None) in THREADS,
            created_at=interaction.created_at,
        )
        await self._submit(str(interaction.id), session_key(guild_id, channel_id), event)

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
        guild_id = message.guild.id if message.guild else getattr(channel, "guild_id", None)
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
        await self._submit(str(message.id), key, event)

    async def _has_session(self, key: str) -> bool:
        saved, _ = await self.app.store.load(key, 0)
        return saved is not None

    async def _submit(self, key: str, session: str, event: DiscordEvent) -> None:
        await self.dispatcher.submit(InboxEvent(key=key, session_key=session, payload=event.model_dump(mode="json")))

    # one event, in its session's turn

    async def _run(self, stored: InboxEvent) -> None:
        ev = DiscordEvent.model_validate(stored.payload)
        target, thread_id = await self._where(ev)
        try:
            await self._turn(stored.key, ev, target, thread_id)
        except Exception:
            # The one place the channel catches: the user hears that it failed, the dispatcher logs it.
            with contextlib.suppress(discord.HTTPException):
                await target.send(OutboundMessage(kind="error", text=AgentbotError.user_message))
            raise

    async def _where(self, ev: DiscordEvent) -> tuple[ChannelTarget | FollowupTarget, int]:
        """Where the conversation's messages go, starting its thread when the event asks for one."""
        here = ChannelTarget(self.get_partial_messageable(ev.channel_id, guild_id=ev.guild_id), ev.user_id)
        target: ChannelTarget | FollowupTarget = here
        if ev.token and ev.application_id:
            webhook = discord.Webhook.partial(ev.application_id, ev.token, client=self)
            target = FollowupTarget(webhook, ev.created_at, here)
        if not ev.start_thread:
            return target, ev.channel_id
        anchor_id = ev.message_id or 0
        if isinstance(target, FollowupTarget):
            # The answer's first follow-up shows the question; the conversation continues under it.
            anchor_id = (await target.post(f"**{md(ev.user_name)}** asked: {md(visible(ev.text))}")).id
        try:
            thread = await here.channel.get_partial_message(anchor_id).create_thread(name=thread_name(ev.text))  # type: ignore[attr-defined]
        except discord.HTTPException:
            # Without "Create Public Threads" the bot still answers, in place.
            log.warning("could not start a thread in channel %s; answering in place", ev.channel_id, exc_info=True)
            return target, anchor_id
        return ChannelTarget(thread, ev.user_id), thread.id

    async def _turn(
        self, key_id: str, ev: DiscordEvent, target: ChannelTarget | FollowupTarget, thread_id: int
    ) -> None:
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
            ),  # fmt: skip
            thread_history=await self._thread_history(key, ev) if ev.in_thread else [],
            from_inbox=True,
            action=ev.button,
        )
        await self.router.handle(interaction, reply=target.send)

    async def _thread_history(self, key: str, ev: DiscordEvent) -> list[Message]:
        """A thread the bot has no session for: what was said so far seeds the new session."""
        if await self._has_session(key):
            return []
        channel, me = (
            self.get_partial_messageable(ev.channel_id, guild_id=ev.guild_id),
            self.user.id if self.user else 0,
        )
        return await earlier_messages(channel, me, ev.message_id, self.app.settings.history_limit)
