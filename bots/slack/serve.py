"""`agentbot slack`: the Slack channel's composition root and its two run modes (HTTP, Socket Mode)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import socket
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from adapters.storage.ratelimits import SqlPauseBoard
from adapters.storage.slack_records import SlackRecords
from agent.errors import ConfigError
from agent.storage import Database
from bots.admin.settings import AdminSettings
from bots.alerts import AlertFanout, LogNotifier
from bots.app import build_app
from bots.metrics import PrometheusMetrics
from bots.ratelimits import MemoryPauseBoard, RateLimiter, RateLimitMetrics
from bots.reload import reloading
from bots.serving import BindAddress, add_health_routes, bind_address, settle_heap
from bots.settings import DeploySettings, SlackVariables
from bots.slack.alerts import SlackAlertNotifier
from bots.slack.channel import SlackChannel, SlackOptions
from bots.slack.workspaces import (
    InstalledWorkspaces,
    SingleFlightAuthorize,
    SingleWorkspace,
    SqlInstallationStore,
    SqlOAuthStateStore,
    TokenAuthorize,
)
from bots.workers import Supervisor, can_fork

log = logging.getLogger("agentbot.slack")

SLACK_API_URL = SlackVariables.model_fields["api_url"].default


# What the bot asks each workspace for when it is installed through OAuth; docs/slack-setup.md says why
# each is needed, and slack_manifest.yaml lists the same.
BOT_SCOPES = [
    "app_mentions:read",
    "assistant:write",
    "chat:write",
    "chat:write.public",
    "commands",
    "channels:history",
    "groups:history",
    "im:history",
    "im:read",
    "im:write",
    "mpim:history",
]


class SlackSettings(BaseModel):
    """What the Slack channel runs with, from the environment's settings (`from_settings`)."""

    # one workspace; empty with OAuth (client id and secret), where each install has its own
    bot_token: str = Field("", repr=False)
    signing_secret: str = Field("", repr=False)
    app_token: str = Field("", repr=False)  # set: Socket Mode instead of HTTP
    client_id: str = ""  # set (with client_secret): many workspaces, installed through OAuth
    client_secret: str = Field("", repr=False)
    redirect_uri: str = ""  # the OAuth redirect URL, when Slack must be told it exactly
    admin_channel: str = ""
    admins: list[str] = []
    api_url: str = SLACK_API_URL
    command: str = "/agentbot"

    @property
    def oauth(self) -> bool:
        return bool(self.client_id)

    @classmethod
    def from_settings(cls, deploy: DeploySettings) -> SlackSettings:
        """The SLACK_* variables; a missing token or secret stops startup, naming the variable."""
        slack = deploy.slack
        bot_token, signing_secret, app_token, client_secret = (
            v.get_secret_value() if v is not None else ""
            for v in (slack.bot_token, slack.signing_secret, slack.app_token, slack.client_secret)
        )
        oauth = bool(slack.client_id or client_secret)
        if oauth:
            given = {"SLACK_CLIENT_ID": slack.client_id, "SLACK_CLIENT_SECRET": client_secret}
            if not app_token:
                given["SLACK_SIGNING_SECRET"] = signing_secret
            missing = [name for name, value in given.items() if not value]
            if missing:
                raise ConfigError(
                    "environment",
                    f"{' and '.join(missing)} not set (installing through OAuth needs SLACK_CLIENT_ID and "
                    "SLACK_CLIENT_SECRET, and SLACK_SIGNING_SECRET in HTTP mode; with SLACK_APP_TOKEN events "
                    "come over Socket Mode and the install pages are served over HTTP)",
                )
        missing = [] if bot_token or oauth else ["SLACK_BOT_TOKEN"]
        if not app_token and not signing_secret:
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
            bot_token="" if oauth else bot_token,
            client_id=slack.client_id or "",
            client_secret=client_secret,
            redirect_uri=slack.redirect_uri or "",
            signing_secret=signing_secret,
            app_token=app_token,
            admin_channel=slack.admin_channel or "",
            admins=slack.admin_users,
            api_url=slack.api_url,
            command=slack.command,
        )


def rate_limiter(database: Database | None, metrics: RateLimitMetrics | None = None) -> RateLimiter:
    """Slack's pauses on the bot's database, so that every worker honours a 429 any of them got."""
    board = SqlPauseBoard(database) if database is not None else MemoryPauseBoard()
    return RateLimiter(board, "slack", metrics)


