"""Run the real Slack app (bolt + aiohttp) against the stand-in Web API, and talk to it signed."""

from __future__ import annotations

import hashlib
import hmac
import itertools
import json
import time
import urllib.parse
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from typing import Any

import aiohttp

from adapters.storage.sql import SqlStore
from bots.slack.channel import SlackChannel
from bots.slack.serve import SlackSettings, build_slack, serve_http
from tests.helpers import REPO
from tests.standins.slack_standin import TEAM_ID, SlackStandIn

SECRET = "test-signing-secret"
ADMIN = "U0ADMIN01"
ADMIN_CHANNEL = "C0ADMINS"
ALICE = "U0ALICE01"  # customer C-001 in data/customers.json
CHANNEL = "C0SUPPORT"


def sign(secret: str, timestamp: str, body: bytes) -> str:
    base = b"v0:" + timestamp.encode() + b":" + body
    return "v0=" + hmac.new(secret.encode(), base, hashlib.sha256).hexdigest()


@dataclass
class Sent:
    status: int
    text: str


class SlackClient:
    """Plays Slack's side of the HTTP contract: signed event, command and interactivity posts."""

    def __init__(self, url: str, secret: str = SECRET):
        self.url = f"{url}/slack/events"
        self.secret = secret
        self._ids = itertools.count(1)
        self._ts = itertools.count(1)
        self.session: aiohttp.ClientSession | None = None

    def ts(self) -> str:
        return f"1700000{next(self._ts):03d}.000100"

    async def post(
        self, body: bytes, content_type: str, *, retry: int | None = None, secret: str | None = None, age: int = 0
    ) -> Sent:
        assert self.session is not None
        timestamp = str(int(time.time()) - age)
        headers = {
            "Content-Type": content_type,
            "X-Slack-Request-Timestamp": timestamp,
            "X-Slack-Signature": sign(secret or self.secret, timestamp, body),
        }
        if retry is not None:
            headers["X-Slack-Retry-Num"] = str(retry)
            headers["X-Slack-Retry-Reason"] = "http_timeout"
        async with self.session.post(self.url, data=body, headers=headers) as r:
            return Sent(r.status, await r.text())

    def event_body(self, event: dict[str, Any], *, event_id: str | None = None, team: str = TEAM_ID) -> dict[str, Any]:
        return {
            "token": "legacy",
            "team_id": team,
            "api_app_id": "A0AGENTBOT",
            "type": "event_callback",
            "event_id": event_id or f"Ev{next(self._ids):08d}",
            "event_time": int(time.time()),
            "event": event,
        }

    async def event(self, event: dict[str, Any], **kw: Any) -> tuple[Sent, dict[str, Any]]:
        retry = kw.pop("retry", None)
        body = self.event_body(event, **kw)
        return await self.post(json.dumps(body).encode(), "application/json", retry=retry), body

    async def mention(self, text: str, user: str = ALICE, channel: str = CHANNEL, **kw: Any) -> tuple[str, Sent]:
        ts = kw.pop("ts", None) or self.ts()
        event = {"type": "app_mention", "user": user, "text": f"<@UBOTAGENT> {text}", "ts": ts, "channel": channel}
        if thread := kw.pop("thread_ts", None):
            event["thread_ts"] = thread
        sent, _ = await self.event(event, **kw)
        return ts, sent

    async def message(self, text: str, user: str = ALICE, channel: str = CHANNEL, **kw: Any) -> tuple[str, Sent]:
        ts = self.ts()
        event = {"type": "message", "user": user, "text": text, "ts": ts, "channel": channel}
        event["channel_type"] = kw.pop("channel_type", "channel")
        event.update(kw.pop("extra", {}))
        sent, _ = await self.event(event, **kw)
        return ts, sent

    def command_form(
        self, text: str, user: str = ALICE, channel: str = CHANNEL, command: str = "/agentbot", team: str = TEAM_ID
    ) -> dict[str, str]:
        return {
            "token": "legacy",
            "team_id": team,
            "channel_id": channel,
            "user_id": user,
            "user_name": "alice" if user == ALICE else "admin",
            "command": command,
            "text": text,
            "response_url": f"{self.stand_in_url}/response/cmd{next(self._ids)}",
            "trigger_id": f"trig.{next(self._ids)}",
        }

    async def command(
        self, text: str, user: str = ALICE, channel: str = CHANNEL, command: str = "/agentbot", team: str = TEAM_ID
    ) -> Sent:
        form = self.command_form(text, user, channel, command, team)
        return await self.post(urllib.parse.urlencode(form).encode(), "application/x-www-form-urlencoded")

    def click_payload(
        self,
        action_id: str,
        value: str,
        message: dict[str, Any],
        channel: str,
        user: str = ALICE,
        team: str = TEAM_ID,
        label: str | None = None,
    ) -> dict[str, Any]:
        action: dict[str, Any] = {"type": "button", "action_id": action_id, "block_id": "b", "value": value}
        if label is not None:  # Slack sends the button's text with the click
            action["text"] = {"type": "plain_text", "text": label, "emoji": True}
        return {
            "type": "block_actions",
            "team": {"id": team, "domain": "agentbot-test"},
            "user": {"id": user, "username": "alice" if user == ALICE else "admin", "team_id": team},
            "api_app_id": "A0AGENTBOT",
            "trigger_id": f"trig.{next(self._ids)}",
            "container": {"type": "message", "message_ts": message["ts"], "channel_id": channel},
            "channel": {"id": channel},
            "message": message,
            "response_url": f"{self.stand_in_url}/response/act{next(self._ids)}",
            "actions": [action | {"action_ts": "1"}],
        }

    async def click(
        self,
        action_id: str,
        value: str,
        message: dict[str, Any],
        channel: str,
        user: str = ALICE,
        team: str = TEAM_ID,
        label: str | None = None,
    ) -> Sent:
        payload = self.click_payload(action_id, value, message, channel, user, team, label)
        form = urllib.parse.urlencode({"payload": json.dumps(payload)}).encode()
        return await self.post(form, "application/x-www-form-urlencoded")

    stand_in_url = ""


@dataclass
class Running:
    channel: SlackChannel
    slack: SlackStandIn
    client: SlackClient
    url: str = ""  # the app's base URL (install pages, /slack/events)


@asynccontextmanager
async def running_app(
    db_url: str, slack: SlackStandIn, settings: SlackSettings | None = None, **kw: Any
) -> AsyncIterator[Running]:
    """One process's worth of agentbot slack: app, channel, HTTP server; closed on exit."""
    settings = settings or SlackSettings(
        bot_token="xoxb-test",
        signing_secret=SECRET,
        admin_channel=ADMIN_CHANNEL,
        admins=[ADMIN],
        api_url=f"{slack.url}/api/",
    )
    channel = build_slack(settings, REPO / "config", REPO / "data", db_url, env={}, **kw)
    async with AsyncExitStack() as stack:
        await stack.enter_async_context(channel.app)
        server = await stack.enter_async_context(serve_http(channel, "127.0.0.1", 0))
        client = SlackClient(server.url)
        client.stand_in_url = slack.url
        client.session = await stack.enter_async_context(aiohttp.ClientSession())
        yield Running(channel, slack, client, server.url)


def in_thread(slack: SlackStandIn, channel: str, ts: str | None) -> list[dict[str, Any]]:
    return [p for p in slack.to("chat.postMessage") if p["channel"] == channel and p.get("thread_ts") == ts]


async def rows(db_url: str, query: str, **params: Any) -> list[Any]:
    store = SqlStore(db_url)
    try:
        return list(await store.fetch(query, **params))
    finally:
        await store.aclose()
