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
from typing import Any

from aiohttp import BodyPartReader, web
from pydantic import BaseModel, ConfigDict, Field

from tests.standins.discord_gateway import (
    ADMIN_CHANNEL_ID,
    ADMIN_ROLE_ID,
    APP_ID,
    BOT_ID,
    DISCORD_EPOCH_MS,
    GENERAL_ID,
    GUILD_ID,
    MANAGE_GUILD,
    MEMBER_PERMISSIONS,
    OTHER_ADMIN_CHANNEL_ID,
    OTHER_GENERAL_ID,
    OTHER_GUILD_ID,
    GatewayHalf,
    now_iso,
    user,
)

__all__ = [
    "ADMIN_CHANNEL_ID", "ADMIN_ROLE_ID", "APP_ID", "BOT_ID", "GENERAL_ID", "GUILD_ID", "MANAGE_GUILD",
    "MEMBER_PERMISSIONS", "OTHER_ADMIN_CHANNEL_ID", "OTHER_GENERAL_ID", "OTHER_GUILD_ID", "StandInDiscord", "user",
]  # fmt: skip


class Call(BaseModel):
    """One REST request the bot made."""

    model_config = ConfigDict(arbitrary_types_allowed=True)
    method: str
    path: str
    query: dict[str, str] = Field(default_factory=dict)
    body: Any = None
    at: float  # time.monotonic() on arrival


def json_response(payload: Any, status: int = 200) -> web.Response:
    # discord.py compares the Content-Type for equality; json_response would add "; charset=utf-8".
    return web.Response(status=status, body=json.dumps(payload).encode(), headers={"Content-Type": "application/json"})


class ApiError(Exception):
    def __init__(self, status: int, code: int, message: str):
        super().__init__(message)
        self.status, self.code, self.message = status, code, message