def web_client(settings: SlackSettings, limiter: RateLimiter) -> Any:
    """The one Web API client: configurable base URL; every call waits out its method's pause
    (a 429 anywhere) and its pace, and a 429 is retried after the shared pause."""
    from slack_sdk.http_retry.builtin_async_handlers import AsyncConnectionErrorRetryHandler

    from bots.slack.ratelimits import PacedWebClient

    return PacedWebClient(
        limiter,
        token=settings.bot_token or None,
        base_url=settings.api_url,
        retry_handlers=[AsyncConnectionErrorRetryHandler()],
    )


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
        settings: the Slack channel's settings (`SlackSettings.from_settings`).
        config_dir, data_dir, db_url: as for `build_app`.
        env: the environment `build_app` reads (database URL, understanding mode).
        app_kwargs: passed to `build_app` (e.g. `data_source=`, `telemetry=`).
    """
    alerts = AlertFanout([LogNotifier()])
    metrics: PrometheusMetrics = app_kwargs.pop("metrics", None) or PrometheusMetrics()
    app = build_app(config_dir, data_dir, db_url, alerts=alerts, env=env, metrics=metrics, **app_kwargs)
    if metrics.store is None:
        metrics.store = app.storage.database  # the backlog gauges read the app's database at each scrape
    limiter = rate_limiter(app.storage.database, metrics)
    client = web_client(settings, limiter)
    options = SlackOptions(
        signing_secret=settings.signing_secret,
        command=settings.command,
        admins=settings.admins,
        provider=f"{app.settings.understanding}",
        database=app.storage.database.url if app.storage.database is not None else "unknown",
    )
    single = SingleWorkspace(client, settings.admin_channel)
    workspaces: SingleWorkspace | InstalledWorkspaces = single
    oauth = None
    authorize: TokenAuthorize | SingleFlightAuthorize = TokenAuthorize(single)
    if settings.oauth:
        workspaces, oauth = _oauth(settings, app.storage.database, client, limiter)
        authorize = SingleFlightAuthorize(oauth.settings.authorize)
    alerts.notifiers.append(SlackAlertNotifier(workspaces))
    return SlackChannel(app, workspaces, client, options, oauth=oauth, authorize=authorize, metrics=metrics)


def _oauth(
    settings: SlackSettings, store: Database | None, client: Any, limiter: RateLimiter
) -> tuple[InstalledWorkspaces, Any]:
    """bolt's OAuth flow with installations and states in the bot's database."""
    from slack_bolt.oauth.async_oauth_flow import AsyncOAuthFlow
    from slack_bolt.oauth.async_oauth_settings import AsyncOAuthSettings

    if store is None:
        raise ConfigError("settings", "OAuth installs need a store with a database (installations live there)")
    records = SlackRecords(store)
    oauth_settings = AsyncOAuthSettings(
        client_id=settings.client_id,
        client_secret=settings.client_secret,
        scopes=BOT_SCOPES,
        redirect_uri=settings.redirect_uri or None,
        installation_store=SqlInstallationStore(records),
        installation_store_bot_only=True,
        state_store=SqlOAuthStateStore(records),
    )
    workspaces = InstalledWorkspaces(records, settings.api_url, limiter, retry_handlers=client.retry_handlers)
    return workspaces, AsyncOAuthFlow(client=client, settings=oauth_settings)


@dataclass
class HttpServer:
    runner: Any
    url: str  # base URL; Slack posts to f"{url}/slack/events"


@contextlib.asynccontextmanager
async def serve_http(
    channel: SlackChannel,
    host: str,
    port: int,
    admin: AdminSettings | None = None,
    listening: socket.socket | None = None,
    worker: int | None = None,
) -> AsyncIterator[HttpServer]:
    """Start the channel and serve events, commands and interactivity on /slack/events, and the
    operator page on /admin when `admin` has a token.

    Args:
        listening: a socket already listening (a pre-fork parent's, shared by its workers), served
            instead of binding `host` and `port`.
        worker: this worker's index among the parent's workers, which names its leases.
    """
    from aiohttp import web

    if listening is not None:
        port = listening.getsockname()[1]
    if port:
        # Only one process (or worker of one parent) listens here under this name: a restart under
        # it takes its conversations back.
        suffix = f"/{worker}" if worker is not None else ""
        channel.dispatcher.worker = f"slack@{socket.gethostname()}:{port}{suffix}"
    from bots.slack.verify import signature_first

    await channel.start()
    web_app = channel.bolt.web_app(path="/slack/events", port=port)
    if channel.options.signing_secret:
        web_app.middlewares.append(signature_first(channel.options.signing_secret, "/slack/events"))
    add_health_routes(web_app, channel.database, channel.app.metrics)
    if admin is not None:
        from bots.admin.pages import AdminMount

        AdminMount(channel.app, admin).mount(web_app)
    runner = web.AppRunner(web_app, access_log=None)
    await runner.setup()
    site = web.SockSite(runner, listening) if listening is not None else web.TCPSite(runner, host, port)
    await site.start()
    bound = runner.addresses[0]
    try:
        yield HttpServer(runner, f"http://{bound[0]}:{bound[1]}")
    finally:
        await runner.cleanup()
        await channel.aclose()


@contextlib.asynccontextmanager
async def serve_install_pages(channel: SlackChannel, host: str, port: int) -> AsyncIterator[HttpServer]:
    """Socket Mode with OAuth: events arrive over the socket, but a browser installing the app still
    opens the install page and lands on the redirect URL. Only those two pages (and the health
    routes) are served: no event is taken over HTTP, where nothing would be signed."""
    from aiohttp import web
    from slack_bolt.adapter.aiohttp import to_aiohttp_response, to_bolt_request

    flow = channel.bolt.oauth_flow
    if flow is None:
        raise ConfigError("settings", "install pages need the OAuth flow (SLACK_CLIENT_ID and SLACK_CLIENT_SECRET)")

    async def install(request: web.Request) -> web.Response:
        return await to_aiohttp_response(await flow.handle_installation(await to_bolt_request(request)))

    async def redirect(request: web.Request) -> web.Response:
        return await to_aiohttp_response(await flow.handle_callback(await to_bolt_request(request)))

    web_app = web.Application()
    web_app.add_routes([web.get(flow.install_path, install), web.get(flow.redirect_uri_path, redirect)])
    add_health_routes(web_app, channel.database, channel.app.metrics)
    runner = web.AppRunner(web_app, access_log=None)
    await runner.setup()
    await web.TCPSite(runner, host, port).start()
    bound = runner.addresses[0]
    try:
        yield HttpServer(runner, f"http://{bound[0]}:{bound[1]}")
    finally:
        await runner.cleanup()


@contextlib.asynccontextmanager
async def serve_socket_mode(channel: SlackChannel, app_token: str) -> AsyncIterator[Any]:
    """Start the channel and take events, commands and clicks over a Socket Mode connection.

    The connection's client (slack_sdk's, through bolt's handler) reconnects by itself when Slack
    asks it to (`disconnect`) or the connection drops; envelopes are acked by the same intake as in
    HTTP mode, so an envelope Slack resends after a reconnect is a duplicate dropped by the inbox.
    """
    from slack_bolt.adapter.socket_mode.aiohttp import AsyncSocketModeHandler

    await channel.start()
    handler = AsyncSocketModeHandler(channel.bolt, app_token)
    try:
        await handler.connect_async()
        yield handler
    finally:
        await handler.close_async()
        await channel.aclose()


async def _run(
    channel: SlackChannel,
    settings: SlackSettings,
    bind: BindAddress,
    admin: AdminSettings,
    listening: socket.socket | None = None,
    worker: int | None = None,
) -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    if worker is not None and settings.app_token:
        # Workers forked from one parent hold its dispatcher's name: each adds its index, which a
        # restarted worker keeps, so that it takes its conversations back.
        channel.dispatcher.worker = f"{channel.dispatcher.worker}/{worker}"
    async with channel.app, reloading(channel.app):
        if settings.oauth:
            log.info("agentbot slack: installs through OAuth (install page /slack/install)")
        if settings.app_token:
            async with contextlib.AsyncExitStack() as stack:
                await stack.enter_async_context(serve_socket_mode(channel, settings.app_token))
                log.info("agentbot slack: Socket Mode connected")
                if settings.oauth:
                    pages = await stack.enter_async_context(serve_install_pages(channel, bind.host, bind.port))
                    log.info("agentbot slack: install pages on %s/slack/install (%s)", pages.url, bind.why)
                await stop.wait()
        else:
            async with serve_http(channel, bind.host, bind.port, admin, listening, worker) as server:
                log.info("agentbot slack: listening on %s/slack/events (%s)", server.url, bind.why)
                if admin.enabled:
                    log.info("agentbot slack: the operator page on %s/admin", server.url)
                await stop.wait()


def run_slack(args: Any, env: Mapping[str, str]) -> int:
    """The `agentbot slack` command: one process, or `--workers` (`WEB_CONCURRENCY`) processes
    forked from a parent that loaded the model once (bots/workers.py)."""
    deploy = DeploySettings.from_env(env)
    settings = SlackSettings.from_settings(deploy)
    bind = bind_address(args.host, args.port, deploy.server)
    admin = AdminSettings.from_settings(deploy, args.config_dir, args.data_dir)
    workers = args.workers or deploy.server.web_concurrency
    if workers > 1 and not can_fork():
        log.warning("agentbot slack: this system cannot fork workers; serving in one process")
        workers = 1
    channel = build_slack(settings, args.config_dir, args.data_dir, args.db_url, env=env)
    if workers == 1:
        settle_heap()
        asyncio.run(_run(channel, settings, bind, admin))
        return 0
    # Built once here and forked: each worker starts its own threads, connections and event loop
    # from this copy, and shares its pages (the model, the banks, the modules) with the others.
    channel.app.preload()
    # HTTP mode: this process listens and every worker accepts on the same socket; in Socket Mode
    # each worker opens a connection of its own and Slack spreads the events over them.
    listening = None if settings.app_token else socket.create_server((bind.host, bind.port), backlog=1024)
    settle_heap()

    def work(index: int) -> int:
        asyncio.run(_run(channel, settings, bind, admin, listening, index))
        return 0

    if listening is not None:
        host, port = listening.getsockname()[:2]
        log.info("agentbot slack: %d workers on http://%s:%d (%s)", workers, host, port, bind.why)
    try:
        return Supervisor(workers, work).run()
    finally:
        if listening is not None:
            listening.close()
