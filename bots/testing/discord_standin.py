"""A stand-in Discord on 127.0.0.1: the REST API and the gateway, enough for the real discord.py client.

Tests and `agentbot bench discord` run the real library against it (`DISCORD_API_BASE`,
`DISCORD_GATEWAY_URL`). It answers the calls the bot makes with Discord's documented shapes,
records every call with the time it arrived, and lets the caller dispatch gateway events
(slash commands, messages, button clicks) as Discord would.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from aiohttp import WSMsgType, web
from pydantic import BaseModel, ConfigDict, Field

APP_ID = "1100000000000000001"
BOT_ID = APP_ID  # Discord gives a bot user the application's id
GUILD_ID = "1200000000000000001"
GENERAL_ID = "1200000000000000002"
ADMIN_CHANNEL_ID = "1200000000000000003"
ADMIN_ROLE_ID = "1200000000000000004"
HEARTBEAT_MS = 41250
THREAD_TYPES = {10, 11, 12}
DISCORD_EPOCH_MS = 1420070400000


class Call(BaseModel):
    """One REST request the bot made."""

    model_config = ConfigDict(arbitrary_types_allowed=True)
    method: str
    path: str
    query: dict[str, str] = Field(default_factory=dict)
    body: Any = None
    at: float  # time.monotonic() on arrival


def user(uid: str, name: str, bot: bool = False) -> dict[str, Any]:
    return {"id": uid, "username": name, "global_name": name, "discriminator": "0", "avatar": None, "bot": bot}


def now_iso() -> str:
    return datetime.now(UTC).isoformat()


def json_response(payload: Any, status: int = 200) -> web.Response:
    # discord.py compares the Content-Type for equality; json_response would add "; charset=utf-8".
    return web.Response(status=status, body=json.dumps(payload).encode(), headers={"Content-Type": "application/json"})


class StandInDiscord:
    """Discord's REST API under `/api/v10` and a gateway under `/gateway`, on a free loopback port."""

    def __init__(self) -> None:
        self.calls: list[Call] = []
        self.channels: dict[str, dict[str, Any]] = {}
        self.messages: dict[str, list[dict[str, Any]]] = {}
        self.dispatched_at: dict[str, float] = {}  # interaction id -> when INTERACTION_CREATE went out
        self.posted_at: dict[str, float] = {}  # message id -> when the bot posted it
        self.followup_of: dict[str, str] = {}  # follow-up message id -> its interaction id
        self.identified = asyncio.Event()
        self._ids = itertools.count(1)
        self._sockets: list[web.WebSocketResponse] = []
        self._seq = itertools.count(1)
        self._runner: web.AppRunner | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self.port = 0
        self.bot = user(BOT_ID, "agentbot", bot=True)
        for cid, name in ((GENERAL_ID, "general"), (ADMIN_CHANNEL_ID, "agentbot-admin")):
            self.channels[cid] = {
                "id": cid, "type": 0, "guild_id": GUILD_ID, "name": name, "position": 0,
                "permission_overwrites": [], "nsfw": False, "parent_id": None, "topic": None,
                "last_message_id": None, "rate_limit_per_user": 0,
            }  # fmt: skip

    # lifecycle

    async def start(self) -> StandInDiscord:
        app = web.Application()
        app.router.add_get("/gateway", self._gateway)
        app.router.add_route("*", "/api/v10/{tail:.*}", self._rest)
        self._runner = web.AppRunner(app)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        return self

    async def aclose(self) -> None:
        await asyncio.gather(*self._tasks, return_exceptions=True)
        for ws in list(self._sockets):
            await ws.close()
        if self._runner is not None:
            await self._runner.cleanup()

    @property
    def api_base(self) -> str:
        return f"http://127.0.0.1:{self.port}/api/v10"

    @property
    def gateway_url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/gateway"

    def new_id(self) -> str:
        """A snowflake: milliseconds since Discord's epoch, then a counter (discord.py reads times from ids)."""
        ms = int(time.time() * 1000) - DISCORD_EPOCH_MS
        return str((ms << 22) | (next(self._ids) & 0x3FFFFF))

    # REST

    async def _rest(self, request: web.Request) -> web.Response:
        body = await request.json() if request.can_read_body and request.content_type == "application/json" else None
        if body is None and request.content_type.startswith("multipart/"):
            body = await self._multipart_json(request)
        path = "/" + request.match_info["tail"]
        self.calls.append(
            Call(method=request.method, path=path, query=dict(request.query), body=body, at=time.monotonic())
        )
        parts = path.strip("/").split("/")
        handler = self._route(request.method, parts)
        if handler is None:
            return json_response({"message": "404: Not Found", "code": 0}, 404)
        return json_response(handler(parts, body or {}))

    @staticmethod
    async def _multipart_json(request: web.Request) -> Any:
        reader = await request.multipart()
        async for part in reader:
            if getattr(part, "name", None) == "payload_json":
                return json.loads(await part.text())  # type: ignore[union-attr]
        return None

    def _route(self, method: str, p: list[str]) -> Callable[[list[str], dict[str, Any]], Any] | None:
        routes: dict[tuple[str, int, str], Callable[[list[str], dict[str, Any]], Any]] = {
            ("GET", 2, "users/@me"): lambda p, b: self.bot,
            ("GET", 3, "oauth2/applications/@me"): lambda p, b: self._application(),
            ("PUT", 3, "applications"): self._commands,
            ("PUT", 5, "applications"): self._commands,
            ("POST", 4, "interactions"): self._callback,
            ("POST", 3, "webhooks"): lambda p, b: self._post(
                self._interaction_channel(p[2]), b, webhook=True, token_interaction=p[2].split(".")[2]
            ),
            ("PATCH", 5, "webhooks"): lambda p, b: self._edit(p[4], b),
            ("POST", 3, "channels"): lambda p, b: self._post(p[1], b),
            ("GET", 3, "channels"): lambda p, b: list(reversed(self.messages.get(p[1], [])))[:100],
            ("POST", 5, "channels"): self._thread_from_message,
            ("GET", 2, "channels"): lambda p, b: self.channels[p[1]],
        }
        key = (method, len(p), "/".join(p) if p[0] in ("users", "oauth2") else p[0])
        return routes.get(key)

    def _application(self) -> dict[str, Any]:
        return {
            "id": APP_ID, "name": "agentbot", "icon": None, "description": "", "bot_public": True,
            "bot_require_code_grant": False, "verify_key": "0" * 64, "owner": user("1000", "owner"),
            "flags": 1 << 19, "team": None, "summary": "", "rpc_origins": [], "tags": [],
        }  # fmt: skip

    def _commands(self, p: list[str], body: Any) -> list[dict[str, Any]]:
        return [
            {
                **c,
                "id": self.new_id(),
                "application_id": APP_ID,
                "version": self.new_id(),
                "default_member_permissions": None,
            }
            for c in body
        ]

    def _callback(self, p: list[str], body: dict[str, Any]) -> dict[str, Any]:
        data = body.get("data") or {}
        return {
            "interaction": {
                "id": p[1], "type": 2, "response_message_loading": body.get("type") == 5,
                "response_message_ephemeral": bool((data.get("flags") or 0) & 64),
            },
            "resource": {"type": body.get("type")},
        }  # fmt: skip

    def _interaction_channel(self, token: str) -> str:
        return token.split(".")[1]  # the tokens this stand-in issues name their channel

    def _post(
        self, channel_id: str, body: dict[str, Any], webhook: bool = False, token_interaction: str = ""
    ) -> dict[str, Any]:
        message = {
            "id": self.new_id(), "channel_id": channel_id, "author": self.bot, "content": body.get("content", ""),
            "timestamp": now_iso(), "edited_timestamp": None, "tts": False, "mention_everyone": False,
            "mentions": [], "mention_roles": [], "attachments": [], "embeds": body.get("embeds", []),
            "pinned": False, "type": 0, "flags": body.get("flags", 0), "components": body.get("components", []),
        }  # fmt: skip
        if guild := self.channels.get(channel_id, {}).get("guild_id"):
            message["guild_id"] = guild
        self.posted_at[message["id"]] = time.monotonic()
        if webhook:
            self.followup_of[message["id"]] = token_interaction
            message["webhook_id"] = APP_ID
            message["application_id"] = APP_ID
        self.messages.setdefault(channel_id, []).append(message)
        return message

    def _edit(self, message_id: str, body: dict[str, Any]) -> dict[str, Any]:
        for msgs in self.messages.values():
            for m in msgs:
                if m["id"] == message_id:
                    m.update({k: v for k, v in body.items() if k in ("content", "components", "embeds")})
                    return m
        return {}

    def _thread_from_message(self, p: list[str], body: dict[str, Any]) -> dict[str, Any]:
        parent, message_id = p[1], p[3]
        thread = {
            "id": message_id, "guild_id": GUILD_ID, "parent_id": parent, "owner_id": BOT_ID,
            "name": body.get("name", "thread"), "type": 11, "last_message_id": None, "message_count": 0,
            "member_count": 1, "rate_limit_per_user": 0, "flags": 0, "total_message_sent": 0,
            "thread_metadata": {"archived": False, "auto_archive_duration": body.get("auto_archive_duration", 1440),
                                "archive_timestamp": now_iso(), "locked": False},
        }  # fmt: skip
        self.channels[message_id] = thread
        # Discord announces the thread on the gateway after answering the request.
        task = asyncio.get_running_loop().create_task(self.dispatch("THREAD_CREATE", {**thread, "newly_created": True}))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return thread

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
                    await self._send(ws, "READY", self._ready())
                    await self._send(ws, "GUILD_CREATE", self._guild())
                    self.identified.set()
                elif op == 6:
                    await self._send(ws, "RESUMED", {})
                    self.identified.set()
        finally:
            self._sockets.remove(ws)
        return ws

    async def _send(self, ws: web.WebSocketResponse, event: str, data: dict[str, Any]) -> None:
        await ws.send_json({"op": 0, "t": event, "s": next(self._seq), "d": data})

    def _ready(self) -> dict[str, Any]:
        return {
            "v": 10, "user": self.bot, "guilds": [{"id": GUILD_ID, "unavailable": True}],
            "session_id": "standin-session", "resume_gateway_url": self.gateway_url, "shard": [0, 1],
            "application": {"id": APP_ID, "flags": 1 << 19}, "private_channels": [], "relationships": [],
        }  # fmt: skip

    def _guild(self) -> dict[str, Any]:
        roles = [
            {"id": GUILD_ID, "name": "@everyone", "permissions": "1071698660929", "position": 0, "color": 0,
             "hoist": False, "managed": False, "mentionable": False, "flags": 0},
            {"id": ADMIN_ROLE_ID, "name": "support", "permissions": "0", "position": 1, "color": 0,
             "hoist": False, "managed": False, "mentionable": False, "flags": 0},
        ]  # fmt: skip
        channels = [c for c in self.channels.values() if c["type"] not in THREAD_TYPES and c.get("guild_id")]
        threads = [c for c in self.channels.values() if c["type"] in THREAD_TYPES]
        return {
            "id": GUILD_ID, "name": "Stand-in", "icon": None, "owner_id": "1000", "roles": roles,
            "channels": channels, "threads": threads, "emojis": [], "stickers": [], "features": [],
            "members": [
                {"user": self.bot, "roles": [], "joined_at": now_iso(), "deaf": False, "mute": False, "flags": 0}
            ],
            "member_count": 3, "large": False, "unavailable": False, "joined_at": now_iso(), "voice_states": [],
            "presences": [], "stage_instances": [], "guild_scheduled_events": [], "premium_tier": 0,
            "preferred_locale": "en-US", "system_channel_flags": 0, "mfa_level": 0, "verification_level": 0,
            "explicit_content_filter": 0, "default_message_notifications": 0, "nsfw_level": 0,
        }  # fmt: skip

    async def dispatch(self, event: str, data: dict[str, Any]) -> None:
        for ws in list(self._sockets):
            await self._send(ws, event, data)

    async def reconnect(self) -> None:
        """Ask the client to reconnect (op 7), as Discord does when it moves a session."""
        self.identified.clear()
        for ws in list(self._sockets):
            await ws.send_json({"op": 7, "d": None, "s": None, "t": None})

    # what a user does

    def thread(self, name: str, owner_id: str = "1000", parent: str = GENERAL_ID) -> str:
        """A thread someone else started (not the bot): the bot meets it cold."""
        tid = self.new_id()
        self.channels[tid] = {
            "id": tid, "guild_id": GUILD_ID, "parent_id": parent, "owner_id": owner_id, "name": name, "type": 11,
            "last_message_id": None, "message_count": 0, "member_count": 1, "rate_limit_per_user": 0, "flags": 0,
            "thread_metadata": {"archived": False, "auto_archive_duration": 1440, "archive_timestamp": now_iso(),
                                "locked": False},
        }  # fmt: skip
        return tid

    def _actor(self, author: dict[str, Any], channel_id: str, roles: list[str]) -> dict[str, Any]:
        if channel_id in self.channels:
            return {
                "guild_id": GUILD_ID,
                "member": {"user": author, "roles": roles, "joined_at": now_iso(), "deaf": False, "mute": False,
                           "flags": 0, "permissions": "1071698660929", "nick": None, "avatar": None},
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
    ) -> str:
        """Dispatch INTERACTION_CREATE (2 = slash command, 3 = component); returns the interaction id."""
        iid = interaction_id or self.new_id()
        payload: dict[str, Any] = {
            "id": iid, "application_id": APP_ID, "type": kind, "data": data, "channel_id": channel_id,
            "channel": self._channel_object(channel_id), "token": f"tok.{channel_id}.{iid}", "version": 1,
            "app_permissions": "1071698660929", "locale": "en-US", "entitlements": [],
            "authorizing_integration_owners": {"0": GUILD_ID}, "context": 0 if channel_id in self.channels else 1,
            "attachment_size_limit": 26214400, **self._actor(author, channel_id, roles or []),
        }  # fmt: skip
        if channel_id in self.channels:
            payload["guild_locale"] = "en-US"
        if message is not None:
            payload["message"] = message
        self.dispatched_at.setdefault(iid, time.monotonic())
        await self.dispatch("INTERACTION_CREATE", payload)
        return iid

    async def slash(self, name: str, options: dict[str, str], author: dict[str, Any], channel_id: str = GENERAL_ID,
                    *, interaction_id: str | None = None, roles: list[str] | None = None) -> str:  # fmt: skip
        opts = [{"name": k, "type": 3, "value": v} for k, v in options.items()]
        data = {"id": self.new_id(), "name": name, "type": 1, "options": opts}
        return await self.interact(data, author, channel_id, interaction_id=interaction_id, roles=roles)

    async def subcommand(self, group: str, name: str, author: dict[str, Any], channel_id: str,
                         roles: list[str] | None = None) -> str:  # fmt: skip
        data = {"id": self.new_id(), "name": group, "type": 1, "options": [{"name": name, "type": 1, "options": []}]}
        return await self.interact(data, author, channel_id, roles=roles)

    async def click(self, message: dict[str, Any], custom_id: str, author: dict[str, Any],
                    roles: list[str] | None = None, interaction_id: str | None = None) -> str:  # fmt: skip
        data = {"custom_id": custom_id, "component_type": 2}
        return await self.interact(
            data, author, message["channel_id"], kind=3, message=message, roles=roles, interaction_id=interaction_id
        )

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
        if channel_id in self.channels:
            message["guild_id"] = GUILD_ID
            message["member"] = {"roles": [], "joined_at": now_iso(), "deaf": False, "mute": False, "flags": 0}
        self.messages.setdefault(channel_id, []).append(message)
        await self.dispatch("MESSAGE_CREATE", message)
        return message

    # what tests look at

    def posted(self, channel_id: str) -> list[dict[str, Any]]:
        """Messages the bot posted in a channel or thread (follow-ups included), oldest first."""
        return [m for m in self.messages.get(channel_id, []) if m["author"]["id"] == BOT_ID]

    def calls_to(self, method: str, fragment: str) -> list[Call]:
        return [c for c in self.calls if c.method == method and fragment in c.path]

    async def wait_until(self, check: Callable[[], Any], within: float = 5.0) -> Any:
        """Poll `check` until it returns something truthy (the stand-in runs in the caller's loop)."""
        deadline = time.monotonic() + within
        while time.monotonic() < deadline:
            if result := check():
                return result
            await asyncio.sleep(0.01)
        raise AssertionError(f"stand-in Discord: condition not met within {within}s")
