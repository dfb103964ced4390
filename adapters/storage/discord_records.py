"""Discord's records in the bot's own database: the admin channel each server (guild) chose.

Plain rows on the session store's runner, as Slack's are (`slack_records.py`); ids are Discord
snowflakes kept as text.
"""

from __future__ import annotations

from sqlalchemy import Connection, select

from adapters.storage.base import OnDatabase
from adapters.storage.schema import discord_guilds
from adapters.storage.writes import upsert
from agent.domain.types import utcnow


class DiscordRecords(OnDatabase):
    """Discord's table in the session store's database, on its runner."""

    async def set_admin_channel(self, guild_id: int, channel_id: int, set_by: int) -> None:
        """This server's admin alerts go to `channel_id` from now on (the latest setting wins)."""
        row = {
            "guild_id": str(guild_id),
            "admin_channel_id": str(channel_id),
            "set_by": str(set_by),
            "updated_at": utcnow(),
        }

        def unit(conn: Connection) -> None:
            upsert(conn, discord_guilds, "guild_id", row)

        await self._run(unit, what="set a Discord server's admin channel")

    async def admin_channel(self, guild_id: int) -> int | None:
        """The channel this server's admins chose, or None when they chose none."""

        def unit(conn: Connection) -> str | None:
            return conn.execute(  # type: ignore[no-any-return]
                select(discord_guilds.c.admin_channel_id).where(discord_guilds.c.guild_id == str(guild_id))
            ).scalar()

        found = await self._run(unit, what="read a Discord server's admin channel")
        return int(found) if found else None
