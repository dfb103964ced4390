"""The Discord channel's slash commands and buttons: /ask and clicks are deferred (the ack) and stored
as events; the admin commands (status, resume) answer ephemerally."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import discord
from discord import app_commands

from agent.app import App
from agent.turn.router import AgentRouter
from bots.discord.delivery import BUTTONS, ChannelTarget
from bots.discord.events import DiscordEvent, DiscordSettings, RecentIds, channel_of, session_key

NOT_ADMIN = "Only agentbot admins can use this command."

if TYPE_CHECKING:
    _Client = discord.Client
else:
    _Client = object


class SlashCommands(_Client):
    """Mixed into DiscordBot, which owns the state declared here."""

    settings: DiscordSettings
    app: App
    router: AgentRouter
    tree: app_commands.CommandTree[Any]
    recent: RecentIds

    async def _submit(self, key: str, session: str, event: DiscordEvent) -> None:
        raise NotImplementedError

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
        in_thread = isinstance(interaction.channel, discord.Thread)
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
        roles = {r.id for r in user.roles} if isinstance(user, discord.Member) else set()  # no roles in a DM
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
            in_thread=isinstance(interaction.channel, discord.Thread),
            created_at=interaction.created_at,
        )
        await self._submit(str(interaction.id), session_key(guild_id, channel_id), event)
