"""The gateway half of the stand-in Discord: the websocket session discord.py keeps, and what a user
does there (slash commands, button clicks, messages), dispatched as Discord would."""

from __future__ import annotations

import asyncio
import itertools
import json
import time
from datetime import UTC, datetime
from typing import Any

from aiohttp import WSMsgType, web

APP_ID = "1100000000000000001"
BOT_ID = APP_ID  # Discord gives a bot user the application's id
GUILD_ID = "1200000000000000001"  # on shard 1 of 2: (id >> 22) % 2
GENERAL_ID = "1200000000000000002"
ADMIN_CHANNEL_ID = "1200000000000000003"
ADMIN_ROLE_ID = "1200000000000000004"
# A second server, on shard 0 of 2, with its own #general and admin channel.
OTHER_GUILD_ID = "1300000000000000001"
OTHER_GENERAL_ID = "1300000000000000002"
OTHER_ADMIN_CHANNEL_ID = "1300000000000000003"
MEMBER_PERMISSIONS = "1071698660929"  # send messages, threads, ... (no Manage Server)
MANAGE_GUILD = 1 << 5
HEARTBEAT_MS = 41250
THREAD_TYPES = {10, 11, 12}
DISCORD_EPOCH_MS = 1420070400000


def user(uid: str, name: str, bot: bool = False) -> dict[str, Any]:
    return {"id": uid, "username": name, "global_name": name, "discriminator": "0", "avatar": None, "bot": bot}


def now_iso() -> str:
    return datetime.now(UTC).isoformat()


def shard_of(guild_id: str | None, count: int) -> int:
    """The shard Discord sends a guild's events on; DMs go to shard 0."""
    return (int(guild_id) >> 22) % count if guild_id else 0


