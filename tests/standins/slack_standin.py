"""A stand-in for Slack's Web API on 127.0.0.1 that records every call.

The real `slack_sdk` client talks to it through `SLACK_API_URL`; `agentbot bench slack` and the
tests use it to see exactly what the bot sent (thread_ts, text, blocks) without a network.
"""

from __future__ import annotations

import asyncio
import inspect
import itertools
import json
import time
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web
from pydantic import BaseModel, Field

# The header `stamp_sends` adds to every request: when the client wrote it (`time.monotonic()`, one
# clock for every process on the machine).
SENT_AT = "X-Standin-Sent-At"

BOT_USER_ID = "UBOTAGENT"
BOT_ID = "BBOTAGENT"
TEAM_ID = "T0AGENTBOT"


class ApiCall(BaseModel):
    method: str
    params: dict[str, Any] = Field(default_factory=dict)
    ok: bool = True
    token: str = ""  # the bearer token the call carried: which workspace's install made it
    at: float = Field(default_factory=time.monotonic)  # when it arrived
    sent: float | None = None  # when the client sent it, if it said (`stamp_sends`)
    retry_after: float | None = None  # answered 429 with this Retry-After

    @property
    def left(self) -> float:
        """When the call left the client: its stamp, or (unstamped) its arrival, which is no earlier."""
        return self.at if self.sent is None else min(self.sent, self.at)


def stamping(send: Callable[..., Awaitable[Any]]) -> Callable[..., Awaitable[Any]]:
    """aiohttp's `ClientRequest.send`, made to stamp each request with when it was sent (`SENT_AT`):
    as its headers are written, after any wait of the client's own, so a call that waited is
    stamped as late as it left."""

    async def stamped(self: Any, conn: Any) -> Any:
        self.headers[SENT_AT] = repr(time.monotonic())
        return await send(self, conn)

    stamped.stamping = True  # type: ignore[attr-defined]
    return stamped


def stamp_sends() -> None:
    """Every aiohttp request of this process says when it was sent; a worker process the tests
    start calls this first."""
    from aiohttp import ClientRequest

    if not getattr(ClientRequest.send, "stamping", False):
        ClientRequest.send = stamping(ClientRequest.send)  # type: ignore[method-assign,assignment]


def _sent_at(request: web.Request) -> float | None:
    try:
        return float(request.headers[SENT_AT])
    except (KeyError, ValueError):
        return None


class RateLimitWindow(BaseModel):
    """Every call to `methods` from `start` for `seconds` is answered 429 with `retry_after`."""

    methods: frozenset[str]
    start: float
    seconds: float
    retry_after: int

    def covers(self, method: str, at: float) -> bool:
        return method in self.methods and self.start <= at < self.start + self.seconds

    def close(self) -> None:
        """End the window now (if it has not ended already)."""
        self.seconds = min(self.seconds, time.monotonic() - self.start)


class Workspace(BaseModel):
    """A workspace the app can be installed in: what Slack's OAuth hands over for its `code`."""

    team_id: str
    team_name: str
    bot_token: str
    bot_user_id: str
    bot_id: str
    installer: str  # the user who approves the install
    code: str  # the one-time code Slack's authorize page sends to the redirect URL
    enterprise_id: str = ""  # an Enterprise Grid org's workspace, or (with no team_id) the org itself
    org_wide: bool = False  # installed org-wide: one install, one token, for every workspace of the org