class StandInDiscord(GatewayHalf):
    """Discord's REST API under `/api/v10` and a gateway under `/gateway`, on a free loopback port."""

    def __init__(self, *, two_guilds: bool = False) -> None:
        self.calls: list[Call] = []
        self.channels: dict[str, dict[str, Any]] = {}
        self.guilds: dict[str, str] = {GUILD_ID: "Stand-in"}
        self.identifies: list[list[int]] = []
        self._shard_of: dict[int, tuple[int, int]] = {}
        # Registered application commands, by guild id ("" = global), as Discord keeps them.
        self.commands: dict[str, list[dict[str, Any]]] = {}
        self.messages: dict[str, list[dict[str, Any]]] = {}
        self.dispatched_at: dict[str, float] = {}  # interaction id -> when INTERACTION_CREATE went out
        self.posted_at: dict[str, float] = {}  # message id -> when the bot posted it
        self.followup_of: dict[str, str] = {}  # follow-up message id -> its interaction id
        self.acknowledged: set[str] = set()  # interactions that got their one response
        self.identified = asyncio.Event()
        # (start, seconds, retry_after): message posts in this window are answered 429 (`rate_limit`)
        self.limited: tuple[float, float, float] | None = None
        self.refused: list[Call] = []
        # Called with (path, body) after a POST was answered internally, before the reply goes
        # out: a crash test kills the bot here to leave a message posted but unacknowledged.
        self.on_post: list[Callable[[str, dict[str, Any]], None]] = []
        self._ids = itertools.count(1)
        self._sockets: list[web.WebSocketResponse] = []
        self._seq = itertools.count(1)
        self._runner: web.AppRunner | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self.port = 0
        self.bot = user(BOT_ID, "agentbot", bot=True)
        text_channels = [(GUILD_ID, GENERAL_ID, "general"), (GUILD_ID, ADMIN_CHANNEL_ID, "agentbot-admin")]
        if two_guilds:
            self.guilds[OTHER_GUILD_ID] = "Other stand-in"
            text_channels += [
                (OTHER_GUILD_ID, OTHER_GENERAL_ID, "general"),
                (OTHER_GUILD_ID, OTHER_ADMIN_CHANNEL_ID, "mods"),
            ]
        for gid, cid, name in text_channels:
            self.channels[cid] = {
                "id": cid, "type": 0, "guild_id": gid, "name": name, "position": 0,
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
        if self._limited(request.method, path):
            assert self.limited is not None
            self.refused.append(self.calls[-1])
            retry_after = self.limited[2]
            # Like Discord: the wait in the body, the bucket in headers, and Cloudflare's Via header
            # (without it discord.py takes a 429 for a ban and does not retry).
            headers = {"Content-Type": "application/json", "Via": "1.1 google", "X-RateLimit-Limit": "5",
                       "X-RateLimit-Remaining": "0", "X-RateLimit-Reset-After": str(retry_after),
                       "X-RateLimit-Bucket": "standin-messages", "X-RateLimit-Scope": "user",
                       "Retry-After": str(int(retry_after))}  # fmt: skip
            body429 = {"message": "You are being rate limited.", "retry_after": retry_after, "global": False}
            return web.Response(status=429, body=json.dumps(body429).encode(), headers=headers)
        parts = path.strip("/").split("/")
        handler = self._route(request.method, parts)
        if handler is None:
            return json_response({"message": "404: Not Found", "code": 0}, 404)
        try:
            answer = handler(parts, body or {})
        except ApiError as e:
            return json_response({"message": e.message, "code": e.code}, e.status)
        for hook in self.on_post if request.method == "POST" else []:
            hook(path, body or {})
        return json_response(answer)

    @staticmethod
    async def _multipart_json(request: web.Request) -> Any:
        reader = await request.multipart()
        async for part in reader:
            if isinstance(part, BodyPartReader) and part.name == "payload_json":
                return json.loads(await part.text())
        return None

    def _route(self, method: str, p: list[str]) -> Callable[[list[str], dict[str, Any]], Any] | None:
        routes: dict[tuple[str, int, str], Callable[[list[str], dict[str, Any]], Any]] = {
            ("GET", 2, "users/@me"): lambda p, b: self.bot,
            ("GET", 2, "gateway/bot"): lambda p, b: self._gateway_bot(),
            ("GET", 3, "oauth2/applications/@me"): lambda p, b: self._application(),
            ("PUT", 3, "applications"): self._commands,
            ("PUT", 5, "applications"): self._commands,
            ("GET", 3, "applications"): lambda p, b: self.commands.get("", []),
            ("GET", 5, "applications"): lambda p, b: self.commands.get(p[3], []),
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
        key = (method, len(p), "/".join(p) if p[0] in ("users", "oauth2", "gateway") else p[0])
        return routes.get(key)

    def _application(self) -> dict[str, Any]:
        return {
            "id": APP_ID, "name": "agentbot", "icon": None, "description": "", "bot_public": True,
            "bot_require_code_grant": False, "verify_key": "0" * 64, "owner": user("1000", "owner"),
            "flags": 1 << 19, "team": None, "summary": "", "rpc_origins": [], "tags": [],
        }  # fmt: skip

    def _gateway_bot(self) -> dict[str, Any]:
        return {
            "url": self.gateway_url, "shards": 2,
            "session_start_limit": {"total": 1000, "remaining": 999, "reset_after": 14400000, "max_concurrency": 1},
        }  # fmt: skip

    def _commands(self, p: list[str], body: Any) -> list[dict[str, Any]]:
        """A bulk overwrite: the commands given replace every command registered there."""
        registered = [
            {
                **c,
                "id": self.new_id(),
                "application_id": APP_ID,
                "version": self.new_id(),
                "default_member_permissions": None,
                **({"guild_id": p[3]} if len(p) == 5 else {}),
            }
            for c in body
        ]
        self.commands[p[3] if len(p) == 5 else ""] = registered
        return registered

    def _callback(self, p: list[str], body: dict[str, Any]) -> dict[str, Any]:
        if p[1] in self.acknowledged:  # like Discord: one response per interaction, then follow-ups
            raise ApiError(400, 40060, "Interaction has already been acknowledged.")
        self.acknowledged.add(p[1])
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
        # Like Discord: a repeated nonce with enforce_nonce returns the message already created.
        nonce = body.get("nonce")
        if nonce and body.get("enforce_nonce"):
            for earlier in self.messages.get(channel_id, []):
                if earlier.get("nonce") == nonce and earlier["author"]["id"] == BOT_ID:
                    return earlier
        message = {
            "id": self.new_id(), "channel_id": channel_id, "author": self.bot, "content": body.get("content", ""),
            "timestamp": now_iso(), "edited_timestamp": None, "tts": False, "mention_everyone": False,
            "mentions": [], "mention_roles": [], "attachments": [], "embeds": body.get("embeds", []),
            "pinned": False, "type": 0, "flags": body.get("flags", 0), "components": body.get("components", []),
        }  # fmt: skip
        if guild := self.channels.get(channel_id, {}).get("guild_id"):
            message["guild_id"] = guild
        if nonce:
            message["nonce"] = str(nonce)
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
        if message_id in self.channels:
            raise ApiError(400, 160004, "A thread has already been created for this message")
        thread = {
            "id": message_id, "guild_id": self.guild_of(parent), "parent_id": parent, "owner_id": BOT_ID,
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

    # what tests look at

    def rate_limit(self, seconds: float, retry_after: float) -> float:
        """From now, for `seconds`, every message post (channel messages, follow-ups) is answered
        429 with `retry_after`; returns when the window ends (time.monotonic)."""
        start = time.monotonic()
        self.limited = (start, seconds, retry_after)
        return start + seconds

    def _limited(self, method: str, path: str) -> bool:
        if self.limited is None or method != "POST":
            return False
        start, seconds, _ = self.limited
        posting = path.rstrip("/").endswith("/messages") or path.startswith("/webhooks/")
        return posting and start <= time.monotonic() < start + seconds

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
