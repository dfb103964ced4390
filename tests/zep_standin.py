"""A stand-in for the Zep Cloud v4 users API on 127.0.0.1: just the calls the preference memory makes.

Users are kept in a dict; each request is recorded so tests can say which calls were made.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from aiohttp import web


class ZepStandIn:
    def __init__(self, api_key: str = "z-test-key"):
        self.api_key = api_key
        self.users: dict[str, dict[str, Any]] = {}  # uuid -> user
        self.calls: list[tuple[str, str]] = []
        self.fail_with: int | None = None  # answer every request with this status
        self.base_url = ""

    def _auth(self, request: web.Request) -> web.Response | None:
        self.calls.append((request.method, request.path))
        if self.fail_with:
            return web.json_response({"message": "unavailable"}, status=self.fail_with)
        if request.headers.get("Authorization") != f"Api-Key {self.api_key}":
            return web.json_response({"message": "unauthorized"}, status=401)
        return None

    async def lookup(self, request: web.Request) -> web.Response:
        if (denied := self._auth(request)) is not None:
            return denied
        body = await request.json()
        for user in self.users.values():
            if user["user_id"] == body.get("user_id"):
                return web.json_response(user)
        return web.json_response({"message": "not found"}, status=404)

    async def add(self, request: web.Request) -> web.Response:
        if (denied := self._auth(request)) is not None:
            return denied
        body = await request.json()
        user = {"uuid": str(uuid.uuid4()), "user_id": body["user_id"], "metadata": body.get("metadata") or {}}
        self.users[user["uuid"]] = user
        return web.json_response(user, status=201)

    async def update(self, request: web.Request) -> web.Response:
        if (denied := self._auth(request)) is not None:
            return denied
        user = self.users.get(request.match_info["uuid"])
        if user is None:
            return web.json_response({"message": "not found"}, status=404)
        body = await request.json()
        # Zep merges metadata onto the user; a key set to null is removed.
        for k, v in (body.get("metadata") or {}).items():
            if v is None:
                user["metadata"].pop(k, None)
            else:
                user["metadata"][k] = v
        return web.json_response(user)


@asynccontextmanager
async def zep_standin(api_key: str = "z-test-key") -> AsyncIterator[ZepStandIn]:
    zep = ZepStandIn(api_key)
    app = web.Application()
    app.router.add_post("/api/v4/users/lookup", zep.lookup)
    app.router.add_post("/api/v4/users", zep.add)
    app.router.add_patch("/api/v4/users/{uuid}", zep.update)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    zep.base_url = f"http://127.0.0.1:{port}/api/v4"
    try:
        yield zep
    finally:
        await runner.cleanup()