class GatewayHalf:
    """Mixed into StandInDiscord, which owns the state declared here."""

    channels: dict[str, dict[str, Any]]
    guilds: dict[str, str]  # guild id -> name
    identifies: list[list[int]]  # [shard id, shard count] of each IDENTIFY
    _shard_of: dict[int, tuple[int, int]]  # id(socket) -> (shard id, shard count)
    messages: dict[str, list[dict[str, Any]]]
    dispatched_at: dict[str, float]
    identified: asyncio.Event
    bot: dict[str, Any]
    _sockets: list[web.WebSocketResponse]
    _seq: itertools.count[int]

    @property
    def gateway_url(self) -> str:
        raise NotImplementedError

    def new_id(self) -> str:
        raise NotImplementedError

    # gateway

    async def _gateway(self, request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse()
        await ws.prepare(request)
        self._sockets.append(ws)
        await ws.send_json({"op": 10, "d": {"heartbeat_interval": HEARTBEAT_MS}, "s": None, "t": None})
        try:
            async for msg in ws:
                if msg.type != WSMsgType.TEXT:
                    continue
                frame = json.loads(msg.data)
                op = frame.get("op")
                if op == 1:
                    await ws.send_json({"op": 11, "d": None, "s": None, "t": None})
                elif op == 2:
                    shard, count = (frame["d"].get("shard") or [0, 1])[:2]
                    self.identifies.append([shard, count])
                    self._shard_of[id(ws)] = (shard, count)
                    await self._send(ws, "READY", self._ready(shard, count))
                    for gid in self.guilds:
                        if shard_of(gid, count) == shard:
                            await self._send(ws, "GUILD_CREATE", self._guild(gid))
                    self.identified.set()
                elif op == 6:
                    # The session id names its shard (see _ready), as a resumed session keeps its shard.
                    shard, count = map(int, str(frame["d"].get("session_id", "s-0-1")).split("-")[-2:])
                    self._shard_of[id(ws)] = (shard, count)
                    await self._send(ws, "RESUMED", {})
                    self.identified.set()
        finally:
            self._sockets.remove(ws)
            self._shard_of.pop(id(ws), None)
        return ws

    async def _send(self, ws: web.WebSocketResponse, event: str, data: dict[str, Any]) -> None:
        await ws.send_json({"op": 0, "t": event, "s": next(self._seq), "d": data})

    def _ready(self, shard: int = 0, count: int = 1) -> dict[str, Any]:
        guilds = [{"id": gid, "unavailable": True} for gid in self.guilds if shard_of(gid, count) == shard]
        return {
            "v": 10, "user": self.bot, "guilds": guilds,
            "session_id": f"standin-session-{shard}-{count}", "resume_gateway_url": self.gateway_url,
            "shard": [shard, count],
            "application": {"id": APP_ID, "flags": 1 << 19}, "private_channels": [], "relationships": [],
        }  # fmt: skip

    def _guild(self, guild_id: str = GUILD_ID) -> dict[str, Any]:
        roles = [
            {"id": guild_id, "name": "@everyone", "permissions": MEMBER_PERMISSIONS, "position": 0, "color": 0,
             "hoist": False, "managed": False, "mentionable": False, "flags": 0},
            {"id": ADMIN_ROLE_ID, "name": "support", "permissions": "0", "position": 1, "color": 0,
             "hoist": False, "managed": False, "mentionable": False, "flags": 0},
        ]  # fmt: skip
        mine = [c for c in self.channels.values() if c.get("guild_id") == guild_id]
        channels = [c for c in mine if c["type"] not in THREAD_TYPES]
        threads = [c for c in mine if c["type"] in THREAD_TYPES]
        return {
            "id": guild_id, "name": self.guilds[guild_id], "icon": None, "owner_id": "1000", "roles": roles,
            "channels": channels, "threads": threads, "emojis": [], "stickers": [], "features": [],
            "members": [
                {"user": self.bot, "roles": [], "joined_at": now_iso(), "deaf": False, "mute": False, "flags": 0}
            ],
            "member_count": 3, "large": False, "unavailable": False, "joined_at": now_iso(), "voice_states": [],
            "presences": [], "stage_instances": [], "guild_scheduled_events": [], "premium_tier": 0,
            "preferred_locale": "en-US", "system_channel_flags": 0, "mfa_level": 0, "verification_level": 0,
            "explicit_content_filter": 0, "default_message_notifications": 0, "nsfw_level": 0,
        }  # fmt: skip

    async def dispatch(self, event: str, data: dict[str, Any], *, every_shard: bool = False) -> None:
        """Send a dispatch event on the shard its guild belongs to (DMs: shard 0), or on every shard
        (a redelivery while sessions move, which the bot must still answer once)."""
        for ws in list(self._sockets):
            shard, count = self._shard_of.get(id(ws), (0, 1))
            if every_shard or shard_of(data.get("guild_id"), count) == shard:
                await self._send(ws, event, data)

    async def reconnect(self) -> None:
        """Ask the client to reconnect (op 7), as Discord does when it moves a session."""
        self.identified.clear()
        for ws in list(self._sockets):
            await ws.send_json({"op": 7, "d": None, "s": None, "t": None})

    # what a user does

    def guild_of(self, channel_id: str) -> str | None:
        return self.channels.get(channel_id, {}).get("guild_id")

    def thread(self, name: str, owner_id: str = "1000", parent: str = GENERAL_ID) -> str:
        """A thread someone else started (not the bot): the bot meets it cold."""
        tid = self.new_id()
        self.channels[tid] = {
            "id": tid, "guild_id": self.guild_of(parent), "parent_id": parent, "owner_id": owner_id, "name": name,
            "type": 11,
            "last_message_id": None, "message_count": 0, "member_count": 1, "rate_limit_per_user": 0, "flags": 0,
            "thread_metadata": {"archived": False, "auto_archive_duration": 1440, "archive_timestamp": now_iso(),
                                "locked": False},
        }  # fmt: skip
        return tid

    def _actor(
        self, author: dict[str, Any], channel_id: str, roles: list[str], permissions: str = MEMBER_PERMISSIONS
    ) -> dict[str, Any]:
        if channel_id in self.channels:
            return {
                "guild_id": self.guild_of(channel_id),
                "member": {"user": author, "roles": roles, "joined_at": now_iso(), "deaf": False, "mute": False,
                           "flags": 0, "permissions": permissions, "nick": None, "avatar": None},
            }  # fmt: skip
        return {"user": author}

    def _channel_object(self, channel_id: str) -> dict[str, Any]:
        return self.channels.get(channel_id) or {"id": channel_id, "type": 1, "recipients": [self.bot]}

    async def interact(
        self,
        data: dict[str, Any],
        author: dict[str, Any],
        channel_id: str = GENERAL_ID,
        *,
        kind: int = 2,
        message: dict[str, Any] | None = None,
        interaction_id: str | None = None,
        roles: list[str] | None = None,
        permissions: str = MEMBER_PERMISSIONS,
        without: tuple[str, ...] = (),
        every_shard: bool = False,
    ) -> str:
        """Dispatch INTERACTION_CREATE (2 = application command, 3 = component, 4 = autocomplete,
        5 = modal submit); returns the interaction id. `without` leaves out fields Discord documents
        as optional (`channel`, `guild_locale`, ...)."""
        iid = interaction_id or self.new_id()
        guild = self.guild_of(channel_id)
        payload: dict[str, Any] = {
            "id": iid, "application_id": APP_ID, "type": kind, "data": data, "channel_id": channel_id,
            "channel": self._channel_object(channel_id), "token": f"tok.{channel_id}.{iid}", "version": 1,
            "app_permissions": MEMBER_PERMISSIONS, "locale": "en-US", "entitlements": [],
            "authorizing_integration_owners": {"0": guild or "0"}, "context": 0 if guild else 1,
            "attachment_size_limit": 26214400, **self._actor(author, channel_id, roles or [], permissions),
        }  # fmt: skip
        if guild:
            payload["guild_locale"] = "en-US"
        if message is not None:
            payload["message"] = message
        for field in without:
            payload.pop(field, None)
        self.dispatched_at.setdefault(iid, time.monotonic())
        await self.dispatch("INTERACTION_CREATE", payload, every_shard=every_shard)
        return iid

    async def slash(self, name: str, options: dict[str, str], author: dict[str, Any], channel_id: str = GENERAL_ID,
                    *, interaction_id: str | None = None, roles: list[str] | None = None,
                    without: tuple[str, ...] = (), every_shard: bool = False) -> str:  # fmt: skip
        opts = [{"name": k, "type": 3, "value": v} for k, v in options.items()]
        data = {"id": self.new_id(), "name": name, "type": 1, "options": opts}
        return await self.interact(
            data, author, channel_id, interaction_id=interaction_id, roles=roles, without=without,
            every_shard=every_shard,
        )  # fmt: skip

    async def subcommand(self, group: str, name: str, author: dict[str, Any], channel_id: str,
                         roles: list[str] | None = None, permissions: str = MEMBER_PERMISSIONS,
                         without: tuple[str, ...] = ()) -> str:  # fmt: skip
        data = {"id": self.new_id(), "name": group, "type": 1, "options": [{"name": name, "type": 1, "options": []}]}
        return await self.interact(data, author, channel_id, roles=roles, permissions=permissions, without=without)

    async def click(self, message: dict[str, Any], custom_id: str, author: dict[str, Any],
                    roles: list[str] | None = None, interaction_id: str | None = None,
                    without: tuple[str, ...] = ()) -> str:  # fmt: skip
        data = {"custom_id": custom_id, "component_type": 2}
        return await self.interact(
            data, author, message["channel_id"], kind=3, message=message, roles=roles, interaction_id=interaction_id,
            without=without,
        )  # fmt: skip

    async def say(
        self, channel_id: str, author: dict[str, Any], content: str, *, mention_bot: bool = False,
        message_id: str | None = None,
    ) -> dict[str, Any]:  # fmt: skip
        """Dispatch MESSAGE_CREATE for a user's message; returns the message."""
        text = f"<@{BOT_ID}> {content}" if mention_bot else content
        message = {
            "id": message_id or self.new_id(), "channel_id": channel_id, "author": author, "content": text,
            "timestamp": now_iso(), "edited_timestamp": None, "tts": False, "mention_everyone": False,
            "mentions": [self.bot] if mention_bot else [], "mention_roles": [], "attachments": [], "embeds": [],
            "pinned": False, "type": 0, "flags": 0, "components": [],
        }  # fmt: skip
        if guild := self.guild_of(channel_id):
            message["guild_id"] = guild
            message["member"] = {"roles": [], "joined_at": now_iso(), "deaf": False, "mute": False, "flags": 0}
        self.messages.setdefault(channel_id, []).append(message)
        await self.dispatch("MESSAGE_CREATE", message)
        return message
