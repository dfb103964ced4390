"""`agentbot slack`: the Slack channel's composition root and its two run modes (HTTP, Socket Mode)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from agent.errors import ConfigError
from agent.interfaces import SessionStore
from bots.alerts import AlertFanout, LogNotifier
from bots.app import build_app
from bots.serving import BindAddress, add_health_routes, bind_address, settle_process
from bots.slack.alerts import SlackAlertNotifier
from bots.slack.channel import SlackChannel, SlackOptions

log = logging.getLogger("agentbot.slack")

SLACK_API_URL = "https://slack.com/api/"


class SlackSettings(BaseModel):
    """The Slack part of the environment, read once at startup."""

    bot_token: str
    signing_secret: str = ""
    app_token: str = ""  # set: Socket Mode instead of HTTP
    admin_channel: str = ""
    admins: list[str] = []
    api_url: str = SLACK_API_URL
    command: str = "/agentbot"

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> SlackSettings:
        """Read SLACK_* variables; a missing token or secret stops startup, naming the variable."""
        missing = [name for name in ("SLACK_BOT_TOKEN",) if not env.get(name)]
        if not env.get("SLACK_APP_TOKEN") and not env.get("SLACK_SIGNING_SECRET"):
            missing.append("SLACK_SIGNING_SECRET")
        if missing:
            # The platform and each variable named once: the missing ones, then the Socket Mode alternative.
            alternative = "; for Socket Mode set SLACK_APP_TOKEN instead of the signing secret"
            raise ConfigError(
                "environment",
                f"Slack needs {' and '.join(missing)}, which {'is' if len(missing) == 1 else 'are'} not set"
                + (alternative if "SLACK_SIGNING_SECRET" in missing else ""),
            )
        return cls(
            bot_token=env["SLACK_BOT_TOKEN"],
            signing_secret=env.get("SLACK_SIGNING_SECRET", ""),
            app_token=env.get("SLACK_APP_TOKEN", ""),
            admin_channel=env.get("SLACK_ADMIN_CHANNEL", ""),
            admins=[u.strip() for u in env.get("SLACK_ADMIN_USERS", "").split(",") if u.strip()],
            api_url=env.get("SLACK_API_URL") or SLACK_API_URL,
            command=env.get("SLACK_COMMAND") or "/agentbot",
        )


def web_client(settings: SlackSettings) -> Any:
    """The one Web API client: configurable base URL, and 429s retried after Retry-After."""
    from slack_sdk.http_retry.builtin_async_handlers import AsyncRateLimitErrorRetryHandler
    from slack_sdk.web.async_client import AsyncWebClient

    return AsyncWebClient(
        token=settings.bot_token,
        base_url=settings.api_url,
        retry_handlers=[AsyncRateLimitErrorRetryHandler(max_retry_count=3)],
    )


def _database_name(store: SessionStore) -> str:
    """The database URL for /agentbot status, never with its password."""
    engine = getattr(getattr(store, "runner", None), "engine", None)
    return engine.url.render_as_string(hide_password=True) if engine is not None else "unknown"


def build_slack(
    settings: SlackSettings,
    config_dir: str | Path | None = None,
    data_dir: str | Path | None = None,
    db_url: str | None = None,
    *,
    env: Mapping[str, str] | None = None,
    **app_kwargs: Any,
) -> SlackChannel:
    """Wire the app, admin alerts and the Slack channel from settings.

    Args:
        settings: the Slack environment (`SlackSettings.from_env`).
        config_dir, data_dir, db_url: as for `build_app`.
        env: the environment `build_app` reads (database URL, understanding mode).
        app_kwargs: passed to `build_app` (e.g. `data_source=`, `telemetry=`).
    """
    client = web_client(settings)
    notifiers: list[Any] = [LogNotifier()]
    if settings.admin_channel:
        notifiers.append(SlackAlertNotifier(client, settings.admin_channel))
    app = build_app(config_dir, data_dir, db_url, alerts=AlertFanout(notifiers), env=env, **app_kwargs)
    options = SlackOptions(
        signing_secret=settings.signing_secret,
        command=settings.command,
        admins=settings.admins,
        provider=f"{app.settings.understanding}",
        database=_database_name(app.store),
    )
    return SlackChannel(app, client, options)


@dataclass
class HttpServer:
    runner: Any
    url: str  # base URL; Slack posts to f"{url}/slack/events"


@contextlib.asynccontextmanager
async def serve_http(channel: SlackChannel, host: str, port: int) -> AsyncIterator[HttpServer]:
    """Start the channel and serve events, commands and interactivity on /slack/events."""
    import socket

    from aiohttp import web

    if port:
        # Only one process can listen here: a restart under this name takes its conversations back.
        channel.dispatcher.worker = f"slack@{socket.gethostname()}:{port}"
    from bots.slack.verify import signature_first

    await channel.start()
    web_app = channel.bolt.web_app(path="/slack/events", port=port)
    if channel.options.signing_secret:
        web_app.middlewares.append(signature_first(channel.options.signing_secret, "/slack/events"))
    add_health_routes(web_app, channel.store)
    runner = web.AppRunner(web_app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, host, port)
    await site.start()
    bound = runner.addresses[0]
    try:
        yield HttpServer(runner, f"http://{bound[0]}:{bound[1]}")
    finally:
        await runner.cleanup()
        await channel.aclose()


async def _run(channel: SlackChannel, settings: SlackSettings, bind: BindAddress) -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    async with channel.app:
        if settings.app_token:
            from slack_bolt.adapter.socket_mode.aiohttp import AsyncSocketModeHandler

            await channel.start()
            handler = AsyncSocketModeHandler(channel.bolt, settings.app_token)
            await handler.connect_async()
            log.info("agentbot slack: Socket Mode connected")
            try:
                await stop.wait()
            finally:
                await handler.close_async()
                await channel.aclose()
        else:
            async with serve_http(channel, bind.host, bind.port) as server:
                log.info("agentbot slack: listening on %s/slack/events (%s)", server.url, bind.why)
                await stop.wait()


def run_slack(args: Any, env: Mapping[str, str]) -> int:
    """The `agentbot slack` command."""
    settings = SlackSettings.from_env(env)
    bind = bind_address(args.host, args.port, env)
    channel = build_slack(settings, args.config_dir, args.data_dir, args.db_url, env=env)
    settle_process(env)
    asyncio.run(_run(channel, settings, bind))
    return 0