class SlackStandIn:
    """Answers the Web API methods agentbot uses; `calls` holds each request, in arrival order."""

    def __init__(self, *, team_id: str = TEAM_ID, user_id: str = BOT_USER_ID, bot_id: str = BOT_ID):
        self.team_id, self.user_id, self.bot_id = team_id, user_id, bot_id
        self.calls: list[ApiCall] = []
        self.threads: dict[tuple[str, str], list[dict[str, Any]]] = {}  # (channel, root ts) -> messages
        self.failures: dict[str, list[tuple[int, dict[str, Any], int]]] = {}  # method -> queued error answers
        self._seq = itertools.count(1)
        self._base = int(time.time())
        self._runner: web.AppRunner | None = None
        self._changed = asyncio.Event()  # set on every recorded call
        # Called with (method, params) after a call is recorded and before it is answered: a crash
        # test kills the bot here to leave a message posted but unacknowledged.
        self.on_call: list[Callable[[str, dict[str, Any]], None]] = []
        # Methods answered by another stand-in (apps.connections.open by the Socket Mode one).
        self.answers: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {}
        self.workspaces: list[Workspace] = []  # installable through oauth.v2.access; auth.test knows their tokens
        self.windows: list[RateLimitWindow] = []
        self.url = ""

    # Serving

    async def start(self, host: str = "127.0.0.1", port: int = 0) -> str:
        app = web.Application()
        app.router.add_post("/api/{method}", self._api)
        app.router.add_get("/api/{method}", self._api)  # conversations.replies and friends use GET
        app.router.add_post("/response/{token}", self._response_url)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, host, port)
        await site.start()
        bound = self._runner.addresses[0]
        self.url = f"http://{bound[0]}:{bound[1]}"
        return f"{self.url}/api/"

    async def aclose(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()

    # Test controls

    def next_ts(self) -> str:
        return f"{self._base}.{next(self._seq):06d}"

    def seed_thread(self, channel: str, messages: list[dict[str, Any]]) -> None:
        """Messages already in a thread (the first is the root), for conversations.replies."""
        self.threads[(channel, messages[0]["ts"])] = list(messages)

    def add_workspace(self, team_id: str, name: str) -> Workspace:
        n = len(self.workspaces) + 1
        ws = Workspace(
            team_id=team_id,
            team_name=name,
            bot_token=f"xoxb-{team_id.lower()}",
            bot_user_id=f"UBOT{n:05d}",
            bot_id=f"BBOT{n:05d}",
            installer=f"U0INSTAL{n}",
            code=f"code-{team_id.lower()}",
        )
        self.workspaces.append(ws)
        return ws

    def add_org(self, enterprise_id: str, name: str) -> Workspace:
        """An Enterprise Grid org the app can be installed in org-wide (no team of its own)."""
        ws = self.add_workspace(enterprise_id, name)
        ws.team_id, ws.enterprise_id, ws.org_wide = "", enterprise_id, True
        ws.bot_token, ws.code = f"xoxb-{enterprise_id.lower()}", f"code-{enterprise_id.lower()}"
        return ws

    def fail_next(
        self, method: str, status: int = 429, body: dict[str, Any] | None = None, retry_after: int = 0
    ) -> None:
        self.failures.setdefault(method, []).append(
            (status, body or {"ok": False, "error": "ratelimited"}, retry_after)
        )

    def rate_limit(self, methods: set[str], seconds: float, retry_after: int = 5) -> RateLimitWindow:
        """From now, for `seconds`, answer every call to `methods` 429 with `Retry-After`."""
        window = RateLimitWindow(
            methods=frozenset(methods), start=time.monotonic(), seconds=seconds, retry_after=retry_after
        )
        self.windows.append(window)
        return window

    def too_soon(self) -> list[ApiCall]:
        """Calls made sooner than `Retry-After` after a 429 on the same method and workspace (token):
        what Slack counts against an app that does not slow down. A call counts when it left the
        client (`ApiCall.left`) at or after the moment the 429 was answered: one that left before
        (another worker's, already on its way) was not made after the 429, even if it arrives later
        (`in_flight_at_429` counts those)."""
        refusals = [c for c in self.calls if c.retry_after is not None]
        return [c for c in self.calls if self._within_a_pause(refusals, c, c.left)]

    def in_flight_at_429(self) -> list[ApiCall]:
        """Calls that arrived within a 429's `Retry-After` on their method and workspace but had
        left the client before that 429 was answered."""
        refusals = [c for c in self.calls if c.retry_after is not None]
        return [
            c
            for c in self.calls
            if self._within_a_pause(refusals, c, c.at) and not self._within_a_pause(refusals, c, c.left)
        ]

    @staticmethod
    def _within_a_pause(refusals: list[ApiCall], call: ApiCall, at: float) -> bool:
        return any(
            r is not call and r.method == call.method and r.token == call.token and r.at <= at < r.at + r.retry_after
            for r in refusals
            if r.retry_after is not None
        )

    def refused_calls(self) -> list[str]:
        """Every recorded call Slack would not take as sent: a method slack_sdk's `AsyncWebClient`
        does not have, a parameter its method does not take (Slack ignores those silently, so a
        promise such as "markdown off" would not hold), or an empty channel."""
        from slack_sdk.web.async_client import AsyncWebClient

        problems = []
        for call in self.calls:
            if call.method == "response_url":
                continue  # a response_url webhook, not a Web API method
            method = getattr(AsyncWebClient, call.method.replace(".", "_"), None)
            if method is None:
                problems.append(f"{call.method}: not a Web API method slack_sdk knows")
                continue
            # `token` is every method's (slack_sdk moves it into the Authorization header), and a
            # client made with `team_id` (bolt's per-request client is) sends it with every call.
            taken = {"token", "team_id"} | {
                name
                for name, p in inspect.signature(method).parameters.items()
                if name != "self" and p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)
            }
            if extra := sorted(set(call.params) - taken):
                problems.append(f"{call.method}: {', '.join(extra)} not taken by {method.__name__}")
            for name in ("channel", "channel_id", "user"):
                if name in call.params and not str(call.params[name]).strip():
                    problems.append(f"{call.method}: empty {name}")
        return problems

    def to(self, method: str) -> list[dict[str, Any]]:
        return [c.params for c in self.calls if c.method == method and c.ok]

    async def wait_for(self, method: str, count: int, within: float = 10.0) -> list[dict[str, Any]]:
        """Wait until `count` successful calls of `method` arrived; return them."""
        try:
            async with asyncio.timeout(within):
                while len(self.to(method)) < count:
                    self._changed.clear()
                    await self._changed.wait()
        except TimeoutError:
            raise TimeoutError(f"{method}: {len(self.to(method))} calls, wanted {count}: {self.to(method)}") from None
        return self.to(method)

    # Handlers

    async def _params(self, request: web.Request) -> dict[str, Any]:
        if request.method == "GET":
            return dict(request.query)
        if request.content_type == "application/json":
            return dict(await request.json())
        form = await request.post()
        params: dict[str, Any] = dict(request.query)  # some methods (setTitle) send query parameters
        for k, v in form.items():
            params[k] = v if isinstance(v, str) else str(v)
            if k in ("blocks", "attachments", "metadata") and isinstance(params[k], str):
                params[k] = json.loads(params[k])
        return params

    async def _api(self, request: web.Request) -> web.Response:
        method = request.match_info["method"]
        params = await self._params(request)
        token = request.headers.get("Authorization", "").removeprefix("Bearer ") or str(params.get("token", ""))
        params.pop("client_secret", None)  # never recorded, like a token
        window = next((w for w in self.windows if w.covers(method, time.monotonic())), None)
        sent = _sent_at(request)
        if window is not None:
            # A 429's `at` is when it was answered: recorded just before the answer is written.
            self.calls.append(
                ApiCall(method=method, params=params, ok=False, token=token, sent=sent, retry_after=window.retry_after)
            )
            return web.json_response(
                {"ok": False, "error": "ratelimited"}, status=429, headers={"Retry-After": str(window.retry_after)}
            )
        queued = self.failures.get(method)
        if queued:
            status, body, retry_after = queued.pop(0)
            self.calls.append(ApiCall(method=method, params=params, ok=False, token=token, sent=sent))
            return web.json_response(body, status=status, headers={"Retry-After": str(retry_after)})
        self.calls.append(ApiCall(method=method, params=params, token=token, sent=sent))
        self._changed.set()
        if method in self.answers:
            answer = self.answers[method](params)
        elif method in ("auth.test", "oauth.v2.access") and self.workspaces:
            answer = self._installs(method, params, token)
        else:
            answer = self._answer(method, params)
        for hook in self.on_call:
            hook(method, params)
        return web.json_response(answer)

    async def _response_url(self, request: web.Request) -> web.Response:
        self.calls.append(ApiCall(method="response_url", params=await request.json()))
        self._changed.set()
        return web.Response(text="ok")

    def _installs(self, method: str, p: dict[str, Any], token: str) -> dict[str, Any]:
        """auth.test by token and oauth.v2.access by code, for the workspaces added."""
        if method == "auth.test":
            found = [w for w in self.workspaces if w.bot_token == token]
            if not found:
                return {"ok": False, "error": "invalid_auth"}
            w = found[0]
            if w.org_wide:
                return {
                    "ok": True,
                    "user_id": w.bot_user_id,
                    "bot_id": w.bot_id,
                    "enterprise_id": w.enterprise_id,
                    "is_enterprise_install": True,
                    "url": f"https://{w.team_name.lower().replace(' ', '-')}.enterprise.slack.com/",
                }
            return {"ok": True, "user_id": w.bot_user_id, "bot_id": w.bot_id, "team_id": w.team_id, "team": w.team_name}
        found = [w for w in self.workspaces if w.code == p.get("code")]
        if not found:
            return {"ok": False, "error": "invalid_code"}
        w = found[0]
        if w.org_wide:
            return {
                "ok": True,
                "app_id": "A0AGENTBOT",
                "authed_user": {"id": w.installer},
                "scope": "app_mentions:read,chat:write,commands",
                "token_type": "bot",
                "access_token": w.bot_token,
                "bot_user_id": w.bot_user_id,
                "team": None,
                "enterprise": {"id": w.enterprise_id, "name": w.team_name},
                "is_enterprise_install": True,
            }
        return {
            "ok": True,
            "app_id": "A0AGENTBOT",
            "authed_user": {"id": w.installer},
            "scope": "app_mentions:read,assistant:write,chat:write,commands,im:history",
            "token_type": "bot",
            "access_token": w.bot_token,
            "bot_user_id": w.bot_user_id,
            "team": {"id": w.team_id, "name": w.team_name},
            "enterprise": None,
            "is_enterprise_install": False,
        }

    def _answer(self, method: str, p: dict[str, Any]) -> dict[str, Any]:
        if method == "auth.test":
            return {
                "ok": True,
                "user_id": self.user_id,
                "bot_id": self.bot_id,
                "team_id": self.team_id,
                "team": "Agentbot Test",
                "user": "agentbot",
                "url": "https://agentbot-test.slack.com/",
            }
        if method == "chat.postMessage":
            ts = self.next_ts()
            message = {"ts": ts, "text": p.get("text", ""), "user": self.user_id, "bot_id": self.bot_id}
            if isinstance(p.get("metadata"), dict):
                message["metadata"] = p["metadata"]
            root = p.get("thread_ts") or ts
            self.threads.setdefault((p.get("channel", ""), root), []).append(message)
            return {"ok": True, "channel": p.get("channel"), "ts": ts, "message": message}
        if method == "chat.update":
            return {"ok": True, "channel": p.get("channel"), "ts": p.get("ts"), "text": p.get("text", "")}
        if method == "chat.getPermalink":
            ts = str(p.get("message_ts", "")).replace(".", "")
            return {"ok": True, "permalink": f"https://agentbot-test.slack.com/archives/{p.get('channel')}/p{ts}"}
        if method in ("conversations.replies", "conversations.history"):
            # Like Slack: message metadata only when asked for with include_all_metadata.
            with_meta = str(p.get("include_all_metadata", "")).lower() in ("1", "true")
            if method == "conversations.replies":
                messages = self.threads.get((p.get("channel", ""), p.get("ts", "")), [])
            else:
                roots = [m[0] for (c, _), m in self.threads.items() if c == p.get("channel") and m]
                messages = sorted(roots, key=lambda m: m["ts"], reverse=True)
            shown = [m if with_meta else {k: v for k, v in m.items() if k != "metadata"} for m in messages]
            return {"ok": True, "messages": shown, "has_more": False, "response_metadata": {"next_cursor": ""}}
        if method == "chat.postEphemeral":
            return {"ok": True, "message_ts": self.next_ts()}
        return {"ok": True}
