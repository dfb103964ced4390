"""Signature first: the Slack endpoint checks the signature on the raw bytes before anything parses them.

bolt verifies inside its request handling, after it has parsed the body, so an unsigned body that
is not valid JSON or form data failed with a traceback and HTTP 500. This aiohttp middleware runs
in front of bolt: a request without a valid signature gets 401 and one log line, whatever its
shape; bodies over the size limit are refused by aiohttp (413) before they are read.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web
from slack_sdk.signature import SignatureVerifier

log = logging.getLogger("agentbot.slack")

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def signature_first(signing_secret: str, path: str) -> Any:
    """An aiohttp middleware that answers 401 to any POST on `path` Slack did not sign."""
    verifier = SignatureVerifier(signing_secret)

    @web.middleware
    async def middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
        if request.method != "POST" or request.path != path:
            return await handler(request)
        body = await request.read()  # cached: bolt reads the same bytes afterwards
        timestamp = request.headers.get("X-Slack-Request-Timestamp", "")
        signature = request.headers.get("X-Slack-Signature", "")
        ok = timestamp.isdigit() and bool(signature) and verifier.is_valid(body, timestamp, signature)
        if not ok:
            # Only the sizes: the body is untrusted and may carry anything.
            log.warning("refused an unsigned or badly signed request to %s (%d bytes)", path, len(body))
            return web.Response(status=401, text="")
        return await handler(request)

    return middleware
