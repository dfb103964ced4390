"""Slack's rate limits on slack_sdk's own client: a shared pause per method and workspace, and pacing.

Slack limits each Web API method per workspace in tiers (1: 1+/min, 2: 20+/min, 3: 50+/min,
4: 100+/min), `chat.postMessage` to about one message a second per channel (short bursts allowed),
and answers beyond a limit with HTTP 429 and `Retry-After`. slack_sdk's
`AsyncRateLimitErrorRetryHandler` makes the one request that got the 429 sleep and try again; this
module keeps that retry loop (`SharedPauseRetryHandler` is a retry handler of the same kind) but
turns the 429 into a pause every sender to the method and workspace honours (`bots.ratelimits`),
and `PacedWebClient` makes each call wait for its turn before its first attempt.
"""

from __future__ import annotations

import hashlib
from typing import Any

from slack_sdk.errors import SlackApiError
from slack_sdk.http_retry.async_handler import AsyncRetryHandler
from slack_sdk.http_retry.request import HttpRequest
from slack_sdk.http_retry.response import HttpResponse
from slack_sdk.http_retry.state import RetryState
from slack_sdk.web.async_client import AsyncWebClient
from slack_sdk.web.async_slack_response import AsyncSlackResponse

from bots.ratelimits import Pace, RateLimiter

# Published limits of the methods the bot posts with, per workspace unless `PER_CHANNEL` says so;
# calls keep to them for a while after a 429 (`RateLimiter.hot_seconds`). Every method, listed here
# or not, has one call in flight per workspace across workers.
PACES = {
    "chat.postMessage": Pace(per_second=1.0, burst=4),
    "chat.postEphemeral": Pace(per_second=100 / 60, burst=10),  # tier 4
    "chat.update": Pace(per_second=50 / 60, burst=5),  # tier 3
    "assistant.threads.setStatus": Pace(per_second=100 / 60, burst=10),
}
PER_CHANNEL = frozenset({"chat.postMessage"})
# A 429 can last; the retries wait out the pause without calling meanwhile, so they are cheap.
MAX_RETRIES = 12


def pause_key(token: str | None, method: str) -> str:
    """The pause's key: the workspace by a digest of its token (never the token), and the method."""
    workspace = hashlib.sha256((token or "app").encode()).hexdigest()[:16]
    return f"slack:{workspace}:{method}"


def _retry_after(headers: Any) -> float | None:
    """Slack's `Retry-After` in seconds (slack_sdk gives headers as lists or as strings)."""
    for name, value in (headers or {}).items():
        if name.lower() == "retry-after" and value:
            try:
                return float(value[0] if isinstance(value, list) else value)
            except ValueError:
                return None
    return None


class SharedPauseRetryHandler(AsyncRetryHandler):
    """slack_sdk's retry on 429, with the wait shared: the pause is recorded for every sender to
    the method and workspace, and this request then waits its turn like any other.

    Args:
        limiter: the Slack limiter (its board is the bot's database).
        max_retry_count: 429s one call sits through before it fails (its event is retried later).
    """

    def __init__(self, limiter: RateLimiter, max_retry_count: int = MAX_RETRIES):
        super().__init__(max_retry_count=max_retry_count)
        self.limiter = limiter

    async def _can_retry_async(
        self,
        *,
        state: RetryState,
        request: HttpRequest,
        response: HttpResponse | None = None,
        error: Exception | None = None,
    ) -> bool:
        return response is not None and response.status_code == 429

    async def prepare_for_next_attempt_async(
        self,
        *,
        state: RetryState,
        request: HttpRequest,
        response: HttpResponse | None = None,
        error: Exception | None = None,
    ) -> None:
        if response is None:
            raise error  # type: ignore[misc]
        method = request.url.rstrip("/").rsplit("/", 1)[-1]
        auth = (request.headers or {}).get("Authorization") or ""
        token = (auth[0] if isinstance(auth, list) and auth else str(auth)).removeprefix("Bearer ") or None
        key = pause_key(token, method)
        await self.limiter.refused(key, method, _retry_after(response.headers), state.current_attempt)
        await self.limiter.again(key)
        state.next_attempt_requested = True
        state.increment_current_attempt()


class PacedWebClient(AsyncWebClient):
    """An `AsyncWebClient` whose every call waits for its method's pause, pace and hold first.

    Args:
        limiter: the Slack limiter; its `SharedPauseRetryHandler` is added to the retry handlers.
        kwargs: as for `AsyncWebClient`.
    """

    def __init__(self, limiter: RateLimiter, **kwargs: Any):
        handlers = [h for h in kwargs.pop("retry_handlers", None) or [] if not isinstance(h, SharedPauseRetryHandler)]
        super().__init__(retry_handlers=[*handlers, SharedPauseRetryHandler(limiter)], **kwargs)
        self.limiter = limiter

    async def api_call(self, api_method: str, **kwargs: Any) -> AsyncSlackResponse:  # type: ignore[override]
        key = pause_key(self.token, api_method)
        pace = PACES.get(api_method)
        where = ""
        if api_method in PER_CHANNEL:
            body = kwargs.get("json") or kwargs.get("data") or kwargs.get("params") or {}
            where = f"{key}:{body.get('channel', '')}" if isinstance(body, dict) else key
        await self.limiter.before(key, where, pace)
        try:
            return await super().api_call(api_method, **kwargs)
        except SlackApiError as e:
            if e.response.status_code == 429:
                # Its last retry was refused too: the method stays paused for everyone.
                await self.limiter.refused(key, api_method, _retry_after(e.response.headers), MAX_RETRIES)
            raise
        finally:
            await self.limiter.after(key)
