"""The Discord channel's slash commands and buttons: /ask and clicks are deferred (the ack) and stored
as events; the admin commands (status, resume, admin-channel) answer ephemerally.

Every interaction gets an answer: one for a command, button or form this process does not have (a
stale registration, a renamed command, another version's button) is told privately that it is gone,
within Discord's 3 seconds, instead of "The application did not respond"."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Awaitable
from typing import TYPE_CHECKING, Any, Protocol

import discord
from discord import app_commands

from adapters.storage.discord_records import DiscordRecords
from agent.app import App
from agent.conversation.handoff import Verdict
from agent.errors import AgentbotError
from agent.turn.router import AgentRouter
from bots.discord.delivery import BUTTONS, ChannelTarget, ChoiceButton, DecideButton, ReplyButton, ResumeButton
from bots.discord.events import DiscordEvent, DiscordSettings, RecentIds, channel_of, guild_of, session_key
from bots.discord.gateway import InteractionChannels

log = logging.getLogger("agentbot.discord")

NOT_ADMIN = "Only agentbot admins can use this command."
NOT_SERVER_ADMIN = "Only members with the Manage Server permission can choose this server's admin channel."
NOT_IN_A_SERVER = "Admin channels belong to servers; run this in a channel of your server."
NOT_THIS_SERVER = "That conversation belongs to another server; its own admins can resume it."
NO_CHANNEL = "I can't tell which channel this came from, so I can't answer it here. Please try again in a channel."
ALREADY_ACKNOWLEDGED = 40060  # Discord: "Interaction has already been acknowledged"
# The buttons this version sends; any other custom_id is a leftover of another version.
KNOWN_ITEMS = (ReplyButton, ChoiceButton, ResumeButton, DecideButton)

if TYPE_CHECKING:
    _Client = discord.Client
else:
    _Client = object


class EventSubmitter(Protocol):
    """Where a command's or click's event goes: stored in the channel's inbox, its turn scheduled."""

    async def submit(self, key: str, session: str, event: DiscordEvent) -> None:
        """Store the event under `key` for the conversation `session`; a StorageError propagates."""
        ...


def gone(ask_command: str) -> str:
    return f"This command is no longer available; try /{ask_command}."


async def answer_privately(interaction: discord.Interaction, text: str) -> None:
    """One ephemeral answer, whether or not the interaction was acknowledged yet."""
    with contextlib.suppress(discord.HTTPException):
        if interaction.type is discord.InteractionType.autocomplete:
            if not interaction.response.is_done():
                await interaction.response.autocomplete([])  # nothing to offer: an empty list is the answer
        elif not interaction.response.is_done():
            await interaction.response.send_message(text, ephemeral=True)
        else:
            await interaction.followup.send(text, ephemeral=True)


async def acknowledged(interaction: discord.Interaction, ack: Awaitable[Any]) -> bool:
    """Send the interaction's one response; False when another process (a shard whose session moved,
    a restart) already did, so this one leaves the event to it and to the inbox."""
    try:
        await ack
    except discord.HTTPException as e:
        if e.code != ALREADY_ACKNOWLEDGED:
            raise
        log.info("interaction %s was acknowledged elsewhere; leaving it to that process", interaction.id)
        return False
    return True


def handled(interaction: discord.Interaction, custom_id: str, component_type: int) -> bool:
    """Whether discord.py runs one of this version's buttons for this click: the custom_id is
    one of ours and, as the library checks before calling it, the clicked message carries it."""
    if interaction.message is None or not any(
        item.__discord_ui_compiled_template__.fullmatch(custom_id) for item in KNOWN_ITEMS
    ):
        return False
    layout = discord.ui.LayoutView if interaction.message.flags.components_v2 else discord.ui.View
    view = layout.from_message(interaction.message, timeout=None)
    return any(
        i.type.value == component_type and isinstance(i, discord.ui.Button) and i.custom_id == custom_id
        for i in view.walk_children()
    )


class AgentbotTree(app_commands.CommandTree[Any]):
    """discord.py's command tree, answering commands it does not have instead of logging a traceback."""

    def __init__(self, client: discord.Client, ask_command: str):
        super().__init__(client)
        self.ask_command = ask_command

    async def on_error(self, interaction: discord.Interaction, error: app_commands.AppCommandError, /) -> None:
        if isinstance(error, app_commands.CommandNotFound | app_commands.CommandSignatureMismatch):
            # Discord still shows a registration this process does not serve (or an older shape of one).
            data: dict[str, Any] = dict(interaction.data or {})
            log.info("answered a command this bot does not have: %r (type %s)", data.get("name"), data.get("type", 1))
            await answer_privately(interaction, gone(self.ask_command))
            return
        await super().on_error(interaction, error)  # a bug in a command: logged with its traceback
        await answer_privately(interaction, AgentbotError.user_message)


class SlashCommands(_Client):
    """Mixed into DiscordBot, which owns the state declared here; events leave through `submitter`."""

    settings: DiscordSettings
    app: App
    router: AgentRouter
    tree: AgentbotTree
    recent: RecentIds
    records: DiscordRecords
    interaction_channels: InteractionChannels
    submitter: EventSubmitter

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
            channel_id = self.channel_id_of(interaction)
            if channel_id is None:
                await answer_privately(interaction, NO_CHANNEL)
                return
            await self.on_resume(interaction, session_key(interaction.guild_id, channel_id))

        @admin.command(name="admin-channel", description="Send this server's admin alerts to this channel")
        async def admin_channel(interaction: discord.Interaction) -> None:
            await self.on_admin_channel(interaction)

        self.tree.add_command(admin)

    def channel_id_of(self, interaction: discord.Interaction) -> int | None:
        """Where the interaction happened: the `channel` object's id, else the payload's `channel_id`."""
        return interaction.channel_id or self.interaction_channels.get(interaction.id)

    def in_thread(self, interaction: discord.Interaction, channel_id: int) -> bool:
        channel = interaction.channel or self.get_channel(channel_id)  # a cached channel says its type
        return isinstance(channel, discord.Thread)

    async def on_ask(self, interaction: discord.Interaction, question: str) -> None:
        if not self.recent.first_sight(interaction.id):
            return
        channel_id = self.channel_id_of(interaction)
        if channel_id is None:
            await answer_privately(interaction, NO_CHANNEL)  # no key to file it under: not a guess
            return
        # Discord gives 3 s; the turn runs after.
        if not await acknowledged(interaction, interaction.response.defer(thinking=True)):
            return
        in_thread = self.in_thread(interaction, channel_id)
        guild_id = interaction.guild_id
        start = guild_id is not None and not in_thread
        key = f"discord:{guild_id}:ask:{interaction.id}" if start else session_key(guild_id, channel_id)
        event = DiscordEvent(
            kind="ask",
            text=question,
            user_id=interaction.user.id,
            user_name=interaction.user.display_name,
            guild_id=guild_id,
            channel_id=channel_id,
            in_thread=in_thread,
            start_thread=start,
            application_id=interaction.application_id,
            token=interaction.token,
            created_at=interaction.created_at,
        )
        await self.submitter.submit(str(interaction.id), key, event)

    def is_admin(self, user: discord.User | discord.Member) -> bool:
        roles = {r.id for r in user.roles} if isinstance(user, discord.Member) else set()  # no roles in a DM
        return user.id in self.settings.admin_user_ids or bool(roles & self.settings.admin_role_ids)

    async def on_status(self, interaction: discord.Interaction) -> None:
        if not self.is_admin(interaction.user):
            await interaction.response.send_message(NOT_ADMIN, ephemeral=True)
            return
        channel_id = self.channel_id_of(interaction)
        if channel_id is None:
            await answer_privately(interaction, NO_CHANNEL)
            return
        await interaction.response.defer(ephemeral=True, thinking=True)
        key = session_key(interaction.guild_id, channel_id)
        state, _ = await self.app.store.load(key, 0)
        if state is None:
            text = f"No conversation here yet (`{key}`)."
        else:
            parts = state.speakers.values()
            active = ", ".join(p.active_goal.type for p in parts if p.active_goal) or "none"
            suspended = sum(len(p.goal_stack) for p in parts)
            handoff = state.handoff.status if state.handoff else "none"
            text = (
                f"`{key}` - version {state.version}, customer {state.customer_id or 'guest'}\n"
                f"active goals: {active}; suspended: {suspended}; handoff: {handoff}"
            )
        await interaction.followup.send(text, ephemeral=True)

    async def on_resume(self, interaction: discord.Interaction, key: str) -> None:
        if (thread := await self._admin_over(interaction, key)) is None:
            return
        notice = await self.router.control(key, "release", interaction.user.display_name, reply=thread.send)
        await interaction.followup.send(notice, ephemeral=True)

    async def on_decide_button(
        self, interaction: discord.Interaction, verdict: str, escalation: str, session_key: str
    ) -> None:
        """Approve or Deny on an escalated action's alert: decided once, recorded as the clicking admin."""
        if (thread := await self._admin_over(interaction, session_key)) is None:
            return
        who = f"{interaction.user.display_name} (<@{interaction.user.id}>)"
        chosen: Verdict = "approve" if verdict == "approve" else "deny"
        notice = await self.router.decide(session_key, chosen, who, escalation_id=escalation, reply=thread.send)
        await interaction.followup.send(notice, ephemeral=True)

    async def _admin_over(self, interaction: discord.Interaction, key: str) -> ChannelTarget | None:
        """The conversation's thread when the clicking member is an admin over it (the click is
        deferred then); None after telling them they are not."""
        if not self.is_admin(interaction.user):
            await interaction.response.send_message(NOT_ADMIN, ephemeral=True)
            return None
        # A server's admin role acts in its own server; only an admin named by user id acts anywhere.
        home = guild_of(key)
        if (
            home is not None
            and home != interaction.guild_id
            and interaction.user.id not in self.settings.admin_user_ids
        ):
            await interaction.response.send_message(NOT_THIS_SERVER, ephemeral=True)
            return None
        await interaction.response.defer(ephemeral=True, thinking=True)
        return ChannelTarget(self.get_partial_messageable(channel_of(key), guild_id=home), interaction.user.id)

    async def on_admin_channel(self, interaction: discord.Interaction) -> None:
        """A server admin (Manage Server) sends this server's admin alerts to the channel they run it in."""
        guild_id, channel_id = interaction.guild_id, self.channel_id_of(interaction)
        if guild_id is None:
            await interaction.response.send_message(NOT_IN_A_SERVER, ephemeral=True)
            return
        perms = interaction.permissions  # the member's, in this channel, as Discord computed them
        if not (perms.manage_guild or perms.administrator):
            await interaction.response.send_message(NOT_SERVER_ADMIN, ephemeral=True)
            return
        if channel_id is None:
            await answer_privately(interaction, NO_CHANNEL)
            return
        await interaction.response.defer(ephemeral=True, thinking=True)
        await self.records.set_admin_channel(guild_id, channel_id, interaction.user.id)
        log.info("admin channel of guild %s set to %s by %s", guild_id, channel_id, interaction.user.id)
        await interaction.followup.send(f"This server's admin alerts now go to <#{channel_id}>.", ephemeral=True)

    async def on_resume_button(self, interaction: discord.Interaction, session_key: str) -> None:
        await self.on_resume(interaction, session_key)

    async def on_reply_button(self, interaction: discord.Interaction, action: str) -> None:
        """Confirm, Cancel or Talk to a human: stored as an event, the button's words as its text."""
        await self._clicked(interaction, text=BUTTONS[action][2], button=action)

    async def on_choice_button(self, interaction: discord.Interaction, question: str, value: str, label: str) -> None:
        """One of a question's choices: stored as an event like any click, the choice's label as its text."""
        await self._clicked(interaction, text=label, button="choose", question=question, choice=value)

    async def _clicked(self, interaction: discord.Interaction, **fields: Any) -> None:
        """A click on one of the bot's question buttons, acknowledged once (which uses the buttons up)
        and stored as an event of the channel's conversation."""
        if not self.recent.first_sight(interaction.id):
            return
        guild_id, channel_id = interaction.guild_id, self.channel_id_of(interaction)
        if channel_id is None:
            await answer_privately(interaction, NO_CHANNEL)
            return
        if not await acknowledged(interaction, interaction.response.edit_message(view=None)):
            return
        event = DiscordEvent(
            kind="button",
            user_id=interaction.user.id,
            user_name=interaction.user.display_name,
            guild_id=guild_id,
            channel_id=channel_id,
            in_thread=self.in_thread(interaction, channel_id),
            created_at=interaction.created_at,
            **fields,
        )
        await self.submitter.submit(str(interaction.id), session_key(guild_id, channel_id), event)

    # anything else Discord sends

    async def on_interaction(self, interaction: discord.Interaction) -> None:
        """A button or form this version does not have is answered; commands are the tree's (`on_error`)."""
        data: dict[str, Any] = interaction.data or {}  # type: ignore[assignment]
        custom_id = str(data.get("custom_id", ""))
        if interaction.type is discord.InteractionType.component:
            if handled(interaction, custom_id, int(data.get("component_type", 0))):
                return
        elif interaction.type is not discord.InteractionType.modal_submit:
            return
        log.info("answered a %s this bot does not have (custom_id %r)", interaction.type.name, custom_id[:100])
        await answer_privately(interaction, gone(self.settings.ask_command))

    # registrations

    async def reconcile_commands(self) -> None:
        """Make Discord's registrations this process's commands: the guild it serves (or global),
        and nothing left over elsewhere. Other guilds' leftovers are removed as each guild arrives."""
        guild = discord.Object(id=self.settings.guild_id) if self.settings.guild_id else None
        if guild is not None:
            self.tree.copy_global_to(guild=guild)
        await self._sync(guild)
        if not self.settings.reconcile_commands:
            log.info("DISCORD_KEEP_COMMANDS is set: other registrations of this application are left as they are")
        elif guild is not None:
            stale = await self.tree.fetch_commands()
            if stale:
                # Global registrations beside the guild's would show every command twice, one of them stale.
                await self.http.bulk_upsert_global_commands(self.application_id, [])  # type: ignore[arg-type]
                log.info("removed stale global commands: %s", ", ".join(sorted(c.name for c in stale)))

    async def _sync(self, guild: discord.Object | None) -> None:
        where = f"guild {guild.id}" if guild else "global"
        before = {c.name for c in await self.tree.fetch_commands(guild=guild)}
        after = {c.name for c in await self.tree.sync(guild=guild)}
        added, removed = sorted(after - before), sorted(before - after)
        log.info(
            "commands (%s): %s%s%s",
            where,
            ", ".join(sorted(after)) or "none",
            f"; added {', '.join(added)}" if added else "",
            f"; removed {', '.join(removed)}" if removed else "",
        )

    async def on_guild_available(self, guild: discord.Guild) -> None:
        """A guild other than the one served keeps no guild commands of this application."""
        if not self.settings.reconcile_commands or guild.id == self.settings.guild_id:
            return
        if guild.id in self._checked_guilds:
            return
        self._checked_guilds.add(guild.id)
        try:
            stale = await self.tree.fetch_commands(guild=guild)
            if stale:
                await self.http.bulk_upsert_guild_commands(self.application_id, guild.id, [])  # type: ignore[arg-type]
                log.info("removed stale commands in guild %s: %s", guild.id, ", ".join(sorted(c.name for c in stale)))
        except discord.HTTPException as e:
            log.warning("could not check guild %s for stale commands (%s %s)", guild.id, e.status, e.code)

    _checked_guilds: set[int]
